#include "hubcache/compilecache/push_limits.hpp"

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/error.hpp"

#include <algorithm>
#include <set>

namespace hubcache::compilecache {

namespace {

// The first two components of a path ("neuronxcc-<v>/MODULE_x"), and whether the second is
// the registry; nullopt for a path with fewer than three components.
struct EntryOfPath {
  std::string_view entry;
  bool registry = false;
};
std::optional<EntryOfPath> entry_of(std::string_view path)
{
  auto first = path.find('/');
  auto second = first == std::string_view::npos ? first : path.find('/', first + 1);
  if (second == std::string_view::npos || !path.starts_with(k_version_prefix)) {
    return std::nullopt;
  }
  return EntryOfPath{path.substr(0, second), path.substr(first + 1, second - first - 1) == k_registry_dir};
}

void add_entries(std::map<std::string, std::set<std::string>>& names, std::string_view path, bool all_folders)
{
  for (auto slash = path.rfind('/');; slash = path.rfind('/', slash - 1)) {
    auto folder = slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
    auto name_start = slash == std::string_view::npos ? 0 : slash + 1;
    auto name = path.substr(name_start, path.find('/', name_start) - name_start);
    auto it = names.find(std::string(folder));
    if (it == names.end()) {
      if (!all_folders) {
        if (slash == std::string_view::npos || slash == 0) {
          break;
        }
        continue;
      }
      it = names.emplace(std::string(folder), std::set<std::string>()).first;
    }
    it->second.emplace(name);
    if (slash == std::string_view::npos || slash == 0) {
      break;
    }
  }
}

} // namespace

storage::CommitUnit commit_unit_of(std::string_view path_in_repo)
{
  auto entry = entry_of(path_in_repo);
  if (entry && !entry->registry) {
    return {std::string(entry->entry), 0};
  }
  return {std::string(path_in_repo), entry ? 1 : 0};
}

std::map<std::string, std::size_t> folder_entries_after(const std::vector<storage::RepoFile>& remote,
                                                        const std::vector<Upload>& uploads)
{
  // The folders the uploads add to, each with the names it will hold.
  std::map<std::string, std::set<std::string>> names;
  for (const auto& upload : uploads) {
    add_entries(names, upload.path, true);
  }
  for (const auto& file : remote) {
    add_entries(names, file.path, false);
  }
  std::map<std::string, std::size_t> counts;
  for (const auto& [folder, held] : names) {
    counts.emplace(folder, held.size());
  }
  return counts;
}

void check_folder_limits(const storage::Repository& repo, const std::map<std::string, std::size_t>& folder_entries)
{
  auto limit = repo.max_folder_entries();
  if (!limit) {
    return;
  }
  for (const auto& [folder, count] : folder_entries) {
    if (count > *limit) {
      throw NotSupported("the push would put " + std::to_string(count) + " entries in the folder '"
                           + (folder.empty() ? std::string("/") : folder + "/") + "' of " + repo.describe()
                           + ", which allows at most " + std::to_string(*limit)
                           + " entries per folder; nothing was "
                             "uploaded",
                         "push this cache to a store without that limit (a directory repo, an s3:// repo) or split "
                         "it across Hub repos");
    }
  }
}

std::vector<std::string> entries_of_paths(const std::vector<std::string>& paths)
{
  std::set<std::string_view> entries;
  for (const auto& path : paths) {
    auto entry = entry_of(path);
    entries.insert(entry ? entry->entry : std::string_view(path));
  }
  return {entries.begin(), entries.end()};
}

PushStopped stopped_by_quota(const storage::CommitQuotaReached& error, std::size_t entries_total)
{
  PushStopped stopped;
  stopped.entries_left = entries_of_paths(error.remaining_paths());
  stopped.entries_total = std::max(entries_total, stopped.entries_left.size());
  stopped.entries_published = stopped.entries_total - stopped.entries_left.size();
  stopped.quota = error.quota();
  stopped.wait = error.retry_after();
  stopped.retry_at = std::chrono::system_clock::now() + error.retry_after();
  stopped.message = error.what();
  return stopped;
}

} // namespace hubcache::compilecache
