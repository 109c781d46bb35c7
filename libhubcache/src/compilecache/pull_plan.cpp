#include "hubcache/compilecache/pull.hpp"

#include "pull_local.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/checked.hpp"
#include "hubcache/util/nofollow.hpp"
#include "hubcache/util/text.hpp"

#include <set>
#include <sys/stat.h>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace pull_local {

std::string relative_name(const RepoEntry& entry, const storage::RepoFile& file)
{
  return file.path.substr(entry.path.size() + 1);
}

// Files below an existing local entry dir (relative names; temp files ignored).
std::vector<std::string> local_names(const stdfs::path& dir)
{
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(dir, ec); !ec && it != stdfs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_directory(ec) && !is_temp_file_name(it->path().filename().string())) {
      names.push_back(it->path().lexically_relative(dir).generic_string());
    }
  }
  return names;
}

void check_root(const stdfs::path& root)
{
  struct stat status {};
  if (::stat(root.c_str(), &status) == 0 && !S_ISDIR(status.st_mode)) {
    throw IoError("the compile cache " + root.string() + " is not a directory", "name the compile cache directory");
  }
}

} // namespace pull_local

using pull_local::check_root;
using pull_local::local_names;
using pull_local::relative_name;

namespace {

enum class Action { install, present, skip };

struct Decision {
  Action action = Action::skip;
  SkipReason reason = SkipReason::unrecognized;
  EntryFinding why;
  bool fresh = false; // the entry does not exist locally
  std::vector<const storage::RepoFile*> to_download;
  bool replace = false; // a failed local entry makes way for it
};

LocalFile local_file(const std::string& rel, const stdfs::path& path)
{
  auto stamp = stamp_of(path);
  return {rel, path.string(), stamp.size, stamp.mtime_ns, stamp.inode};
}

// A local module entry in the FAILED state with no lock: what --replace-failed replaces.
bool is_failed_locally(const std::vector<std::string>& names)
{
  std::vector<EntryFileInfo> infos;
  for (const auto& name : names) {
    infos.push_back({name, 1});
  }
  return classify_module_files(infos).state == EntryState::failed;
}

Decision decide(const RepoEntry& entry, const stdfs::path& root, DigestCache& digests, std::vector<Skipped>& skipped,
                bool replace_failed)
{
  Decision decision;
  if (entry.kind == EntryKind::module) {
    std::vector<EntryFileInfo> infos;
    for (const auto& file : entry.files) {
      infos.push_back({relative_name(entry, file), file.size});
    }
    auto classification = classify_module_files(infos);
    if (classification.state == EntryState::failed) {
      return {Action::skip, SkipReason::failed_in_repo, classification.why, false, {}};
    }
    if (classification.state != EntryState::success) {
      return {Action::skip, SkipReason::incomplete_in_repo, classification.why, false, {}};
    }
  }
  auto target = root / entry.path;
  if (auto link = util::link_on_the_way(root, entry.path)) {
    return {Action::skip, SkipReason::link_in_local_path, {Finding::link_on_the_way, *link}, false, {}};
  }
  struct stat status {};
  if (::lstat(target.c_str(), &status) != 0) {
    decision.action = Action::install;
    decision.fresh = true;
    for (const auto& file : entry.files) {
      decision.to_download.push_back(&file);
    }
    return decision;
  }
  if (!S_ISDIR(status.st_mode)) {
    return {Action::skip, SkipReason::local_entry_differs, {Finding::not_a_directory, {}}, false, {}};
  }
  auto names = local_names(target);
  if (replace_failed && entry.kind == EntryKind::module && is_failed_locally(names)) {
    decision.action = Action::install;
    decision.fresh = true;
    decision.replace = true;
    for (const auto& file : entry.files) {
      decision.to_download.push_back(&file);
    }
    return decision;
  }
  std::set<std::string> repo_names;
  for (const auto& file : entry.files) {
    repo_names.insert(relative_name(entry, file));
  }
  bool is_module = entry.kind == EntryKind::module;
  // A lock says most about the entry: checked before any difference, whatever the order.
  for (const auto& name : names) {
    if (is_lock_name(stdfs::path(name).filename().string())) {
      return {Action::skip, SkipReason::locked_locally, {Finding::lock_present, name}, false, {}};
    }
  }
  for (const auto& name : names) {
    if (is_module && !repo_names.contains(name)) {
      return {Action::skip, SkipReason::local_entry_differs, {Finding::only_here, name}, false, {}};
    }
  }
  for (const auto& file : entry.files) {
    auto local = target / relative_name(entry, file);
    struct stat local_status {};
    if (::stat(local.c_str(), &local_status) != 0) {
      decision.to_download.push_back(&file);
      continue;
    }
    bool same = S_ISREG(local_status.st_mode) && same_content(file, local_file(file.path, local), digests);
    if (same) {
      continue;
    }
    if (is_module) {
      return {
        Action::skip, SkipReason::local_entry_differs, {Finding::file_differs, relative_name(entry, file)}, false, {}};
    }
    // Registry and exported-model trees: keep the local file, install the rest.
    skipped.push_back({file.path, SkipReason::local_file_differs, {}});
  }
  decision.action = decision.to_download.empty() ? Action::present : Action::install;
  return decision;
}

} // namespace

