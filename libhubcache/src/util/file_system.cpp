#include "hubcache/util/file_system.hpp"

#include "hubcache/error.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <sys/statfs.h>
#include <sys/statvfs.h>

namespace hubcache::util {

namespace {

struct Known {
  long magic;
  const char* name;
  FileSystemKind kind;
};

constexpr std::array<Known, 12> k_known = {{
  {0xEF53, "ext4", FileSystemKind::local_disk},
  {0x58465342, "xfs", FileSystemKind::local_disk},
  {0x9123683E, "btrfs", FileSystemKind::local_disk},
  {0x6969, "nfs", FileSystemKind::shared},        // EFS is NFS 4.1
  {0x0BD00BD0, "lustre", FileSystemKind::shared}, // FSx for Lustre
  {0xFF534D42, "cifs", FileSystemKind::shared},
  {0xFE534D42, "smb2", FileSystemKind::shared},
  {0x47504653, "gpfs", FileSystemKind::shared},
  {0x65735546, "fuse", FileSystemKind::shared}, // s3fs, mountpoint-s3, hf-mount, ...
  {0x01021994, "tmpfs", FileSystemKind::memory},
  {0x794C7630, "overlay", FileSystemKind::other},
  {0x2FC12FC1, "zfs", FileSystemKind::local_disk},
}};

FileSystemType classify(const struct statfs& info)
{
  auto magic = static_cast<long>(info.f_type);
  for (const auto& known : k_known) {
    if (known.magic == magic) {
      return {known.kind, known.name};
    }
  }
  return {FileSystemKind::other, "unknown"};
}

} // namespace

FileSystemType file_system_of(int fd)
{
  struct statfs info {};
  return ::fstatfs(fd, &info) == 0 ? classify(info) : FileSystemType{FileSystemKind::other, "unknown"};
}

FileSystemType file_system_of(const std::filesystem::path& path)
{
  struct statfs info {};
  return ::statfs(path.c_str(), &info) == 0 ? classify(info) : FileSystemType{FileSystemKind::other, "unknown"};
}

std::string shared_file_system_name(const std::filesystem::path& path)
{
  auto type = file_system_of(path);
  return type.kind == FileSystemKind::shared ? type.name : std::string();
}

std::optional<std::uint64_t> free_bytes(const std::filesystem::path& path)
{
  struct statvfs info {};
  if (::statvfs(path.c_str(), &info) != 0) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(info.f_bavail) * info.f_frsize;
}

void throw_write_error(const std::string& message, int error)
{
  auto text = message + ": " + std::strerror(error);
  if (error == ENOSPC || error == EDQUOT) {
    throw NoSpace(text);
  }
  throw IoError(text);
}

} // namespace hubcache::util
