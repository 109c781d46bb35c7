#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/storage/repository.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

// Pruning a cache repo itself (`cleanup --repo`): what `cleanup` does for the local cache,
// for any repo kind, through the Repository interface: old compiler versions, and module
// entries someone published failed or incomplete. A version goes whole, its registry with
// it, so the registry never describes graphs that are gone. Everything goes in one commit
// of folder deletions: on the Hub one commit, whatever its size (a deletion is one line).
namespace hubcache::compilecache {

struct PruneOptions {
  bool failed = true;                     // module entries whose compile failed (model.log, no model.neff)
  bool incomplete = false;                // module entries without their complete file set
  bool old_versions = false;              // every neuronxcc-<version> not matching keep_versions
  std::vector<std::string> keep_versions; // full versions or prefixes (version_matches)
  // Module entries a caller above chose (path -> reason: older-than, unregistered), from
  // what this floor does not read: dates, and the registry (registry/repo_prune.hpp).
  std::map<std::string, std::string> chosen_entries;
};

// One folder or file to delete. kind: version, entry (folders) or registry (a registry
// file); reason: old-version, failed, incomplete, older-than, unregistered, graphs-removed.
struct PruneRemoval {
  std::string path;
  std::string kind;
  std::string reason;
  std::string detail; // the subject of `finding`, or the graph a registry file names
  std::uint64_t bytes = 0;
  std::size_t files = 0;
  Finding finding = Finding::none; // why a failed or incomplete entry is one
};

struct PrunePlan {
  std::vector<PruneRemoval> removals;
  std::uint64_t bytes = 0;
  std::size_t files = 0;
  std::uint64_t size_before = 0;     // every file of the repo's compile-cache folders
  std::vector<std::string> versions; // the neuronxcc-<version> folders the repo holds
  std::vector<std::string> notes;    // what was kept and why, for the user
};

// Adds a removal to the plan's totals.
void add_removal(PrunePlan& plan, PruneRemoval removal);

// Decides from one listing; changes nothing. Throws InvalidArgument when a keep filter
// matches no version the repo holds (a typo would otherwise prune every version).
PrunePlan plan_prune(const std::vector<storage::RepoFile>& listing, const PruneOptions& options);

// Deletes the plan's folders in one commit on top of `revision` (when given: a repo that
// moved since the plan is a ConflictError, nothing deleted). Returns the commit's result.
storage::CommitResult apply_prune(storage::Repository& repo, const PrunePlan& plan,
                                  const std::optional<std::string>& revision);

} // namespace hubcache::compilecache
