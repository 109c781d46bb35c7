#include "hubcache/compilecache/status.hpp"

#include <set>
#include <sys/stat.h>
#include <unordered_map>

namespace hubcache::compilecache {

std::string category_of(const Entry& entry)
{
  switch (entry.kind) {
  case EntryKind::module: return to_string(entry.state);
  case EntryKind::exported_model: return "exported-model";
  case EntryKind::registry: return "registry";
  }
  return "incomplete";
}

namespace {

void add(Tally& tally, std::uint64_t bytes)
{
  ++tally.entries;
  tally.bytes += bytes;
}

} // namespace

CacheStatus cache_status(const Scan& scan, const UsageRecords& records, const AccessTimeMode& access_times,
                         bool compiler_running)
{
  CacheStatus status;
  status.root = scan.root;
  status.file_system = util::file_system_of(scan.root);
  status.access_times = access_times;
  status.compiler_running = compiler_running;
  // Non-entries only: entries not publishable are in `skipped` too, and the root lock is libneuronxla's own.
  std::set<std::string> entry_paths;
  for (const auto& entry : scan.entries) {
    entry_paths.insert(entry.path);
  }
  for (const auto& item : scan.skipped) {
    status.skipped += entry_paths.contains(item.path) || item.path == "lock" ? 0 : 1;
  }
  std::map<std::string, std::size_t> index;
  for (const auto& name : scan.versions) {
    index[name] = status.versions.size();
    VersionStatus version;
    version.name = name;
    version.compiler_version = name.substr(k_version_prefix.size());
    status.versions.push_back(std::move(version));
  }
  for (const auto& entry : scan.entries) {
    auto name = entry.path.substr(0, entry.path.find('/'));
    auto it = index.find(name);
    if (it == index.end()) {
      continue;
    }
    auto& version = status.versions[it->second];
    auto category = category_of(entry);
    auto bytes = entry.bytes();
    add(version.total, bytes);
    add(version.by_state[category], bytes);
    add(status.total, bytes);
    add(status.by_state[category], bytes);
    version.files += entry.file_count();
    status.files += entry.file_count();
    if (entry.kind != EntryKind::registry) {
      // The registry is an index, rewritten by every add: its times say nothing of use.
      auto use = last_use(entry, records, access_times.recorded);
      version.oldest_use = std::min(version.oldest_use.value_or(use.seconds), use.seconds);
      version.newest_use = std::max(version.newest_use.value_or(use.seconds), use.seconds);
      ++version.last_use_sources[to_string(use.source)];
      ++status.last_use_sources[to_string(use.source)];
    }
    for (const auto& lock : entry.lock_files) {
      struct stat info {};
      LockInfo item{entry.path + "/" + lock.filename().string(), 0};
      if (::lstat(lock.c_str(), &info) == 0) {
        item.modified = info.st_mtim.tv_sec;
      }
      (compiler_running ? status.live_locks : status.stale_locks).push_back(std::move(item));
    }
  }
  return status;
}

std::set<std::string> entries_in_repo(const Scan& scan, const std::vector<storage::RepoFile>& remote)
{
  std::unordered_map<std::string_view, std::uint64_t> sizes;
  sizes.reserve(remote.size());
  for (const auto& file : remote) {
    sizes.emplace(file.path, file.size);
  }
  std::set<std::string> present;
  for (const auto& entry : scan.entries) {
    if (entry.files.empty()) {
      continue;
    }
    bool all = true;
    for (const auto& file : entry.files) {
      auto it = sizes.find(file.path);
      if (it == sizes.end() || it->second != file.size) {
        all = false;
        break;
      }
    }
    if (all) {
      present.insert(entry.path);
    }
  }
  return present;
}

void add_repo_presence(CacheStatus& status, const std::set<std::string>& present, const Scan& scan)
{
  for (auto& version : status.versions) {
    version.entries_in_repo = 0;
  }
  for (const auto& entry : scan.entries) {
    if (!present.contains(entry.path)) {
      continue;
    }
    auto name = entry.path.substr(0, entry.path.find('/'));
    for (auto& version : status.versions) {
      if (version.name == name) {
        ++*version.entries_in_repo;
      }
    }
  }
}

} // namespace hubcache::compilecache
