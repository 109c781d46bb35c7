#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/util/environment.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

// When compile-cache entries were last used. A compile hit leaves no trace the cache
// format keeps, so the evidence is, newest first: what our own commands recorded
// (pulled, added, seen), the access time of the entry's files where the mount records
// access times, and the entry's modification time (when it was compiled).
namespace hubcache::compilecache {

// Records larger than this are not read (a hostile or corrupt file); at most this many
// records are kept (the most recent ones).
inline constexpr std::uint64_t k_usage_file_limit = 64ull * 1024 * 1024;
inline constexpr std::size_t k_usage_record_limit = 500'000;

// Last-use records, one per entry path, kept outside the cache root (anything inside
// would be published). The file is read as untrusted input: a regular file only, of
// bounded size; malformed lines, impossible paths and times in the future are dropped.
class UsageRecords {
public:
  // No file: records for this run only.
  UsageRecords() = default;
  explicit UsageRecords(std::filesystem::path file);
  // ${XDG_STATE_HOME:-~/.local/state}/neuron-cache/usage-<hash of the root>.tsv
  static std::filesystem::path default_path(const std::filesystem::path& cache_root, const util::Environment& env);

  const std::filesystem::path& file() const { return m_file; }
  // Unix seconds of the entry's last recorded use.
  std::optional<std::int64_t> last_use(std::string_view entry_path) const;
  // Keeps the later of the known and the given time.
  void record(const std::string& entry_path, std::int64_t seconds);
  void forget(const std::string& entry_path);
  // Drops the records of entries not in `present` (removed by hand, or by a compiler).
  void retain(const std::set<std::string>& present);
  std::size_t size() const { return m_records.size(); }
  // Lines of the file that were not trusted.
  std::size_t rejected() const { return m_rejected; }

  // Merges with what other processes wrote since we read, then writes atomically.
  // False when it could not be written (the records are a hint, never required).
  bool save();

private:
  std::map<std::string, std::int64_t, std::less<>> m_records;
  std::set<std::string> m_forgotten;
  std::filesystem::path m_file;
  std::size_t m_rejected = 0;
  bool m_changed = false;
};

// Reads a records file with the rules above; the count of rejected lines goes to `rejected`.
std::map<std::string, std::int64_t, std::less<>> read_usage_file(const std::filesystem::path& file, std::int64_t now,
                                                                 std::size_t& rejected);

enum class UseSource { record, access_time, modification_time };
// "record", "atime", "mtime"
std::string to_string(UseSource source);

struct LastUse {
  std::int64_t seconds = 0; // unix time
  UseSource source = UseSource::modification_time;
};

// Whether the filesystem of `path` updates access times, from its mount flags.
struct AccessTimeMode {
  bool recorded = true;
  std::string mount_option; // noatime, relatime or strictatime
};
AccessTimeMode access_time_mode(const std::filesystem::path& path);

// The newest evidence of use of an entry; access times only when `use_atime`.
LastUse last_use(const Entry& entry, const UsageRecords& records, bool use_atime);

// Records what a scan shows of each entry's last use, so the knowledge survives a copy
// of the cache or a remount without access times; forgets entries that are gone.
void record_scan(UsageRecords& records, const Scan& scan, bool use_atime);

std::int64_t unix_now();
// 2026-03-01T12:00:00Z
std::string iso_time(std::int64_t seconds);

} // namespace hubcache::compilecache
