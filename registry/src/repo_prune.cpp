#include "registry/repo_prune.hpp"

#include "registry/graphs.hpp"

#include <hubcache/layout/names.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace registry {

namespace cc = hubcache::compilecache;

namespace {

std::string first_component(const std::string& path)
{
  return path.substr(0, path.find('/'));
}

// The graph folders (neuronxcc-<v>/MODULE_<x>) under each compiler dir older than the cutoff.
void choose_old_graphs(hubcache::storage::Repository& repo, const std::set<std::string>& dirs, std::int64_t cutoff,
                       cc::PruneOptions& options)
{
  for (const auto& dir : dirs) {
    for (const auto& [path, date] : repo.item_dates(dir, false)) {
      auto name = path.substr(path.rfind('/') + 1);
      if (name.starts_with("MODULE_") && date > 0 && date < cutoff) {
        options.chosen_entries.emplace(path, "older-than");
      }
    }
  }
}

// Registry files (entry copies and records) older than the cutoff, by path.
std::set<std::string> old_registry_files(hubcache::storage::Repository& repo, const std::set<std::string>& dirs,
                                         std::int64_t cutoff)
{
  std::set<std::string> old;
  for (const auto& dir : dirs) {
    for (const auto& [path, date] : repo.item_dates(dir + "/" + std::string(k_registry_dir), true)) {
      if (date > 0 && date < cutoff) {
        old.insert(path);
      }
    }
  }
  return old;
}

// Removes every copy of the registry entries that name a removed graph (or, with
// --older-than, are old themselves), with add's records of them.
void remove_stale_registry(cc::PrunePlan& plan, const GraphMap& graphs,
                           const std::vector<hubcache::storage::RepoFile>& listing,
                           const std::set<std::string>& old_registry)
{
  std::set<std::string> removed_versions;
  std::set<std::string> removed_graphs;
  for (const auto& removal : plan.removals) {
    (removal.kind == "version" ? removed_versions : removed_graphs).insert(removal.path);
  }
  std::map<std::string_view, std::uint64_t> sizes;
  for (const auto& file : listing) {
    sizes.emplace(file.path, file.size);
  }
  auto remove = [&](const std::string& path, const std::string& reason, const std::string& detail) {
    auto size = sizes.find(path);
    cc::add_removal(plan, {path, "registry", reason, detail, size == sizes.end() ? 0 : size->second, 1});
  };
  for (const auto& entry : graphs.entries) {
    if (removed_versions.count(entry.compiler_dir) != 0U) {
      continue; // goes with its version
    }
    auto gone = std::find_if(entry.graphs.begin(), entry.graphs.end(),
                             [&](const std::string& graph) { return removed_graphs.count(graph) != 0U; });
    bool old = std::all_of(entry.paths.begin(), entry.paths.end(),
                           [&](const std::string& path) { return old_registry.count(path) != 0U; });
    if (gone == entry.graphs.end() && !old) {
      continue;
    }
    auto reason = gone != entry.graphs.end() ? "graphs-removed" : "older-than";
    auto detail = gone != entry.graphs.end() ? *gone : "";
    for (const auto& path : entry.paths) {
      remove(path, reason, detail);
    }
    if (!entry.record.empty()) {
      remove(entry.record, reason, detail);
    }
  }
}

} // namespace

cc::PrunePlan plan_repo_prune(hubcache::storage::Repository& repo,
                              const std::vector<hubcache::storage::RepoFile>& listing, RepoPruneOptions options)
{
  auto index = index_registry(listing);
  auto graphs = map_graphs(index, repo, options.parallelism);
  std::set<std::string> dirs;
  for (const auto& file : listing) {
    if (auto dir = first_component(file.path);
        dir.starts_with(k_compiler_dir_prefix) && dir.size() < file.path.size()) {
      dirs.insert(dir);
    }
  }
  std::vector<std::string> notes;
  if (options.unregistered) {
    std::set<std::string> skipped;
    for (const auto& graph : graphs.unregistered) {
      auto dir = first_component(graph);
      if (graphs.unattributed_dirs.count(dir) != 0U) {
        skipped.insert(dir);
      } else {
        options.base.chosen_entries.emplace(graph, "unregistered");
      }
    }
    for (const auto& dir : skipped) {
      notes.push_back("kept the unregistered graphs of " + dir
                      + ": its registry entries name no graphs (optimum's do not), so they may be theirs");
    }
  }
  std::set<std::string> old_registry;
  if (options.older_than) {
    auto cutoff = options.now - *options.older_than;
    choose_old_graphs(repo, dirs, cutoff, options.base);
    old_registry = old_registry_files(repo, dirs, cutoff);
  }
  auto plan = cc::plan_prune(listing, options.base);
  remove_stale_registry(plan, graphs, listing, old_registry);
  std::set<std::string> unknown_users;
  for (const auto& removal : plan.removals) {
    if (removal.reason == "older-than" && removal.kind == "entry"
        && graphs.unattributed_dirs.count(first_component(removal.path)) != 0U) {
      unknown_users.insert(first_component(removal.path));
    }
  }
  for (const auto& dir : unknown_users) {
    notes.push_back("old graphs of " + dir
                    + " go although its registry entries name no graphs: an entry written since may use them "
                      "(the compiler then compiles them again)");
  }
  plan.notes = std::move(notes);
  return plan;
}

} // namespace registry
