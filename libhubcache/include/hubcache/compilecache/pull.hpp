#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/compilecache/digest_cache.hpp"
#include "hubcache/compilecache/repo_layout.hpp"
#include "hubcache/compilecache/transfer_report.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/progress.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

// A pull: what to install from the repo (plan), and its download and install (apply).
namespace hubcache::compilecache {

struct PullOptions {
  std::optional<std::string> compiler_version;
  bool dry_run = false;
  // A complete repo entry replaces a local FAILED one (else the failure, replayed by the
  // compiler, blocks that graph forever).
  bool replace_failed = false;
  // Only these entries (repo paths such as neuronxcc-<v>/MODULE_<key>+<flags>): one
  // model's graphs; unset: every entry.
  std::optional<std::set<std::string>> only_entries = std::nullopt;
  // Files downloaded at once (at least 1).
  std::size_t workers = 8;
};

// One repo entry to install, and how.
struct PullInstall {
  RepoEntry entry;
  // The files the local entry lacks; for a fresh entry every file, moved out of
  // entry.files (which is then empty).
  std::vector<storage::RepoFile> to_download;
  bool fresh = false;   // no local entry: it appears by one directory rename
  bool replace = false; // a failed local entry makes way for it
  std::uint64_t bytes = 0;
};

// What a pull would do, decided from one listing and the local tree, changing nothing.
struct PullPlan {
  std::vector<PullInstall> installs;
  std::vector<std::string> entries_present;
  std::vector<Skipped> skipped; // by design (locked, failed in repo, differing locally, ...)
  std::size_t other_files = 0;
  std::size_t files_planned = 0;
  std::uint64_t bytes_planned = 0;
  // Every compiler version the repo holds entries of, whatever the filter: what to say
  // when options.compiler_version matches none of them.
  std::set<std::string> compiler_versions;
};

// Lists the repo once and decides, entry by entry, what to install. Throws IoError when
// the root exists and is not a directory.
PullPlan plan_pull(storage::Repository& repo, const std::filesystem::path& root, DigestCache& digests,
                   const PullOptions& options);
// The same from a listing already made.
PullPlan plan_pull(const std::vector<storage::RepoFile>& listing, const std::filesystem::path& root,
                   DigestCache& digests, const PullOptions& options);
// The same, consuming the listing as it is grouped.
PullPlan plan_pull(std::vector<storage::RepoFile>&& listing, const std::filesystem::path& root, DigestCache& digests,
                   const PullOptions& options);

// Installs a plan's entries into the cache root, `options.workers` files at a time over
// the one repository (whose reads are thread-safe). Each file is downloaded and verified
// by the backend into a staging directory in the root; the worker that lands an entry's
// last file checks the entry and moves it in: a new entry by one directory rename, an
// existing partial one file by file with model.done last. A kill at any moment leaves
// either no entry or one without its done marker that a re-run completes; staging left
// by dead processes is swept on the next run. A file that fails leaves its entry out
// (reported in `errors`); a failure of the remote itself (after the backend's retries)
// stops the run: no new download starts, and the entries it leaves out are reported too.
TransferReport apply_pull(storage::Repository& repo, const std::filesystem::path& root, PullPlan plan,
                          DigestCache& digests, const PullOptions& options,
                          const util::TransferCallback& progress = {});

// The report of a dry run: what `plan` would install, nothing moved.
TransferReport dry_run_report(PullPlan plan);
// The entries a plan installs, sized, before the plan is applied (and consumed).
std::vector<TransferEntry> transfer_entries(const PullPlan& plan);

// plan_pull, then (unless options.dry_run) apply_pull.
TransferReport pull(storage::Repository& repo, const std::filesystem::path& root, DigestCache& digests,
                    const PullOptions& options, const util::TransferCallback& progress = {});

} // namespace hubcache::compilecache
