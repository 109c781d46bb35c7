#pragma once

#include <hubcache/compilecache/prune.hpp>
#include <hubcache/storage/repository.hpp>

#include <cstdint>
#include <optional>
#include <vector>

// `cleanup --repo` with what only the registry floor knows: entries older than an age by
// the repo's own dates, graphs no registry entry names, and the registry kept consistent
// with the graphs it describes: a registry entry (every copy, and add's record of it)
// naming a graph the plan removes goes in the same commit.
namespace registry {

struct RepoPruneOptions {
  hubcache::compilecache::PruneOptions base;
  // Graphs and registry files whose last change (Repository::item_dates) is older than
  // this many seconds before `now`; an item the store gives no date for stays.
  std::optional<std::int64_t> older_than;
  std::int64_t now = 0;
  // Graphs no registry entry names, except in compiler versions whose registry entries
  // name no graphs (optimum's): which of their graphs those need is unknown.
  bool unregistered = false;
  unsigned parallelism = 8;
};

// Decides from `listing` (every file of the repo), reading dates and attribution
// records from `repo`; changes nothing. Throws what plan_prune throws.
hubcache::compilecache::PrunePlan plan_repo_prune(hubcache::storage::Repository& repo,
                                                  const std::vector<hubcache::storage::RepoFile>& listing,
                                                  RepoPruneOptions options);

} // namespace registry
