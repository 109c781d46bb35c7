#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/compilecache/usage.hpp"
#include "hubcache/util/environment.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Care of a local compile cache that may be in use: what to remove (failed entries,
// stale locks, incomplete entries, old compiler versions, entries unused for a while,
// least-recently-used entries above a size) and removing it safely.
//
// Safety rules: an entry a live compiler may hold (a lock file, while a neuronx-cc
// process runs on this host or the lock is younger than the stale age) is never
// removed; only whole entries, whole version directories and lock files are removed;
// each is first renamed to a hidden trash name in its own directory (one rename: a
// reader sees the entry whole or not at all, and on NFS open files stay readable),
// checked for a lock that appeared meanwhile (then put back), and only then deleted;
// deletion never follows a symlink.
namespace hubcache::compilecache {

// torch-neuronx's eviction defaults (seed 004): 100 GB (--cache_size is in bytes and
// the SDK's "16 MB" example is 16 MiB, so GiB), time-to-live 30 days.
inline constexpr std::uint64_t k_sdk_default_cache_size = 100ull * 1024 * 1024 * 1024;
inline constexpr std::int64_t k_sdk_default_ttl = 30ll * 24 * 3600;
// Temp and trash names older than this are swept whoever left them.
inline constexpr std::int64_t k_leftover_age = 24 * 3600;

// "30d", "12h", "90m", "45s", "2w" -> seconds. Throws InvalidArgument.
std::int64_t parse_age(std::string_view text);
// "100G" (10^9), "100GiB" (2^30), "1.5T", "500M", "4096" (bytes) -> bytes. Throws InvalidArgument.
std::uint64_t parse_size(std::string_view text);
// 30d, 12h, 5m, 40s: the largest whole unit.
std::string format_age(std::int64_t seconds);

struct EvictionPolicy {
  std::uint64_t max_size = k_sdk_default_cache_size;
  std::int64_t ttl = k_sdk_default_ttl;
  std::string size_source = "default"; // default or NEURON_CC_FLAGS
  std::string ttl_source = "default";
};
// --cache_size=BYTES and --cache_ttl=DAYS from NEURON_CC_FLAGS, else the SDK defaults.
// Throws InvalidArgument on a value that is not a number.
EvictionPolicy sdk_eviction_policy(const util::Environment& env);

// The neuronx-cc version `neuronx-cc --version` prints (first line "NeuronX Compiler
// version 2.21.33363.0+82129205"); nullopt when no neuronx-cc runs here.
std::optional<std::string> installed_compiler_version();
std::optional<std::string> parse_compiler_version_output(std::string_view text);

struct CleanupOptions {
  bool failed = true;                        // failed modules (model.log without model.neff)
  bool stale_locks = true;                   // lock files no compiler holds
  std::int64_t stale_lock_age = 0;           // seconds; a younger lock counts as held (caches shared over NFS)
  bool incomplete = false;                   // incomplete and flags-mismatch modules
  bool old_versions = false;                 // every version directory not matching keep_versions
  std::vector<std::string> keep_versions;    // full versions or prefixes (see version_matches)
  std::optional<std::int64_t> older_than;    // seconds since last use
  std::optional<std::uint64_t> max_size;     // bytes; least recently used first
  std::int64_t ttl = k_sdk_default_ttl;      // never evict what was used within this
  bool wipe = false;                         // everything in the root but its lock file
  std::optional<std::filesystem::path> home; // never wiped, nor what holds it (check_wipe_root)
  bool compiler_running = false;
  bool use_atime = true;
  std::int64_t now = 0; // unix seconds
};

// How old a lock must be before cleanup takes it for stale, when the user did not say.
// 0 where this host sees every compiler that may hold a lock; an hour where it cannot: a
// cache on a shared file system (NFS, EFS, Lustre, FSx, SMB: compilers of other hosts), or
// this process in a container (compilers of the host and of other containers are not in
// its /proc).
struct StaleLockAgeDefault {
  std::int64_t seconds = 0;
  std::string reason;      // why not 0, for people: "the cache is on nfs", ...
  std::string file_system; // nfs, lustre, ... or "" for a local one
};
inline constexpr std::int64_t k_shared_stale_lock_age = 3600;
StaleLockAgeDefault default_stale_lock_age(const std::filesystem::path& root);

// One thing to remove. kind: entry, version, lock, leftover (trash or staging of a dead
// process), other (unrecognized root content, --wipe only). reason: failed, stale-lock,
// incomplete, old-version, older-than, max-size, wipe, leftover.
struct Removal {
  std::string path; // relative to the root
  std::string kind;
  std::string reason;
  std::string state; // the entry's state (entries only)
  std::uint64_t bytes = 0;
  std::size_t entries = 0; // cache entries it holds
  std::optional<std::int64_t> last_use;
  std::string last_use_source;
};

struct CleanupPlan {
  std::vector<Removal> removals;
  std::vector<Skipped> kept;     // selected, but left alone (held by a compiler, ...)
  std::uint64_t size_before = 0; // bytes of every entry
  std::uint64_t bytes = 0;       // bytes the removals free
  // With max_size: still above it, because the rest was used within the TTL (or is held).
  bool above_max_size = false;
};

// Decides; changes nothing. Throws IoError for a wipe while a compiler may write, and for
// a wipe of a root that is not only a compile cache (check_wipe_root).
CleanupPlan plan_cleanup(const Scan& scan, const UsageRecords& records, const CleanupOptions& options);

struct CleanupReport {
  std::vector<Removal> removed;
  std::vector<Skipped> kept;   // the plan's, plus entries a compiler took meanwhile
  std::vector<Skipped> errors; // could not be removed
  std::uint64_t bytes_freed = 0;
};

// Carries a plan out: leftovers and locks first, then entries and versions. Throws
// IoError, before removing anything, when a directory it must change is not writable.
CleanupReport apply_cleanup(const Scan& scan, const CleanupPlan& plan);

// Drops the last-use records of what a cleanup removed (its entries, and every entry of a
// removed compiler version), so a recompiled entry starts afresh.
void forget_removed(const Scan& scan, const CleanupReport& report, UsageRecords& records);

enum class RemoveOutcome { removed, vanished, taken };
// Removes `target` (entry, version directory or file) by the rename-check-delete above.
// `lock_depth`: how deep below target a compiler's lock may appear (1 for an entry, 2 for
// a version directory, 0 for no check). Throws IoError when it cannot.
RemoveOutcome remove_safely(const std::filesystem::path& target, int lock_depth);

} // namespace hubcache::compilecache
