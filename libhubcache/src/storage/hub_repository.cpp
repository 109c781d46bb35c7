#include "hubcache/storage/hub_repository.hpp"

#include "file_download_target.hpp"
#include "hub_commit.hpp"

#include "hubcache/aws/credentials.hpp"
#include "hubcache/error.hpp"
#include "hubcache/storage/download_check.hpp"
#include "hubcache/util/anonymous_file.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/process.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace hubcache::storage {

namespace stdfs = std::filesystem;

namespace {

std::string normalize_prefix(std::string_view prefix)
{
  std::string folder(prefix);
  while (!folder.empty() && folder.back() == '/') {
    folder.pop_back();
  }
  if (!folder.empty()) {
    validate_path_in_repo(folder);
  }
  return folder;
}

} // namespace

HubRepository::HubRepository(std::string repo_id, hub::HubConfig config)
  : m_repo_id(std::move(repo_id)), m_api(std::move(config))
{}

std::string HubRepository::qualified_id()
{
  // A bare NAME means NAME under the token's user, for every operation as for create.
  std::lock_guard lock(m_id_mutex);
  if (m_repo_id.find('/') == std::string::npos && m_api.has_token()) {
    m_repo_id = m_api.whoami().name + "/" + m_repo_id;
  }
  return m_repo_id;
}

std::string HubRepository::describe() const
{
  std::string text = "Hub repo " + m_repo_id;
  if (m_api.config().endpoint != hub::k_default_hub_endpoint) {
    text += " on " + m_api.config().endpoint;
  }
  return text;
}

std::optional<hub::HubRepoInfo> HubRepository::info()
{
  return m_info.get([this] { return m_api.repo_info(qualified_id()); },
                    [](const auto& answer) { return answer.has_value(); }); // a missing repo is asked again
}

bool HubRepository::exists()
{
  if (info()) {
    return true;
  }
  // The Hub answers "not found" to a bad token too: tell that case apart, since the fix
  // is different.
  if (m_api.has_token()) {
    m_api.whoami();
  }
  // Buckets and model repos are separate namespaces: a bucket of that name is not this repo.
  http::Request request;
  request.url = m_api.config().endpoint + "/api/buckets/" + http::url_encode(qualified_id(), true);
  request.headers = m_api.auth_headers();
  if (m_api.send(request).ok()) {
    throw RepoNotFound("there is no model repo " + m_repo_id + "; hf://buckets/" + m_repo_id
                         + " is a Storage Bucket (use it as --repo-id hf://buckets/" + m_repo_id + ")",
                       ErrorFacts{m_repo_id, m_api.has_token(), false});
  }
  return false;
}

std::string HubRepository::create(const RepoCreateOptions& options)
{
  m_api.require_online();
  if (!m_api.has_token()) {
    throw TokenMissing("cannot create the Hub repo " + m_repo_id + ": no Hugging Face token is set",
                       ErrorFacts{m_repo_id, false, true});
  }
  auto repo_id = qualified_id();
  auto created = m_api.create_repo(repo_id, options.is_private, options.exist_ok);
  std::lock_guard lock(m_id_mutex);
  m_repo_id = created;
  return created;
}

std::optional<std::string> HubRepository::revision()
{
  auto info = this->info();
  if (!info) {
    throw RepoNotFound("the " + describe() + " does not exist or is not accessible with your token",
                       ErrorFacts{m_repo_id, m_api.has_token(), false});
  }
  return info->sha;
}

RepoFile HubRepository::to_repo_file(const hub::HubTreeEntry& entry) const
{
  RepoFile file;
  file.path = entry.path;
  file.size = entry.size;
  if (entry.lfs_oid) {
    file.sha256 = *entry.lfs_oid;
  } else {
    file.git_blob_sha1 = entry.oid; // for LFS files the oid is the pointer's, not the content's
  }
  return file;
}

