#include "hubcache/util/file_stamp.hpp"

#include "hubcache/error.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace hubcache::util {

FileStamp stamp_of(const std::filesystem::path& file)
{
  struct stat status {};
  if (::stat(file.c_str(), &status) != 0) {
    throw IoError("cannot stat " + file.string() + ": " + std::strerror(errno));
  }
  return {static_cast<std::uint64_t>(status.st_size),
          static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 + status.st_mtim.tv_nsec,
          static_cast<std::uint64_t>(status.st_ino)};
}

} // namespace hubcache::util
