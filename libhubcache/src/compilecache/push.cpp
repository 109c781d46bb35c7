#include "hubcache/compilecache/push.hpp"

#include "hubcache/compilecache/push_limits.hpp"
#include "hubcache/error.hpp"
#include "hubcache/layout/names.hpp"
#include "hubcache/util/process.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <unordered_map>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

bool is_publishable(const Entry& entry)
{
  return entry.kind != EntryKind::module || entry.state == EntryState::success;
}

} // namespace

PushPlan plan_push(const Scan& scan, const std::vector<storage::RepoFile>& remote, DigestCache& digests)
{
  std::unordered_map<std::string_view, const storage::RepoFile*> by_path;
  by_path.reserve(remote.size());
  for (const auto& file : remote) {
    by_path.emplace(file.path, &file);
  }
  PushPlan plan;
  plan.root = scan.root.native();
  plan.skipped = scan.skipped;
  for (const auto& entry : scan.entries) {
    if (!is_publishable(entry) || entry.files.empty()) {
      continue;
    }
    bool uploads = false;
    for (const auto& file : entry.files) {
      auto it = by_path.find(file.path);
      if (it != by_path.end() && same_content(*it->second, file, digests, scan.root.native())) {
        continue;
      }
      plan.uploads.push_back({file.path, file.source, {file.size, file.mtime_ns, file.inode}});
      ++plan.files_to_upload;
      plan.bytes_to_upload += file.size;
      uploads = true;
    }
    (uploads ? plan.entries_to_push : plan.entries_present).push_back(entry.path);
  }
  plan.folder_entries = folder_entries_after(remote, plan.uploads);
  return plan;
}

std::string PushPlan::source_of(const Upload& upload) const
{
  return compilecache::source_of(root, upload.source, upload.path);
}

std::string publish_fingerprint(const Scan& scan)
{
  // Fixed-width stamps between '\0'-terminated paths: no two file lists hash alike.
  util::Hasher hasher(util::HashAlgorithm::sha256);
  for (const auto& entry : scan.entries) {
    if (!is_publishable(entry) || entry.files.empty()) {
      continue;
    }
    for (const auto& file : entry.files) {
      hasher.update(file.path.c_str(), file.path.size() + 1);
      const std::array<std::uint64_t, 3> stamp{file.size, static_cast<std::uint64_t>(file.mtime_ns), file.inode};
      hasher.update(stamp.data(), sizeof stamp);
    }
  }
  return hasher.hex_digest();
}

PushPlan plan_already_pushed(const Scan& scan)
{
  PushPlan plan;
  plan.skipped = scan.skipped;
  for (const auto& entry : scan.entries) {
    if (is_publishable(entry) && !entry.files.empty()) {
      plan.entries_present.push_back(entry.path);
    }
  }
  return plan;
}

std::set<std::string> publishable_versions(const Scan& scan)
{
  std::set<std::string> versions;
  for (const auto& entry : scan.entries) {
    if (is_publishable(entry) && !entry.files.empty()) {
      versions.insert(entry.path.substr(0, entry.path.find('/')));
    }
  }
  return versions;
}

std::vector<storage::RepoFile> list_remote_for(storage::Repository& repo, const Scan& scan)
{
  auto versions = publishable_versions(scan);
  std::vector<storage::RepoFile> files;
  for (const auto& version : versions) {
    std::vector<storage::RepoFile> listed;
    try {
      listed = repo.list_files(version);
    } catch (const EntryNotFound&) {
      continue; // a version the repo has never seen
    }
    files.insert(files.end(), std::make_move_iterator(listed.begin()), std::make_move_iterator(listed.end()));
  }
  return files;
}

void complete_remote_digests(storage::Repository& repo, std::vector<storage::RepoFile>& remote, const Scan& scan)
{
  std::unordered_map<std::string_view, storage::RepoFile*> lacking;
  for (auto& file : remote) {
    if (storage::has_no_checksum(file)) {
      lacking.emplace(file.path, &file);
    }
  }
  if (lacking.empty()) {
    return;
  }
  std::vector<storage::RepoFile*> wanted;
  for (const auto& entry : scan.entries) {
    for (const auto& file : entry.files) {
      auto it = lacking.find(file.path);
      if (it != lacking.end() && it->second->size == file.size) {
        wanted.push_back(it->second);
      }
    }
  }
  lacking.clear();
  storage::complete_listing(repo, remote, wanted);
}

namespace {

// What a report takes over from its plan before the uploads are consumed.
TransferReport report_of_plan(PushPlan& plan)
{
  TransferReport report;
  report.entries = transfer_entries(plan);
  report.planned = plan.entries_to_push;
  report.present = std::move(plan.entries_present);
  report.skipped = std::move(plan.skipped);
  report.files_planned = plan.files_to_upload;
  report.bytes_planned = plan.bytes_to_upload;
  report.entries_planned = plan.entries_to_push.size();
  return report;
}

// The commit reports the digests of what it holds now: remember them for files that did
// not change meanwhile, so the next push hashes nothing and lists nothing twice. The
// request's paths become the digest cache's keys.
void remember_committed(const std::vector<storage::RepoFile>& files, std::vector<storage::Addition>& additions,
                        const std::vector<FileStamp>& stamps, DigestCache& digests)
{
  std::vector<const storage::RepoFile*> committed;
  committed.reserve(files.size());
  for (const auto& file : files) {
    committed.push_back(&file);
  }
  auto by_path = [](const storage::RepoFile* a, const storage::RepoFile* b) { return a->path < b->path; };
  std::sort(committed.begin(), committed.end(), by_path);
  for (std::size_t i = 0; i < additions.size(); ++i) {
    auto& addition = additions[i];
    const auto& stamp = stamps[i];
    auto it =
      std::lower_bound(committed.begin(), committed.end(), addition.path_in_repo,
                       [](const storage::RepoFile* file, const std::string& path) { return file->path < path; });
    if (it == committed.end() || (*it)->path != addition.path_in_repo) {
      continue;
    }
    const auto& file = **it;
    if (file.size != stamp.size || (file.sha256.empty() && file.etag.empty())) {
      continue;
    }
    try {
      if (stamp_of(addition.source.file_for(addition.path_in_repo)) == stamp) {
        // Added to what the plan learnt of this version (an S3 ETag beside its sha256).
        digests.remember(
          std::move(addition.path_in_repo), stamp,
          {.size = stamp.size, .sha256 = file.sha256, .git_blob_sha1 = file.git_blob_sha1, .etag = file.etag});
      }
    } catch (const Error&) {
    }
  }
  std::vector<const storage::RepoFile*>().swap(committed);
}

} // namespace

