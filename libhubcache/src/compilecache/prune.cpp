#include "hubcache/compilecache/prune.hpp"

#include "hubcache/compilecache/sync.hpp"
#include "hubcache/error.hpp"

#include <algorithm>
#include <map>

namespace hubcache::compilecache {

namespace {

std::string version_folder(const std::string& path)
{
  return path.substr(0, path.find('/'));
}

bool kept(const std::string& folder, const std::vector<std::string>& keep_versions)
{
  auto version = std::string_view(folder).substr(k_version_prefix.size());
  return std::any_of(keep_versions.begin(), keep_versions.end(),
                     [&](const std::string& filter) { return version_matches(version, filter); });
}

void check_keep_filters(const PruneOptions& options, const std::vector<std::string>& versions)
{
  for (const auto& filter : options.keep_versions) {
    bool found =
      std::any_of(versions.begin(), versions.end(), [&](const std::string& folder) { return kept(folder, {filter}); });
    if (!found) {
      std::string known;
      for (const auto& folder : versions) {
        known += (known.empty() ? "" : ", ") + folder.substr(k_version_prefix.size());
      }
      throw InvalidArgument("--keep-version " + printable(filter) + " matches no compiler version of the repo (it has: "
                              + (known.empty() ? "none" : known) + ")",
                            "name a version the repo holds, or a prefix of one such as 2.21");
    }
  }
}

// Why a module entry of the repo is to go (reason "" when it stays).
std::pair<std::string, EntryFinding> verdict(const RepoEntry& entry, const PruneOptions& options)
{
  std::vector<EntryFileInfo> infos;
  for (const auto& file : entry.files) {
    infos.push_back({file.path.substr(entry.path.size() + 1), file.size});
  }
  auto classification = classify_module_files(infos);
  if (classification.state == EntryState::failed && options.failed) {
    return {"failed", classification.why};
  }
  if (classification.state == EntryState::incomplete && options.incomplete) {
    return {"incomplete", classification.why};
  }
  return {};
}

} // namespace

void add_removal(PrunePlan& plan, PruneRemoval removal)
{
  plan.bytes += removal.bytes;
  plan.files += removal.files;
  plan.removals.push_back(std::move(removal));
}

PrunePlan plan_prune(const std::vector<storage::RepoFile>& listing, const PruneOptions& options)
{
  PrunePlan plan;
  std::map<std::string, PruneRemoval> versions;
  for (const auto& file : listing) {
    auto folder = version_folder(file.path);
    if (!folder.starts_with(k_version_prefix) || folder.size() == file.path.size()) {
      continue;
    }
    auto& version = versions[folder];
    version.path = folder;
    version.bytes += file.size;
    ++version.files;
    plan.size_before += file.size;
  }
  for (const auto& [folder, removal] : versions) {
    plan.versions.push_back(folder);
  }
  check_keep_filters(options, plan.versions);
  auto add = [&](PruneRemoval removal) { add_removal(plan, std::move(removal)); };
  for (auto& [folder, removal] : versions) {
    if (options.old_versions && !kept(folder, options.keep_versions)) {
      removal.kind = "version";
      removal.reason = "old-version";
      add(removal);
    }
  }
  for (const auto& entry : group_repo_files(listing).entries) {
    bool version_goes = std::any_of(plan.removals.begin(), plan.removals.end(), [&](const PruneRemoval& removal) {
      return removal.kind == "version" && removal.path == version_folder(entry.path);
    });
    if (entry.kind != EntryKind::module || version_goes) {
      continue;
    }
    auto [reason, why] = verdict(entry, options);
    if (auto chosen = options.chosen_entries.find(entry.path);
        reason.empty() && chosen != options.chosen_entries.end()) {
      reason = chosen->second;
    }
    if (reason.empty()) {
      continue;
    }
    PruneRemoval removal{entry.path, "entry", reason, why.subject, 0, entry.files.size(), why.finding};
    for (const auto& file : entry.files) {
      removal.bytes += file.size;
    }
    add(std::move(removal));
  }
  return plan;
}

storage::CommitResult apply_prune(storage::Repository& repo, const PrunePlan& plan,
                                  const std::optional<std::string>& revision)
{
  storage::CommitRequest request;
  request.message = "Prune " + std::to_string(plan.removals.size()) + " items with neuron-cache";
  request.parent_revision = revision;
  for (const auto& removal : plan.removals) {
    request.deletions.push_back({removal.path, removal.kind != "registry"});
  }
  return repo.commit(request);
}

} // namespace hubcache::compilecache