std::vector<RepoFile> HubRepository::list_files(std::string_view prefix)
{
  auto folder = normalize_prefix(prefix);
  std::vector<hub::HubTreeEntry> entries;
  try {
    entries = m_api.list_tree(qualified_id(), k_branch, folder, true);
  } catch (const EntryNotFound&) {
    return {};
  } catch (const RevisionNotFound&) {
    return {}; // a repo without any commit has no main branch yet
  }
  std::vector<RepoFile> files;
  for (const auto& entry : entries) {
    // Nothing outside the repo's own tree is ever used; an odd name is skipped, not fatal.
    if (!is_valid_path_in_repo(entry.path)) {
      if (entry.type == "file") {
        note_skipped_path(entry.path);
      }
      continue;
    }
    if (entry.type != "file") {
      continue;
    }
    if (!folder.empty() && !entry.path.starts_with(folder + "/")) {
      throw IntegrityError("the Hub listed '" + entry.path + "' under the folder '" + folder + "' of " + m_repo_id,
                           "the repo or the server is corrupt: report it to the repo owner");
    }
    files.push_back(to_repo_file(entry));
  }
  std::sort(files.begin(), files.end(), [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
  return files;
}

// Commit dates: the tree listing with each entry's last commit, one level or all below.
std::map<std::string, std::int64_t> HubRepository::item_dates(std::string_view prefix, bool recursive)
{
  auto folder = normalize_prefix(prefix);
  std::vector<hub::HubTreeEntry> entries;
  try {
    entries = m_api.list_tree(qualified_id(), k_branch, folder, recursive, true);
  } catch (const EntryNotFound&) {
    return {};
  } catch (const RevisionNotFound&) {
    return {};
  }
  std::map<std::string, std::int64_t> dates;
  for (const auto& entry : entries) {
    if (!is_valid_path_in_repo(entry.path) || (recursive && entry.type != "file")) {
      continue;
    }
    auto date = aws::parse_iso8601(entry.last_commit_date);
    if (!date) {
      throw RemoteError("the Hub gave no commit date for '" + entry.path + "' in " + qualified_id(),
                        "retry later; cleanup --repo --older-than needs the dates");
    }
    dates[entry.path] = std::chrono::duration_cast<std::chrono::seconds>(date->time_since_epoch()).count();
  }
  return dates;
}

std::vector<std::string> HubRepository::list_folders(std::string_view prefix)
{
  auto folder = normalize_prefix(prefix);
  auto repo_id = qualified_id();
  std::vector<hub::HubTreeEntry> entries;
  try {
    entries = m_api.list_tree(repo_id, k_branch, folder, false);
  } catch (const EntryNotFound&) {
    return {};
  } catch (const RevisionNotFound&) {
    return {};
  }
  std::vector<std::string> names;
  auto start = folder.empty() ? 0 : folder.size() + 1;
  for (const auto& entry : entries) {
    // An unsafe folder is never descended into; its files are reported when listed.
    if (entry.type != "directory" || !is_valid_path_in_repo(entry.path)) {
      continue;
    }
    if (entry.path.size() <= start || (!folder.empty() && !entry.path.starts_with(folder + "/"))
        || entry.path.find('/', start) != std::string::npos) {
      throw IntegrityError("the Hub listed '" + entry.path + "' as a direct sub-folder of '" + folder + "' in "
                             + repo_id,
                           "the repo or the server is corrupt: report it to the repo owner");
    }
    names.push_back(entry.path.substr(start));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<RepoFile> HubRepository::stat(std::string_view path)
{
  validate_path_in_repo(path);
  std::vector<hub::HubTreeEntry> entries;
  try {
    entries = m_api.paths_info(qualified_id(), k_branch, {std::string(path)});
  } catch (const EntryNotFound&) {
    return std::nullopt;
  } catch (const RevisionNotFound&) {
    return std::nullopt;
  }
  for (const auto& entry : entries) {
    if (entry.path == path && entry.type == "file") {
      return to_repo_file(entry);
    }
  }
  return std::nullopt;
}

std::string HubRepository::read_file(std::string_view path)
{
  validate_path_in_repo(path);
  hub::StringDownloadTarget target;
  try {
    m_api.download(qualified_id(), k_branch, path, target);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(std::string(path) + " in " + describe() + ": " + error.what());
  }
  return std::move(target.content);
}

void HubRepository::download_file(std::string_view path, const stdfs::path& destination,
                                  const util::ProgressCallback& progress, bool flush)
{
  validate_path_in_repo(path);
  FileDownloadTarget target(destination);
  m_api.download(qualified_id(), k_branch, path, target, progress);
  target.commit(flush);
}

util::FileDigests HubRepository::download_listed(const RepoFile& listed, const stdfs::path& destination,
                                                 const util::ProgressCallback& progress, bool flush)
{
  validate_path_in_repo(listed.path);
  FileDownloadTarget target(destination);
  hub::ListedContent content{listed.size, listed.sha256, listed.git_blob_sha1};
  auto result = m_api.download(qualified_id(), k_branch, listed.path, target, progress, &content);
  util::FileDigests digests{result.size, result.sha256, result.git_blob_sha1};
  check_download(listed, digests, "'" + listed.path + "' from " + describe());
  target.commit(flush);
  return digests;
}

void HubRepository::check_writable()
{
  m_api.require_online();
  if (!m_api.has_token()) {
    throw TokenMissing("You need to log in to the Hugging Face Hub to push to " + m_repo_id,
                       ErrorFacts{m_repo_id, false, true});
  }
  if (!exists()) {
    throw RepoNotFound("cache repo " + m_repo_id + " does not exist or cannot be read",
                       ErrorFacts{m_repo_id, m_api.has_token(), true});
  }
  m_api.check_write_access(qualified_id());
}

CommitResult HubRepository::commit(const CommitRequest& request, const util::ProgressCallback& progress)
{
  m_api.require_online();
  for (const auto& addition : request.additions) {
    validate_path_in_repo(addition.path_in_repo);
  }
  for (const auto& deletion : request.deletions) {
    validate_path_in_repo(deletion.path_in_repo);
  }
  if (!m_api.has_token()) {
    throw TokenMissing("cannot commit to " + describe() + ": no Hugging Face token is set",
                       ErrorFacts{m_repo_id, false, true});
  }
  auto repo_id = qualified_id();
  // The head moves (or may have, if the commit fails midway): the info read before is stale.
  m_info.forget();
  struct ForgetAfter {
    util::RecentAnswer<std::optional<hub::HubRepoInfo>>& info;
    ~ForgetAfter() { info.forget(); }
  } forget_after{m_info};
  return commit_to_hub(m_api, repo_id, describe(), request, progress);
}

std::optional<std::size_t> HubRepository::max_folder_entries() const
{
  return m_api.config().max_folder_entries;
}

} // namespace hubcache::storage