TransferReport dry_run_report(PushPlan plan)
{
  return report_of_plan(plan);
}

std::vector<TransferEntry> transfer_entries(const PushPlan& plan)
{
  std::vector<TransferEntry> entries;
  std::unordered_map<std::string, std::size_t> index;
  for (const auto& path : plan.entries_to_push) {
    index.emplace(path, entries.size());
    entries.push_back({path, std::string(layout::compiler_version_of(path)), 0, 0, std::nullopt});
  }
  // Each upload counts for the entry whose folder holds it: its path, cut at a '/'.
  for (const auto& upload : plan.uploads) {
    std::string_view path = upload.path;
    while (!path.empty()) {
      if (auto found = index.find(std::string(path)); found != index.end()) {
        ++entries[found->second].files;
        entries[found->second].bytes += upload.stamp.size;
        break;
      }
      auto slash = path.rfind('/');
      path = path.substr(0, slash == std::string_view::npos ? 0 : slash);
    }
  }
  return entries;
}

TransferReport push(storage::Repository& repo, PushPlan plan, DigestCache& digests,
                    const util::TransferCallback& progress, const std::optional<std::string>& planned_at)
{
  auto result = report_of_plan(plan);
  if (plan.uploads.empty()) {
    // Nothing to commit: the head stays what the plan was made against (a directory repo's
    // revision is a walk of the whole tree: not paid twice).
    result.revision = planned_at ? planned_at : repo.revision();
    return result;
  }
  // The plan's uploads move into the request (tens of thousands of paths: not copied), its
  // own vector is not kept; files below the root share it instead of each holding a full
  // path.
  check_folder_limits(repo, plan.folder_entries);
  storage::CommitRequest request;
  request.message = std::string(k_commit_message);
  request.unit_of = commit_unit_of;
  request.additions.reserve(plan.uploads.size());
  std::vector<FileStamp> stamps;
  stamps.reserve(plan.uploads.size());
  auto root = std::make_shared<const std::string>(plan.root);
  for (auto& upload : plan.uploads) {
    auto known = digests.known(upload.path, upload.stamp);
    auto source = upload.source.empty() ? storage::FileSource::in_directory(root)
                                        : storage::FileSource::from_file(std::move(upload.source));
    request.additions.push_back({std::move(upload.path), std::move(source),
                                 known ? std::make_shared<const util::FileDigests>(std::move(*known)) : nullptr});
    stamps.push_back(upload.stamp);
  }
  std::vector<Upload>().swap(plan.uploads);

  util::ProgressCallback bytes_progress;
  if (progress) {
    // The commit reports bytes; files count once it is done.
    bytes_progress = [&](std::uint64_t done, std::uint64_t total) { progress({done, total, 0, 0}); };
  }
  storage::CommitResult commit;
  try {
    commit = repo.commit(request, bytes_progress);
  } catch (const storage::CommitQuotaReached& error) {
    result.quota = stopped_by_quota(error, plan.entries_to_push.size());
    result.commits = error.commits_made();
    result.committed = error.commits_made() > 0;
    const auto& left = result.quota->entries_left;
    for (const auto& entry : plan.entries_to_push) {
      if (!std::binary_search(left.begin(), left.end(), entry)) {
        result.transferred.push_back(entry);
      }
    }
    return result;
  } catch (const storage::CommitInterrupted& error) {
    // Stopped at the store's safe point: the entries with no file left are whole.
    result.interrupted_by = error.signal();
    result.entries_planned = plan.entries_to_push.size();
    result.commits = error.commits_made();
    result.committed = error.commits_made() > 0;
    const auto left = entries_of_paths(error.remaining_paths());
    for (const auto& entry : plan.entries_to_push) {
      if (!std::binary_search(left.begin(), left.end(), entry)) {
        result.transferred.push_back(entry);
      }
    }
    return result;
  }
  result.commits = commit.commits;
  result.xet = {commit.xet_new_bytes, commit.xet_deduplicated_bytes, commit.xet_stored_bytes};
  result.warnings = std::move(commit.warnings);
  // What the commit built for tens of thousands of files (on its worker threads too) is
  // gone: handed back before the digests of what it reported are remembered.
  util::release_free_memory();
  if (progress) {
    progress({plan.bytes_to_upload, plan.bytes_to_upload, plan.files_to_upload, plan.files_to_upload});
  }
  result.committed = commit.created;
  result.revision = commit.revision;
  result.transferred = result.planned;
  result.files_transferred = result.files_planned;
  result.bytes_transferred = result.bytes_planned;

  remember_committed(commit.files, request.additions, stamps, digests);
  request = {};
  std::vector<FileStamp>().swap(stamps); // (`= {}` would keep the capacity)
  result.committed_files = std::move(commit.files);
  return result;
}

} // namespace hubcache::compilecache