PullPlan plan_pull(const std::vector<storage::RepoFile>& listing, const stdfs::path& root, DigestCache& digests,
                   const PullOptions& options)
{
  auto copy = listing;
  return plan_pull(std::move(copy), root, digests, options);
}

PullPlan plan_pull(std::vector<storage::RepoFile>&& listing, const stdfs::path& root, DigestCache& digests,
                   const PullOptions& options)
{
  check_root(root);
  PullPlan plan;
  // The listing is consumed as it is grouped, and each entry's files move into its
  // install: one copy of the repo's file list at any time.
  auto layout = group_repo_files(std::move(listing));
  plan.other_files = layout.other_files;
  for (auto& entry : layout.entries) {
    if (!entry.compiler_version.empty()) {
      plan.compiler_versions.insert(entry.compiler_version);
    }
    if (options.compiler_version && !version_matches(entry.compiler_version, *options.compiler_version)) {
      continue;
    }
    if (options.only_entries && options.only_entries->count(entry.path) == 0) {
      continue;
    }
    auto decision = decide(entry, root, digests, plan.skipped, options.replace_failed);
    switch (decision.action) {
    case Action::present: plan.entries_present.push_back(entry.path); break;
    case Action::skip:
      plan.skipped.push_back({entry.path, decision.reason, decision.why.subject, decision.why.finding});
      break;
    case Action::install: {
      PullInstall install;
      install.fresh = decision.fresh;
      install.replace = decision.replace;
      if (decision.fresh) {
        // Every file of the entry: moved, not copied (install_entry reads them there).
        install.to_download = std::move(entry.files);
        entry.files.clear();
      } else {
        for (const auto* file : decision.to_download) {
          install.to_download.push_back(*file);
        }
      }
      for (const auto& file : install.to_download) {
        install.bytes = util::saturating_add(install.bytes, file.size);
      }
      plan.bytes_planned = util::saturating_add(plan.bytes_planned, install.bytes);
      plan.files_planned += install.to_download.size();
      install.entry = std::move(entry);
      plan.installs.push_back(std::move(install));
      break;
    }
    }
  }
  return plan;
}

PullPlan plan_pull(storage::Repository& repo, const stdfs::path& root, DigestCache& digests, const PullOptions& options)
{
  check_root(root);
  digests.set_etag_part_sizes(repo.etag_part_sizes());
  std::vector<storage::RepoFile> listing;
  try {
    listing = repo.list_files();
  } catch (const EntryNotFound&) {
    // an empty repo
  }
  // Digests the listing left out are asked for only where a local file of the same size
  // is to be compared with.
  std::vector<storage::RepoFile*> compared;
  for (auto& file : listing) {
    struct stat local {};
    if (storage::has_no_checksum(file) && ::stat((root / file.path).c_str(), &local) == 0 && S_ISREG(local.st_mode)
        && static_cast<std::uint64_t>(local.st_size) == file.size) {
      compared.push_back(&file);
    }
  }
  storage::complete_listing(repo, listing, compared);
  return plan_pull(std::move(listing), root, digests, options);
}

} // namespace hubcache::compilecache
