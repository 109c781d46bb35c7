#include "registry/graphs.hpp"

#include <hubcache/error.hpp>
#include <hubcache/util/thread_pool.hpp>

#include <algorithm>
#include <tuple>

namespace registry {

std::string compiler_version_of(const std::string& compiler_dir)
{
  return compiler_dir.starts_with(k_compiler_dir_prefix) ? compiler_dir.substr(k_compiler_dir_prefix.size())
                                                         : compiler_dir;
}

GraphMap map_graphs(const RegistryIndex& index, hubcache::storage::Repository& repo, unsigned parallelism)
{
  // (compiler dir, hash) -> entry: copies in several registry versions name the same graphs.
  std::map<std::pair<std::string_view, std::string_view>, RegisteredEntry> by_key;
  for (const auto& path : index.entries) {
    auto& entry = by_key[{path.compiler_dir, path.file_hash}];
    if (entry.paths.empty()) {
      entry.compiler_dir = path.compiler_dir;
      entry.hash = path.file_hash;
      auto record = attribution_path(path.compiler_version, path.file_hash);
      if (index.attribution_records.count(record) != 0U) {
        entry.record = record;
      }
      if (auto traced = path.compiler_dir + "/MODULE_" + path.file_hash; index.module_sizes.count(traced) != 0U) {
        entry.graphs.push_back(traced);
      }
    }
    entry.paths.push_back(path.path);
  }
  GraphMap map;
  map.entries.reserve(by_key.size());
  for (auto& [key, entry] : by_key) {
    map.entries.push_back(std::move(entry));
  }
  // A record that cannot be read leaves its entry's graphs unknown: that compiler dir's
  // graphs are then never taken for unregistered (cleanup --repo would remove them).
  std::vector<char> unreadable(map.entries.size(), 0);
  hubcache::util::parallel_for(map.entries.size(), std::max(1U, parallelism), [&](std::size_t i) {
    auto& entry = map.entries[i];
    if (entry.record.empty()) {
      return;
    }
    try {
      for (auto& module : attributed_modules(repo.read_file(entry.record), entry.record, entry.compiler_dir)) {
        if (index.module_sizes.count(module) != 0U
            && std::find(entry.graphs.begin(), entry.graphs.end(), module) == entry.graphs.end()) {
          entry.graphs.push_back(std::move(module));
        }
      }
    } catch (const hubcache::Error&) {
      unreadable[i] = 1;
    }
  });
  std::set<std::string_view> named;
  for (std::size_t i = 0; i < map.entries.size(); ++i) {
    const auto& entry = map.entries[i];
    if (entry.graphs.empty() || unreadable[i] != 0) {
      map.unattributed_dirs.insert(entry.compiler_dir);
    }
    named.insert(entry.graphs.begin(), entry.graphs.end());
  }
  for (const auto& [folder, bytes] : index.module_sizes) {
    if (named.count(folder) == 0U) {
      map.unregistered.push_back(folder);
    }
  }
  return map;
}

} // namespace registry
