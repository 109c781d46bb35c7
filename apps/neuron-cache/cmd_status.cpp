// `neuron-cache status`: what the local compile cache holds, per compiler version, with
// stale locks and last use; which entries the repo has too, when asked (--repo).
#include "commands.hpp"

#include <hubcache/compilecache/cleanup.hpp>
#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/status.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/compilecache/usage.hpp>
#include <hubcache/error.hpp>

#include <chrono>

namespace neuron_cache {

namespace {

namespace fs_kind = hubcache::util;

std::string kind_name(fs_kind::FileSystemKind kind)
{
  switch (kind) {
  case fs_kind::FileSystemKind::local_disk: return "local-disk";
  case fs_kind::FileSystemKind::shared: return "shared";
  case fs_kind::FileSystemKind::memory: return "memory";
  case fs_kind::FileSystemKind::other: return "other";
  }
  return "other";
}

// "nfs, shared between hosts: cleanup leaves locks younger than an hour".
std::string file_system_text(const fs_kind::FileSystemType& type)
{
  switch (type.kind) {
  case fs_kind::FileSystemKind::shared:
    return type.name + ", shared between hosts: cleanup leaves locks younger than an hour";
  case fs_kind::FileSystemKind::memory: return type.name + ", in memory: gone at the next boot";
  case fs_kind::FileSystemKind::local_disk: return type.name + ", a local disk";
  case fs_kind::FileSystemKind::other: break;
  }
  return type.name;
}

namespace cc = hubcache::compilecache;

// Human columns, in the order; other states (flags-mismatch, symlinks leaving
// the root) are summed under OTHER.
const std::vector<std::pair<std::string, std::string>> k_columns = {
  {"success", "SUCCESS"},       {"failed", "FAILED"},           {"locked", "LOCKED"},
  {"incomplete", "INCOMPLETE"}, {"exported-model", "EXPORTED"}, {"registry", "REGISTRY"}};

std::size_t other_entries(const std::map<std::string, cc::Tally>& by_state)
{
  std::size_t count = 0;
  for (const auto& [state, tally] : by_state) {
    bool listed = false;
    for (const auto& column : k_columns) {
      listed = listed || column.first == state;
    }
    if (!listed) {
      count += tally.entries;
    }
  }
  return count;
}

std::string day_of(const std::optional<std::int64_t>& seconds)
{
  return seconds ? cc::iso_time(*seconds).substr(0, 10) : "-";
}

nlohmann::json time_json(const std::optional<std::int64_t>& seconds)
{
  return seconds ? nlohmann::json(cc::iso_time(*seconds)) : nlohmann::json();
}

nlohmann::json tallies_json(const std::map<std::string, cc::Tally>& by_state)
{
  auto data = nlohmann::json::object();
  for (const auto& [state, tally] : by_state) {
    data[state] = {{"entries", tally.entries}, {"bytes", tally.bytes}};
  }
  return data;
}

nlohmann::json locks_json(const std::vector<cc::LockInfo>& locks, std::int64_t now)
{
  auto data = nlohmann::json::array();
  for (const auto& lock : locks) {
    data.push_back(
      {{"path", lock.path}, {"modified", cc::iso_time(lock.modified)}, {"age_seconds", now - lock.modified}});
  }
  return data;
}

std::string source_text(const cc::CacheStatus& status, const cc::UsageRecords& records)
{
  std::string text = "Last use from: ";
  std::vector<std::string> parts;
  auto count = [&](const std::string& source) {
    auto it = status.last_use_sources.find(source);
    return it == status.last_use_sources.end() ? std::size_t{0} : it->second;
  };
  parts.push_back("records of neuron-cache (" + std::to_string(count("record")) + " entries; "
                  + printable_path(records.file()) + ")");
  if (status.access_times.recorded) {
    parts.push_back("file access times (" + std::to_string(count("atime")) + "; the mount uses "
                    + status.access_times.mount_option + ")");
  } else {
    parts.push_back("no access times (the mount uses " + status.access_times.mount_option + ")");
  }
  parts.push_back("file modification times (" + std::to_string(count("mtime")) + ")");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    text += (i == 0 ? "" : ", ") + parts[i];
  }
  return text;
}

// With --repo: how many of the local entries the repo holds too (a warning, not a failure,
// when it cannot be asked).
struct RepoPresence {
  nlohmann::json data;
  std::string line;
};

RepoPresence repo_presence(Invocation& invocation, const cc::Scan& scan, cc::CacheStatus& status)
{
  RepoPresence presence;
  auto resolved = resolve_repo(invocation);
  presence.data = {
    {"repo", resolved.spec.canonical()}, {"reachable", false}, {"error", nullptr}, {"entries_in_repo", nullptr}};
  try {
    auto repo = open_existing_repository(invocation, resolved);
    auto present = cc::entries_in_repo(scan, cc::list_remote_for(*repo, scan));
    cc::add_repo_presence(status, present, scan);
    presence.data["reachable"] = true;
    presence.data["entries_in_repo"] = present.size();
    presence.line = std::to_string(present.size()) + " of " + std::to_string(status.total.entries)
                    + " entries are also in " + repo->spec() + " (same files and sizes)";
  } catch (const hubcache::Error& error) {
    presence.data["error"] = error.what();
    invocation.out().warning("cannot tell which entries " + resolved.spec.canonical() + " has: " + error.what());
  }
  return presence;
}

// One row (and one JSON object) per compiler version.
std::pair<Output::Table, nlohmann::json> versions_of(const cc::CacheStatus& status, bool ask_repo)
{
  Output::Table table;
  table.headers = {"VERSION"};
  for (const auto& column : k_columns) {
    table.headers.push_back(column.second);
  }
  table.headers.insert(table.headers.end(), {"OTHER", "SIZE", "OLDEST USE", "NEWEST USE"});
  if (ask_repo) {
    table.headers.push_back("IN REPO");
  }
  table.right_aligned = {false, true, true, true, true, true, true, true, true};
  auto versions = nlohmann::json::array();
  for (const auto& version : status.versions) {
    std::vector<std::string> row = {version.name};
    for (const auto& column : k_columns) {
      auto it = version.by_state.find(column.first);
      row.push_back(std::to_string(it == version.by_state.end() ? 0 : it->second.entries));
    }
    row.push_back(std::to_string(other_entries(version.by_state)));
    row.push_back(human_size(version.total.bytes));
    row.push_back(day_of(version.oldest_use));
    row.push_back(day_of(version.newest_use));
    if (ask_repo) {
      row.push_back(version.entries_in_repo ? std::to_string(*version.entries_in_repo) : "?");
    }
    table.rows.push_back(std::move(row));
    versions.push_back({
      {"name", version.name},
      {"compiler_version", version.compiler_version},
      {"entries", version.total.entries},
      {"bytes", version.total.bytes},
      {"files", version.files},
      {"by_state", tallies_json(version.by_state)},
      {"oldest_use", time_json(version.oldest_use)},
      {"newest_use", time_json(version.newest_use)},
      {"last_use_sources", version.last_use_sources},
      {"entries_in_repo", version.entries_in_repo ? nlohmann::json(*version.entries_in_repo) : nlohmann::json()},
    });
  }
  return {std::move(table), std::move(versions)};
}

// The locks and odd items under the table, each with what to do about it.
std::string status_notes(const cc::CacheStatus& status, std::int64_t now)
{
  std::string human;
  if (!status.stale_locks.empty()) {
    human +=
      "\nStale locks (no neuronx-cc process runs on this host): " + std::to_string(status.stale_locks.size()) + "\n";
    for (std::size_t i = 0; i < status.stale_locks.size() && i < 20; ++i) {
      human += "  " + status.stale_locks[i].path + " ("
               + cc::format_age(std::max<std::int64_t>(0, now - status.stale_locks[i].modified)) + " old)\n";
    }
    if (status.stale_locks.size() > 20) {
      human += "  ... and " + std::to_string(status.stale_locks.size() - 20) + " more (see --json)\n";
    }
    human += "Remove them with: neuron-cache cleanup\n";
  }
  if (!status.live_locks.empty()) {
    human += "\n" + std::to_string(status.live_locks.size())
             + " locks, held by the neuronx-cc process running on this host (or left by an earlier one).\n";
  }
  if (status.skipped > 0) {
    human += "\n" + std::to_string(status.skipped) + (status.skipped == 1 ? " other item" : " other items")
             + " (temp files, odd names) not part of any entry; 'neuron-cache synchronize --dry-run' lists them.\n";
  }
  return human;
}

std::string status_human(const cc::CacheRoot& root, const cc::CacheStatus& status, const cc::UsageRecords& records,
                         const Output::Table& table, const std::string& repo_line, std::int64_t now)
{
  std::string human = "Cache: " + printable_path(root.path) + " (" + cc::to_string(root.source) + ")\n";
  human += "File system: " + file_system_text(status.file_system) + "\n";
  human += "Total: " + human_size(status.total.bytes) + " in " + std::to_string(status.files) + " files, "
           + std::to_string(status.total.entries) + " entries, " + std::to_string(status.versions.size())
           + (status.versions.size() == 1 ? " compiler version\n" : " compiler versions\n");
  if (!status.by_state.empty()) {
    std::string states;
    for (const auto& [state, tally] : status.by_state) {
      states += (states.empty() ? "" : ", ") + state + " " + std::to_string(tally.entries) + " ("
                + human_size(tally.bytes) + ")";
    }
    human += "By state: " + states + "\n";
  }
  human += source_text(status, records) + "\n";
  if (!status.versions.empty()) {
    human += "\n" + format_table(table);
  }
  if (!repo_line.empty()) {
    human += "\n" + repo_line + "\n";
  }
  return human + status_notes(status, now);
}

int run_status(Invocation& invocation)
{
  auto start = std::chrono::steady_clock::now();
  bool ask_repo = invocation.has("repo") || invocation.has("repo-id");
  auto root = cc::resolve_cache_root(invocation.value("cache-dir"), invocation.env());
  cc::FlagsMemo flags_memo(cc::FlagsMemo::default_path(root.path, invocation.env()));
  auto scan = cc::scan(root.path, {}, &flags_memo);
  flags_memo.save();
  auto access = cc::access_time_mode(root.path);
  cc::UsageRecords records(cc::UsageRecords::default_path(root.path, invocation.env()));
  auto status = cc::cache_status(scan, records, access, cc::compiler_running());
  // Status records what it sees: access times move (a read, a copy), records stay.
  cc::record_scan(records, scan, access.recorded);
  records.save();
  auto now = cc::unix_now();
  RepoPresence presence;
  if (ask_repo) {
    presence = repo_presence(invocation, scan, status);
  }
  auto [table, versions] = versions_of(status, ask_repo);

  nlohmann::json last_use = {
    {"access_times", access.recorded}, {"mount_option", access.mount_option}, {"records_file", records.file().string()},
    {"records", records.size()},       {"sources", status.last_use_sources},
  };
  nlohmann::json data = {
    {"cache_dir", root.path.string()},
    {"cache_dir_source", cc::to_string(root.source)},
    {"file_system", {{"name", status.file_system.name}, {"kind", kind_name(status.file_system.kind)}}},
    {"total_bytes", status.total.bytes},
    {"total_files", status.files},
    {"entries", status.total.entries},
    {"by_state", tallies_json(status.by_state)},
    {"versions", versions},
    {"last_use", last_use},
    {"compiler_running", status.compiler_running},
    {"stale_locks", locks_json(status.stale_locks, now)},
    {"live_locks", locks_json(status.live_locks, now)},
    {"skipped", status.skipped},
    {"repo", presence.data},
    {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()},
  };
  invocation.out().result(status_human(root, status, records, table, presence.line, now), data,
                          std::to_string(status.total.bytes));
  return k_exit_ok;
}

} // namespace

