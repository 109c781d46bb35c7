#include "hubcache/compilecache/repo_layout.hpp"

#include <map>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

RepoLayout group_repo_files(const std::vector<storage::RepoFile>& files)
{
  auto copy = files;
  return group_repo_files(std::move(copy));
}

RepoLayout group_repo_files(std::vector<storage::RepoFile>&& files)
{
  RepoLayout layout;
  std::map<std::string, RepoEntry> entries;
  for (auto& file : files) {
    auto first = file.path.find('/');
    auto second = first == std::string::npos ? std::string::npos : file.path.find('/', first + 1);
    auto name = stdfs::path(file.path).filename().string();
    if (second == std::string::npos || !file.path.starts_with(k_version_prefix) || first == k_version_prefix.size()
        || !storage::is_valid_path_in_repo(file.path)) {
      ++layout.other_files;
      continue;
    }
    if (is_lock_name(name) || is_temp_file_name(name)) {
      continue; // never installed: a lock would stall every compiler on this host
    }
    auto dir = std::string_view(file.path).substr(first + 1, second - first - 1);
    auto module = parse_module_name(dir);
    EntryKind kind;
    if (dir == k_registry_dir) {
      kind = EntryKind::registry;
    } else if (module) {
      kind = module->flags_suffix ? EntryKind::module : EntryKind::exported_model;
    } else {
      ++layout.other_files;
      continue;
    }
    auto path = file.path.substr(0, second);
    auto [it, inserted] = entries.try_emplace(path);
    if (inserted) {
      it->second.kind = kind;
      it->second.path = path;
      it->second.compiler_version = file.path.substr(k_version_prefix.size(), first - k_version_prefix.size());
    }
    it->second.files.push_back(std::move(file));
  }
  files.clear();
  files.shrink_to_fit();
  layout.entries.reserve(entries.size());
  for (auto& [path, entry] : entries) {
    layout.entries.push_back(std::move(entry));
  }
  return layout;
}

} // namespace hubcache::compilecache
