#pragma once

#include <cstdint>
#include <filesystem>

namespace hubcache::util {

// Identity of a file version as stat(2) sees it: a changed file changes one of them.
struct FileStamp {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t inode = 0;
  bool operator==(const FileStamp&) const = default;
};
// Follows links; throws IoError when the file cannot be stat'ed.
FileStamp stamp_of(const std::filesystem::path& file);

} // namespace hubcache::util
