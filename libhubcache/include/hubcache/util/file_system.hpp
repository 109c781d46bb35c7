#pragma once

#include <filesystem>
#include <string>

// What kind of file system holds a path: the one place its magic numbers are known.
namespace hubcache::util {

enum class FileSystemKind { local_disk, shared, memory, other };

struct FileSystemType {
  FileSystemKind kind = FileSystemKind::other;
  std::string name; // "ext4/ext3", "xfs", "nfs", "lustre", "tmpfs", ... or "unknown"
};

FileSystemType file_system_of(int fd);
FileSystemType file_system_of(const std::filesystem::path& path);

// The name of a file system shared between hosts (NFS and EFS, Lustre and FSx, SMB,
// GPFS, FUSE mounts) holding `path`, or "" for one that is not (or cannot be told).
std::string shared_file_system_name(const std::filesystem::path& path);

} // namespace hubcache::util
