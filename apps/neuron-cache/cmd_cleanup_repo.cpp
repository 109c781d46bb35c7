// `neuron-cache cleanup --repo`: prune the cache repo itself (old compiler versions, failed
// or incomplete entries someone published, entries older than an age, graphs no registry
// entry names), for every repo kind, in one commit, the registry kept consistent.
#include "commands.hpp"
#include "transfer_report.hpp"

#include <hubcache/compilecache/prune.hpp>
#include <hubcache/error.hpp>
#include <registry/repo_prune.hpp>

#include <chrono>

#include <unistd.h>

namespace neuron_cache {

namespace cc = hubcache::compilecache;

namespace {

// What --repo takes: the repo's own selections; the local cache's options mean nothing there.
void check_repo_options(const Invocation& invocation)
{
  for (const std::string name : {"wipe", "max-size", "ttl", "evict", "stale-lock-age", "cache-dir"}) {
    if (invocation.has(name)) {
      throw UsageError("--" + name + " applies to the local cache, not to --repo");
    }
  }
  if (invocation.has("old-versions") && !invocation.has("keep-version")) {
    throw UsageError("--repo --old-versions needs --keep-version VERSION: which versions the repo keeps");
  }
  if (invocation.has("keep-version") && !invocation.has("old-versions")) {
    throw UsageError("--keep-version goes with --old-versions");
  }
  if (invocation.has("older-than")) {
    age_option(invocation, "older-than");
  }
  if (!invocation.has("yes") && !invocation.has("dry-run") && ::isatty(STDIN_FILENO) == 0) {
    throw UsageError("--repo deletes from a repo others use and asks first, and standard input is not a terminal: "
                     "add --yes (or --dry-run to see what it would delete)");
  }
}

// What a removal's "detail" says: why an entry is failed or incomplete, or which removed
// graph a registry file names.
std::string removal_detail(const cc::PruneRemoval& removal)
{
  if (removal.finding != cc::Finding::none) {
    return finding_text(removal.finding, removal.detail, removal.path);
  }
  return removal.reason == "graphs-removed" ? "names " + removal.detail : removal.detail;
}

std::string removals_text(const cc::PrunePlan& plan)
{
  Output::Table table;
  table.headers = {"PATH", "REASON", "FILES", "SIZE"};
  table.right_aligned = {false, false, true, true};
  for (const auto& removal : plan.removals) {
    table.rows.push_back({removal.path, removal.reason, std::to_string(removal.files), human_size(removal.bytes)});
  }
  return format_table(table);
}

nlohmann::json removals_json(const cc::PrunePlan& plan)
{
  auto items = nlohmann::json::array();
  for (const auto& removal : plan.removals) {
    items.push_back({{"path", removal.path},
                     {"kind", removal.kind},
                     {"reason", removal.reason},
                     {"detail", removal_detail(removal)},
                     {"files", removal.files},
                     {"bytes", removal.bytes}});
  }
  return items;
}

// "3 folders and 2 registry files".
std::string items_text(const cc::PrunePlan& plan)
{
  auto files =
    static_cast<std::size_t>(std::count_if(plan.removals.begin(), plan.removals.end(),
                                           [](const cc::PruneRemoval& removal) { return removal.kind == "registry"; }));
  auto folders = plan.removals.size() - files;
  if (files == 0) {
    return count_of(folders, "folder");
  }
  return (folders == 0 ? "" : count_of(folders, "folder") + " and ") + count_of(files, "registry file");
}

} // namespace

int run_repo_cleanup(Invocation& invocation)
{
  check_repo_options(invocation);
  bool dry_run = invocation.has("dry-run");
  auto resolved = resolve_repo(invocation);
  auto repo = open_existing_repository(invocation, resolved);
  auto revision = repo->revision();
  std::vector<hubcache::storage::RepoFile> listing;
  try {
    listing = repo->list_files();
  } catch (const hubcache::EntryNotFound&) {
    // an empty repo
  }
  warn_skipped_paths(invocation.out(), *repo);

  registry::RepoPruneOptions options;
  options.base.incomplete = invocation.has("all");
  options.base.old_versions = invocation.has("old-versions");
  options.base.keep_versions = invocation.values("keep-version");
  options.unregistered = invocation.has("unregistered");
  if (invocation.has("older-than")) {
    options.older_than = age_option(invocation, "older-than");
    options.now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  options.parallelism = static_cast<unsigned>(max_workers(invocation));
  cc::PrunePlan plan;
  try {
    plan = registry::plan_repo_prune(*repo, listing, options);
  } catch (const hubcache::InvalidArgument& error) {
    throw UsageError(std::string(error.what()) + "; " + error.hint());
  }
  for (const auto& note : plan.notes) {
    invocation.out().info(note);
  }

  std::optional<hubcache::storage::CommitResult> committed;
  std::string name = repo->spec();
  if (!dry_run && !plan.removals.empty()) {
    if (!invocation.has("yes")
        && !confirm("Delete " + items_text(plan) + " (" + human_size(plan.bytes) + ") from " + name + "?")) {
      throw hubcache::Error("nothing deleted: the pruning of " + name + " was not confirmed",
                            "add --yes to prune without asking");
    }
    committed = cc::apply_prune(*repo, plan, revision);
  }

  std::string human;
  if (plan.removals.empty()) {
    human = "Nothing to prune in " + name + " (" + std::to_string(plan.versions.size()) + " compiler versions, "
            + human_size(plan.size_before) + ").";
  } else {
    human = std::string(dry_run ? "Dry run: would delete " : "Deleted ") + items_text(plan) + " ("
            + std::to_string(plan.files) + " files, " + human_size(plan.bytes) + ") from " + name
            + (committed && !committed->revision.empty() ? " at revision " + committed->revision : "") + ":\n"
            + removals_text(plan);
  }
  std::string quiet;
  for (const auto& removal : plan.removals) {
    quiet += removal.path + "\n";
  }
  nlohmann::json data = {
    {"repo", name},
    {"dry_run", dry_run},
    {"removed", removals_json(plan)},
    {"files_removed", plan.files},
    {"bytes_freed", plan.bytes},
    {"size_before", plan.size_before},
    {"size_after", plan.size_before - plan.bytes},
    {"compiler_versions", plan.versions},
    {"revision", committed ? nlohmann::json(committed->revision) : nlohmann::json(revision.value_or(""))},
    {"committed", committed.has_value() && committed->created},
    {"notes", plan.notes},
  };
  invocation.out().result(human, data, quiet);
  return k_exit_ok;
}

} // namespace neuron_cache
