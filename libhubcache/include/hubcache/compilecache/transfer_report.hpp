#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/storage/repository.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

// The one report of a transfer, whichever way it runs: a push (local cache -> repo), a
// pull (repo -> local cache) or a copy between two stores. Facts only; the CLI words them.
namespace hubcache::compilecache {

// One entry a transfer moves, or would: the files of it that move and their size.
struct TransferEntry {
  std::string path;
  std::string compiler_version;
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  std::optional<std::string> model; // where known (a --model pull, add's attribution records)
};

// A push the store's commit quota stopped part way: every entry it published is whole.
struct PushStopped {
  std::size_t entries_published = 0;
  std::size_t entries_total = 0;
  std::vector<std::string> entries_left;
  std::string quota; // "128 commits per hour", empty when the store did not say
  std::chrono::seconds wait{0};
  std::chrono::system_clock::time_point retry_at;
  std::string message; // the store's own account
};

// What a push through Xet sent (storage::CommitResult's figures).
struct XetBytes {
  std::uint64_t new_bytes = 0;
  std::uint64_t deduplicated_bytes = 0;
  std::uint64_t stored_bytes = 0; // already in the Xet CAS (global dedup)

  bool any() const { return new_bytes + deduplicated_bytes + stored_bytes > 0; }
};

struct TransferReport {
  // The entries the transfer set out to move (a dry run: would move), each sized as planned.
  std::vector<TransferEntry> entries;
  // Entry paths: set out to move (after a run: those that landed, then those that failed),
  // landed whole (empty on a dry run), already at the destination, failed local entries
  // replaced (a pull; a dry run: would replace).
  std::vector<std::string> planned;
  std::vector<std::string> transferred;
  std::vector<std::string> present;
  std::vector<std::string> replaced;
  std::vector<Skipped> skipped; // not moved, by design (locked, failed, differing, ...)
  std::vector<Skipped> errors;  // not moved because something failed
  std::size_t files_planned = 0;
  std::size_t files_transferred = 0;
  std::uint64_t bytes_planned = 0;
  std::uint64_t bytes_transferred = 0;
  std::size_t files_hashed = 0; // local files whose digest was computed (a push)
  std::size_t other_files = 0;  // source files that are not compile-cache entries (a pull, a copy)
  // Every compiler version the source holds entries of, whatever the filter: what to say
  // when a --compiler-version matches none of them (a pull, a copy).
  std::set<std::string> compiler_versions;

  std::optional<std::string> revision; // the repo's head: what a pull read, what a push or copy left
  bool committed = false;              // the destination changed (a push)
  std::size_t commits = 0;             // several when the store limits one commit (the Hub), one a copy batch
  XetBytes xet;
  std::vector<std::string> warnings; // a failure the transfer recovered from (Xet -> LFS)
  // What the push's commits report the repo now holds: the next push's remote snapshot.
  std::vector<storage::RepoFile> committed_files;

  // A run that stopped early (each entry it moved is whole; a re-run finishes it):
  std::size_t entries_planned = 0;  // entries it set out to move
  bool no_space = false;            // the local file system filled up: the first ENOSPC ended it
  int interrupted_by = 0;           // the signal (SIGINT, SIGTERM, SIGHUP) that ended it
  std::optional<PushStopped> quota; // the store's commit quota ended it (a push)
};

// After a run: `planned` is what landed, then each entry that failed.
void list_planned_after_run(TransferReport& report);

} // namespace hubcache::compilecache
