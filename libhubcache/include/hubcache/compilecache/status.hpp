#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/compilecache/usage.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/file_system.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

// What a local compile cache holds: per compiler version, entries by state, sizes and
// last use; locks nobody holds any more.
namespace hubcache::compilecache {

// The state an entry is counted under: a module's state (success, failed, locked,
// incomplete, flags-mismatch, symlink-outside-root), else exported-model or registry.
std::string category_of(const Entry& entry);

struct Tally {
  std::size_t entries = 0;
  std::uint64_t bytes = 0;
};

struct VersionStatus {
  std::string name;             // neuronxcc-2.21.33363.0+82129205
  std::string compiler_version; // 2.21.33363.0+82129205
  Tally total;
  std::size_t files = 0;
  std::map<std::string, Tally> by_state;
  std::optional<std::int64_t> oldest_use;
  std::optional<std::int64_t> newest_use;
  std::map<std::string, std::size_t> last_use_sources; // record, atime, mtime
  std::optional<std::size_t> entries_in_repo;
};

struct LockInfo {
  std::string path; // repo-relative
  std::int64_t modified = 0;
};

struct CacheStatus {
  std::filesystem::path root;
  util::FileSystemType file_system; // of the root: shared storage changes what is safe
  Tally total;
  std::size_t files = 0;
  std::map<std::string, Tally> by_state;
  std::vector<VersionStatus> versions;
  AccessTimeMode access_times;
  std::map<std::string, std::size_t> last_use_sources;
  bool compiler_running = false;
  std::vector<LockInfo> stale_locks; // no compiler process alive on this host
  std::vector<LockInfo> live_locks;  // a compiler runs: every lock may be its
  std::size_t skipped = 0;           // non-entries: odd names, temp files, ... (see Scan::skipped)
};

// Aggregates a scan; `compiler_running` decides whether locks are stale.
CacheStatus cache_status(const Scan& scan, const UsageRecords& records, const AccessTimeMode& access_times,
                         bool compiler_running);

// Entries whose every file the repo listing holds with the same size (a cheap check:
// status works from listings only, it hashes nothing).
std::set<std::string> entries_in_repo(const Scan& scan, const std::vector<storage::RepoFile>& remote);
// Fills VersionStatus::entries_in_repo.
void add_repo_presence(CacheStatus& status, const std::set<std::string>& present, const Scan& scan);

} // namespace hubcache::compilecache