CommandSpec make_status_command()
{
  CommandSpec command;
  command.name = "status";
  command.summary = "Show what the local Neuron compile cache holds: entries by state, sizes, last use, stale locks.";
  command.description =
    "Per compiler version (neuronxcc-*): entries by state (success, failed, locked, incomplete, exported\n"
    "model, registry), size, oldest and newest use; locks no compiler holds (no neuronx-cc process runs\n"
    "on this host). Works offline: the repo is only consulted with --repo (or --repo-id).\n"
    "Last use is the newest of: what neuron-cache recorded (pull, add, status, synchronize), the access\n"
    "time of the entry's files when the mount records access times, and their modification time. The\n"
    "records live in ${XDG_STATE_HOME:-~/.local/state}/neuron-cache/, outside the cache.\n"
    "-q prints the total size in bytes.";
  command.options = {
    cache_dir_option(),
    {"",
     "repo",
     ValueKind::flag,
     "",
     "Also tell which entries the cache repo in effect holds (needs the repo).",
     {},
     {}},
    repo_id_option(),
    token_option(),
  };
  command.examples = {"neuron-cache status", "neuron-cache status --cache-dir /fsx/neuron-cache --json",
                      "neuron-cache status --repo", "du_bytes=$(neuron-cache status -q)"};
  command.run = run_status;
  return command;
}

} // namespace neuron_cache
