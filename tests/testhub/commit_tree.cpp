#include "commit_tree.hpp"
#include "http_util.hpp"

#include <algorithm>
#include <set>

#include "hubcache/util/hash.hpp"

namespace testhub {

namespace {

std::string hex_to_raw(const std::string& hex)
{
  std::string raw;
  raw.reserve(hex.size() / 2);
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    raw += static_cast<char>(hex_value(hex[i]) * 16 + hex_value(hex[i + 1]));
  return raw;
}

long depth_of(const std::string& dir)
{
  return dir.empty() ? 0 : 1 + static_cast<long>(std::count(dir.begin(), dir.end(), '/'));
}

// The git tree object id of `folder`, whose sub-folders' ids are known; nullopt when empty.
std::optional<std::string> tree_oid(const Commit& commit, const std::string& folder)
{
  // Git sorts a tree's entries by name, a folder's name as if it ended with '/'.
  std::vector<std::pair<std::string, std::string>> entries; // sort key, entry bytes
  const auto prefix = folder.empty() ? std::string{} : folder + "/";
  for_each_child(commit.files, folder, [&](std::string_view name, bool is_directory) {
    const std::string path = prefix + std::string(name);
    const auto& oid = is_directory ? commit.directory_oids.at(path) : commit.files.at(path).oid;
    std::string bytes = (is_directory ? "40000 " : "100644 ") + std::string(name);
    bytes += '\0';
    bytes += hex_to_raw(oid);
    entries.emplace_back(std::string(name) + (is_directory ? "/" : ""), std::move(bytes));
  });
  if (entries.empty() && !folder.empty())
    return std::nullopt;
  std::sort(entries.begin(), entries.end());
  std::string content;
  for (const auto& [key, bytes] : entries)
    content += bytes;
  return hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha1,
                                    "tree " + std::to_string(content.size()) + std::string(1, '\0') + content);
}

} // namespace

std::string parent_dir(const std::string& path)
{
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string{} : path.substr(0, slash);
}

std::string base_name(const std::string& path)
{
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void for_each_child(const FileMap& files, const std::string& folder,
                    const std::function<void(std::string_view name, bool is_directory)>& visit)
{
  const auto prefix = folder.empty() ? std::string{} : folder + "/";
  auto it = files.lower_bound(prefix);
  while (it != files.end() && it->first.compare(0, prefix.size(), prefix) == 0) {
    const std::string_view rest = std::string_view(it->first).substr(prefix.size());
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos) {
      visit(rest, false);
      ++it;
      continue;
    }
    const auto name = rest.substr(0, slash);
    visit(name, true);
    // Past this sub-folder's contents: a few steps for a small one (a MODULE folder holds a
    // handful of files), else a search ('0' is the character after '/').
    const auto inside = prefix.size() + name.size() + 1; // the length of "<folder>/<name>/"
    const std::string_view sub(it->first.data(), inside);
    int steps = 0;
    while (it != files.end() && steps < 8 && it->first.size() > inside
           && std::string_view(it->first).substr(0, inside) == sub) {
      ++it;
      ++steps;
    }
    if (steps == 8)
      it = files.lower_bound(prefix + std::string(name) + '0');
  }
}

std::size_t count_children(const FileMap& files, const std::string& folder)
{
  std::size_t count = 0;
  for_each_child(files, folder, [&](std::string_view, bool) { ++count; });
  return count;
}

void update_directory_oids(Commit& commit, const std::vector<std::string>& changed)
{
  std::set<std::string> dirty;
  for (const auto& path : changed) {
    auto dir = parent_dir(path);
    while (dirty.insert(dir).second && !dir.empty())
      dir = parent_dir(dir);
  }
  std::vector<std::string> folders(dirty.begin(), dirty.end());
  std::stable_sort(folders.begin(), folders.end(),
                   [](const auto& a, const auto& b) { return depth_of(a) > depth_of(b); });
  for (const auto& folder : folders) {
    if (auto oid = tree_oid(commit, folder))
      commit.directory_oids[folder] = std::move(*oid);
    else
      commit.directory_oids.erase(folder);
  }
}

void compute_directory_oids(Commit& commit)
{
  commit.directory_oids.clear();
  std::vector<std::string> all;
  all.reserve(commit.files.size());
  for (const auto& [path, entry] : commit.files)
    all.push_back(path);
  update_directory_oids(commit, all);
}

void check_files_are_not_folders(const FileMap& files, const std::vector<std::string>& added)
{
  const auto refuse = [](const std::string& dir, const std::string& path) {
    throw HubError(400, "Invalid commit: '" + dir + "' is a file and cannot also be a directory (" + path + ")");
  };
  for (const auto& path : added) {
    for (auto dir = parent_dir(path); !dir.empty(); dir = parent_dir(dir)) {
      if (files.count(dir))
        refuse(dir, path);
    }
    const auto below = files.lower_bound(path + "/");
    if (below != files.end() && below->first.rfind(path + "/", 0) == 0)
      refuse(path, below->first);
  }
}

} // namespace testhub
