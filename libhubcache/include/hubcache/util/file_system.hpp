#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
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

// Bytes an unprivileged writer may still use on the file system holding `path` (statvfs's
// f_bavail), or nullopt when it cannot be told. Quotas are not seen: a write may still
// meet EDQUOT.
std::optional<std::uint64_t> free_bytes(const std::filesystem::path& path);

// Throws the error of a failed write: NoSpace when `error` is ENOSPC or EDQUOT (every
// later write would fail alike), else IoError. `message` gets strerror's text appended.
[[noreturn]] void throw_write_error(const std::string& message, int error);

} // namespace hubcache::util
