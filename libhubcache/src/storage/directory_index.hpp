#pragma once

// Internal to the storage floor: a directory repo's sha256 index. One file per top-level
// folder, `.neuron-cache/index/<hash>.tsv`, a record per file keyed by its stat stamp
// (size, mtime, ctime, inode). A record is used only while the stamp still matches, so it
// can never describe content the file no longer has: the index only saves hashing.

#include "hubcache/util/hash.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <sys/stat.h>

namespace hubcache::storage::detail {

inline std::int64_t nanoseconds(const struct timespec& time)
{
  return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

// Same size, mtime, ctime and inode: the same version of a file.
inline bool same_stamp(const struct ::stat& a, const struct ::stat& b)
{
  return a.st_size == b.st_size && nanoseconds(a.st_mtim) == nanoseconds(b.st_mtim)
         && nanoseconds(a.st_ctim) == nanoseconds(b.st_ctim) && a.st_ino == b.st_ino;
}

// Not thread-safe: the repository holds its mutex around every use.
class DirectoryIndex {
public:
  explicit DirectoryIndex(std::filesystem::path root);

  // A new call of the repository: an index file is compared with the one read at most
  // once per call, not once per file.
  void begin_call() { ++m_call; }
  // The index's sha256 of the file at `path` (repo-relative), when its record still matches.
  std::optional<util::Sha256Bytes> known(const std::string& path, const struct ::stat& status);
  // From the index when it still matches, else by reading the file (and recording it).
  util::Sha256Bytes sha256_of(const std::string& path, const struct ::stat& status);
  void record(const std::string& path, const struct ::stat& status, const util::Sha256Bytes& sha256);
  // How many files the indexes of `top` (every top-level folder when empty) record.
  std::size_t file_count(const std::string& top);
  // Writes the changed index files (never through a link); a failure only costs hashing later.
  void save();
  // Drops what is held in memory: the files are read again by the next call.
  void forget() { m_indexes.clear(); }

private:
  struct Record {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    std::uint64_t inode = 0;
    util::Sha256Bytes sha256; // bytes, not hex: one record per file of the repo
  };
  using Records = std::unordered_map<std::string, Record>;
  // The index file as last read or written: inode, size, mtime, ctime.
  struct FileId {
    std::uint64_t inode = 0;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    bool operator==(const FileId&) const = default;
  };
  struct IndexFile {
    Records records;
    bool changed = false;
    std::optional<FileId> source; // nullopt: there was no index file
    std::uint64_t checked = 0;    // the call (m_call) that last compared `source` with the file
  };

  std::filesystem::path index_path(std::string_view top) const;
  std::optional<FileId> index_file_id(std::string_view top) const;
  IndexFile& index_for(std::string_view top);

  std::filesystem::path m_root;
  std::map<std::string, IndexFile, std::less<>> m_indexes; // by top-level name
  std::uint64_t m_call = 0;
};

} // namespace hubcache::storage::detail
