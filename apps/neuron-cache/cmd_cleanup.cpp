// `neuron-cache cleanup`: removes failed entries and stale locks from the local compile
// cache, and on request incomplete entries, old compiler versions, entries unused for a
// while or least recently used above a size, or everything. optimum-cli's option names
// (--all, --old-versions, --wipe, --dry-run) where it has them.
#include "commands.hpp"
#include "transfer_report.hpp"

#include <hubcache/compilecache/cleanup.hpp>
#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/status.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/compilecache/usage.hpp>
#include <hubcache/error.hpp>

#include <chrono>
#include <iostream>
#include <set>
#include <unistd.h>

namespace neuron_cache {

namespace cc = hubcache::compilecache;

std::int64_t age_option(const Invocation& invocation, const std::string& name)
{
  try {
    return cc::parse_age(*invocation.value(name));
  } catch (const hubcache::InvalidArgument& error) {
    throw UsageError("--" + name + ": " + error.what() + "; " + error.hint());
  }
}

namespace {

std::string count_of(std::size_t count, const std::string& one, const std::string& many)
{
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

// "2 failed entries, 1 stale lock": the removals by reason, in a fixed order.
std::string summary_parts(const std::vector<cc::Removal>& removals, const cc::CleanupOptions& options)
{
  std::map<std::string, std::size_t> count;
  std::size_t version_entries = 0;
  for (const auto& removal : removals) {
    ++count[removal.reason];
    if (removal.kind == "version") {
      version_entries += removal.entries;
    }
  }
  std::vector<std::string> parts;
  auto part = [&](const std::string& reason, const std::string& text) {
    if (count[reason] > 0) {
      parts.push_back(text);
    }
  };
  part("failed", count_of(count["failed"], "failed entry", "failed entries"));
  part("stale-lock", count_of(count["stale-lock"], "stale lock", "stale locks"));
  part("incomplete", count_of(count["incomplete"], "incomplete entry", "incomplete entries"));
  part("old-version", count_of(count["old-version"], "old compiler version", "old compiler versions") + " ("
                        + count_of(version_entries, "entry", "entries") + ")");
  part("older-than", count_of(count["older-than"], "entry", "entries") + " unused for "
                       + cc::format_age(options.older_than.value_or(0)));
  part("max-size", count_of(count["max-size"], "least recently used entry", "least recently used entries"));
  part("leftover", count_of(count["leftover"], "leftover of an interrupted run", "leftovers of interrupted runs"));
  part("wipe", "everything (" + count_of(version_entries, "entry", "entries") + ")");
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    text += (i == 0 ? "" : ", ") + parts[i];
  }
  return text;
}

nlohmann::json removals_json(const std::vector<cc::Removal>& removals)
{
  auto data = nlohmann::json::array();
  for (const auto& removal : removals) {
    data.push_back({
      {"path", removal.path},
      {"kind", removal.kind},
      {"reason", removal.reason},
      {"state", removal.state.empty() ? nlohmann::json() : nlohmann::json(removal.state)},
      {"bytes", removal.bytes},
      {"entries", removal.entries},
      {"last_use", removal.last_use ? nlohmann::json(cc::iso_time(*removal.last_use)) : nlohmann::json()},
      {"last_use_source", removal.last_use_source.empty() ? nlohmann::json() : nlohmann::json(removal.last_use_source)},
    });
  }
  return data;
}

nlohmann::json skipped_json(const std::vector<cc::Skipped>& items)
{
  auto data = nlohmann::json::array();
  for (const auto& item : items) {
    data.push_back({{"path", item.path}, {"reason", skip_reason_name(item.reason)}, {"detail", skip_detail(item)}});
  }
  return data;
}

std::string removal_table(const std::vector<cc::Removal>& removals)
{
  Output::Table table;
  table.headers = {"PATH", "REASON", "SIZE", "LAST USE"};
  table.right_aligned = {false, false, true, false};
  for (const auto& removal : removals) {
    auto reason = removal.reason;
    if (removal.kind == "version") {
      reason += " (" + count_of(removal.entries, "entry", "entries") + ")";
    }
    table.rows.push_back(
      {removal.path, reason, human_size(removal.bytes),
       removal.last_use ? cc::iso_time(*removal.last_use).substr(0, 10) + " (" + removal.last_use_source + ")" : "-"});
  }
  return format_table(table);
}

void check_options(const Invocation& invocation)
{
  if (invocation.has("unregistered")) {
    throw UsageError("--unregistered prunes the repo's graphs: it goes with --repo");
  }
  bool wipe = invocation.has("wipe");
  if (wipe) {
    for (const std::string name :
         {"all", "old-versions", "keep-version", "older-than", "max-size", "ttl", "evict", "stale-lock-age"}) {
      if (invocation.has(name)) {
        throw UsageError("--wipe removes everything: it takes no --" + name);
      }
    }
  } else if (invocation.has("yes")) {
    throw UsageError("--yes confirms --wipe or --repo; other cleanups never ask");
  }
  if (invocation.has("keep-version") && !invocation.has("old-versions")) {
    throw UsageError("--keep-version goes with --old-versions");
  }
  for (const auto& version : invocation.values("keep-version")) {
    if (version.empty()) {
      throw UsageError("--keep-version needs a compiler version, e.g. 2.21 or 2.21.33363.0+82129205");
    }
  }
  if (invocation.has("evict") && (invocation.has("max-size") || invocation.has("ttl"))) {
    throw UsageError(
      "--evict takes its size and time-to-live from NEURON_CC_FLAGS; use --max-size/--ttl instead of it");
  }
  if (invocation.has("ttl") && !invocation.has("max-size")) {
    throw UsageError("--ttl protects recently used entries from --max-size; give --max-size too");
  }
  for (const std::string name : {"older-than", "ttl", "stale-lock-age"}) {
    if (invocation.has(name)) {
      age_option(invocation, name);
    }
  }
  if (invocation.has("max-size")) {
    try {
      cc::parse_size(*invocation.value("max-size"));
    } catch (const hubcache::InvalidArgument& error) {
      throw UsageError(std::string("--max-size: ") + error.what() + "; " + error.hint());
    }
  }
  if (wipe && !invocation.has("yes") && !invocation.has("dry-run") && ::isatty(STDIN_FILENO) == 0) {
    throw UsageError("--wipe asks for confirmation, and standard input is not a terminal: add --yes");
  }
}

// What the options ask for, and the policies they chose, as the JSON report states them.
struct LocalCleanupChoice {
  cc::CleanupOptions options;
  nlohmann::json lock_age;
  nlohmann::json policy = {{"max_size", nullptr}, {"ttl_seconds", nullptr}, {"source", nullptr}};
  nlohmann::json keep_versions = nlohmann::json::array();
};

LocalCleanupChoice choose_cleanup(Invocation& invocation, const std::filesystem::path& root)
{
  LocalCleanupChoice choice;
  auto& options = choice.options;
  options.incomplete = invocation.has("all");
  options.wipe = invocation.has("wipe");
  if (auto home = invocation.env().get("HOME")) {
    options.home = *home;
  }
  options.old_versions = invocation.has("old-versions");
  if (invocation.has("older-than")) {
    options.older_than = age_option(invocation, "older-than");
  }
  if (invocation.has("stale-lock-age")) {
    options.stale_lock_age = age_option(invocation, "stale-lock-age");
    choice.lock_age = {{"seconds", options.stale_lock_age}, {"source", "option"}, {"reason", nullptr}};
  } else {
    // Shared storage, or a container: compilers that may hold a lock can be invisible here.
    auto fallback = cc::default_stale_lock_age(root);
    options.stale_lock_age = fallback.seconds;
    choice.lock_age = {{"seconds", fallback.seconds},
                       {"source", "default"},
                       {"reason", fallback.reason.empty() ? nlohmann::json() : nlohmann::json(fallback.reason)}};
    if (fallback.seconds > 0) {
      invocation.out().info("Locks younger than " + cc::format_age(fallback.seconds) + " are kept: " + fallback.reason
                            + " (--stale-lock-age AGE to change)");
    }
  }
  if (invocation.has("max-size")) {
    options.max_size = cc::parse_size(*invocation.value("max-size"));
    options.ttl = invocation.has("ttl") ? age_option(invocation, "ttl") : cc::k_sdk_default_ttl;
    choice.policy = {{"max_size", *options.max_size}, {"ttl_seconds", options.ttl}, {"source", "option"}};
  } else if (invocation.has("evict")) {
    auto sdk = cc::sdk_eviction_policy(invocation.env());
    options.max_size = sdk.max_size;
    options.ttl = sdk.ttl;
    choice.policy = {
      {"max_size", sdk.max_size},
      {"ttl_seconds", sdk.ttl},
      {"source", sdk.size_source == "default" && sdk.ttl_source == "default" ? "default" : "NEURON_CC_FLAGS"}};
  }
  return choice;
}

// --old-versions keeps the installed compiler's version, or the ones named, each of which
// must match a version the cache has.
void choose_kept_versions(Invocation& invocation, const cc::Scan& scan, const std::filesystem::path& root,
                          LocalCleanupChoice& choice)
{
  auto& options = choice.options;
  options.keep_versions = invocation.values("keep-version");
  if (options.keep_versions.empty()) {
    auto installed = cc::installed_compiler_version();
    if (!installed) {
      throw UsageError("cannot tell which neuronx-cc version is installed (no working neuronx-cc on PATH); "
                       "name the versions to keep with --keep-version V");
    }
    options.keep_versions.push_back(*installed);
    invocation.out().info("Installed compiler: neuronx-cc " + *installed);
  } else {
    std::string known;
    for (const auto& name : scan.versions) {
      known += (known.empty() ? "" : ", ") + name.substr(cc::k_version_prefix.size());
    }
    for (const auto& filter : options.keep_versions) {
      bool found = false;
      for (const auto& name : scan.versions) {
        found = found || cc::version_matches(name.substr(cc::k_version_prefix.size()), filter);
      }
      if (!found) {
        throw UsageError("--keep-version " + hubcache::compilecache::printable(filter)
                         + " matches no compiler version in " + printable_path(root)
                         + " (it has: " + (known.empty() ? "none" : known) + ")");
      }
    }
  }
  choice.keep_versions = options.keep_versions;
}

std::string cleanup_human(const cc::CleanupReport& report, const cc::CleanupPlan& plan,
                          const cc::CleanupOptions& options, const std::filesystem::path& root, bool dry_run)
{
  std::string human;
  if (report.removed.empty()) {
    human = std::string(dry_run ? "Dry run: n" : "N") + "othing to clean up in " + printable_path(root) + ".";
  } else {
    human = std::string(dry_run ? "Would remove" : "Removed") + ":\n" + removal_table(report.removed) + "\n"
            + (dry_run ? "Dry run: would remove " : "Removed ") + summary_parts(report.removed, options) + "; "
            + (dry_run ? "would free " : "freed ") + human_size(report.bytes_freed) + " (cache "
            + human_size(plan.size_before) + " -> "
            + human_size(plan.size_before >= report.bytes_freed ? plan.size_before - report.bytes_freed : 0) + ").";
  }
  if (options.max_size && plan.above_max_size) {
    human += "\nStill above " + human_size(*options.max_size) + ": the other entries were used within the last "
             + cc::format_age(options.ttl) + " (the time-to-live) or are held by a compiler.";
  }
  if (!report.kept.empty()) {
    human += "\nKept:";
    for (std::size_t i = 0; i < report.kept.size() && i < 20; ++i) {
      human += "\n  " + report.kept[i].path + ": " + skip_detail(report.kept[i]);
    }
    if (report.kept.size() > 20) {
      human += "\n  ... and " + std::to_string(report.kept.size() - 20) + " more (see --json)";
    }
  }
  return human;
}

nlohmann::json cleanup_json(const cc::CleanupReport& report, const cc::CleanupPlan& plan,
                            const LocalCleanupChoice& choice, const cc::CacheRoot& root, bool dry_run)
{
  std::size_t locks = 0;
  std::size_t entries = 0;
  std::map<std::string, std::size_t> by_reason;
  for (const auto& removal : report.removed) {
    locks += removal.kind == "lock" ? 1 : 0;
    entries += removal.entries;
    ++by_reason[removal.reason];
  }
  const auto& options = choice.options;
  return {
    {"cache_dir", root.path.string()},
    {"cache_dir_source", cc::to_string(root.source)},
    {"dry_run", dry_run},
    {"removed", removals_json(report.removed)},
    {"removed_by_reason", by_reason},
    {"entries_removed", entries},
    {"locks_removed", locks},
    {"bytes_freed", report.bytes_freed},
    {"size_before", plan.size_before},
    {"size_after", plan.size_before >= report.bytes_freed ? plan.size_before - report.bytes_freed : 0},
    {"above_max_size", plan.above_max_size},
    {"kept", skipped_json(report.kept)},
    {"errors", skipped_json(report.errors)},
    {"compiler_running", options.compiler_running},
    {"stale_lock_age", choice.lock_age},
    {"keep_versions", choice.keep_versions},
    {"policy", choice.policy},
    {"older_than_seconds", options.older_than ? nlohmann::json(*options.older_than) : nlohmann::json()},
  };
}

int run_cleanup(Invocation& invocation)
{
  if (invocation.has("repo")) {
    return run_repo_cleanup(invocation);
  }
  auto start = std::chrono::steady_clock::now();
  check_options(invocation);
  const bool dry_run = invocation.has("dry-run");
  const auto root = cc::resolve_cache_root(invocation.value("cache-dir"), invocation.env());
  auto choice = choose_cleanup(invocation, root.path);
  auto& options = choice.options;

  cc::FlagsMemo flags_memo(cc::FlagsMemo::default_path(root.path, invocation.env()));
  const auto scan = cc::scan(root.path, {}, &flags_memo);
  flags_memo.save();
  if (options.old_versions) {
    choose_kept_versions(invocation, scan, root.path, choice);
  }
  options.compiler_running = cc::compiler_running();
  options.now = cc::unix_now();
  const auto access = cc::access_time_mode(root.path);
  options.use_atime = access.recorded;
  cc::UsageRecords records(cc::UsageRecords::default_path(root.path, invocation.env()));
  const auto plan = cc::plan_cleanup(scan, records, options);

  cc::CleanupReport report;
  if (dry_run) {
    report.removed = plan.removals;
    report.kept = plan.kept;
    report.bytes_freed = plan.bytes;
  } else {
    if (options.wipe && !invocation.has("yes") && !plan.removals.empty()
        && !confirm("Remove everything in " + printable_path(root.path) + " (" + human_size(plan.size_before) + ")?")) {
      // A refusal is a failure like any other: one error line (and the error document under --json).
      throw hubcache::Error("nothing removed: the wipe of " + printable_path(root.path) + " was not confirmed",
                            "add --yes to wipe without asking");
    }
    if (!plan.removals.empty()) {
      report = cc::apply_cleanup(scan, plan);
    } else {
      report.kept = plan.kept;
    }
    cc::forget_removed(scan, report, records);
    if (!records.save()) {
      invocation.out().warning("cannot update the last-use records in " + printable_path(records.file()));
    }
  }

  for (const auto& error : report.errors) {
    invocation.out().warning("not removed: " + error.path + ": " + skip_detail(error));
  }
  std::string quiet;
  for (const auto& removal : report.removed) {
    quiet += removal.path + "\n";
  }
  auto data = cleanup_json(report, plan, choice, root, dry_run);
  data["last_use"] = {{"access_times", access.recorded},
                      {"mount_option", access.mount_option},
                      {"records_file", records.file().string()}};
  data["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  invocation.out().result(cleanup_human(report, plan, options, root.path, dry_run), data, quiet);
  return report.errors.empty() ? k_exit_ok : k_exit_error;
}

// cleanup's options, in help order: what else to remove, then the repo, then the common ones.
std::vector<OptionSpec> cleanup_options()
{
  std::vector<OptionSpec> options = {
    cache_dir_option(),
    {"",
     "all",
     ValueKind::flag,
     "",
     "Also remove incomplete entries (no model.neff or model.done, flags mismatch).",
     {},
     {}},
    {"",
     "old-versions",
     ValueKind::flag,
     "",
     "Also remove every neuronxcc-* directory but the installed compiler's (the version neuronx-cc reports).",
     {},
     {}},
    {"",
     "keep-version",
     ValueKind::text,
     "VERSION",
     "With --old-versions: keep this compiler version instead (full, or a prefix like 2.21).",
     {},
     {},
     true},
    {"",
     "older-than",
     ValueKind::text,
     "AGE",
     "Also remove entries not used for AGE (e.g. 30d); with --repo, entries and registry files the repo last changed "
     "before AGE (commit dates on the Hub, mtimes in a directory, LastModified on S3).",
     {},
     {}},
    {"",
     "max-size",
     ValueKind::text,
     "SIZE",
     "Also evict least recently used entries until the cache fits SIZE (e.g. 100G), sparing those used within --ttl.",
     {},
     {}},
    {"", "ttl", ValueKind::text, "AGE", "With --max-size: never evict an entry used within AGE (default 30d).", {}, {}},
    {"",
     "evict",
     ValueKind::flag,
     "",
     "Apply the Neuron SDK policy: cache_size (bytes) and cache_ttl (days) from NEURON_CC_FLAGS, else 100 GiB and 30 "
     "days.",
     {},
     {}},
    {"",
     "stale-lock-age",
     ValueKind::text,
     "AGE",
     "Treat a lock as stale only when older than AGE. Default: 1h when the cache is on a shared file system "
     "(NFS, EFS, Lustre) or this runs in a container, where other compilers are invisible; 0 otherwise.",
     {},
     {}},
    {"", "wipe", ValueKind::flag, "", "Remove everything in the cache (asks on a terminal unless --yes).", {}, {}},
    {"",
     "repo",
     ValueKind::flag,
     "",
     "Prune the cache repo instead of the local cache: failed entries, with --all incomplete ones, with "
     "--old-versions every version but --keep-version's, with --older-than and --unregistered those; registry entries "
     "naming a removed graph go too; one commit (asks unless --yes).",
     {},
     {}},
    {"",
     "unregistered",
     ValueKind::flag,
     "",
     "With --repo: also remove the graphs no registry entry names (the unregistered graphs 'list' counts).",
     {},
     {}},
    repo_id_option(),
    token_option(),
    max_workers_option(),
    {"y", "yes", ValueKind::flag, "", "Do not ask before --wipe or --repo.", {}, {}},
    {"",
     "dry-run",
     ValueKind::flag,
     "",
     "List what would be removed, with size and reason, and change nothing.",
     {},
     {}},
  };
  return options;
}

} // namespace

CommandSpec make_cleanup_command()
{
  CommandSpec command;
  command.name = "cleanup";
  command.summary =
    "Remove failed entries, stale locks and, on request, old or unused entries from the local compile cache.";
  command.description =
    "By default removes failed entries (model.log without model.neff: the compiler replays the failure\n"
    "instead of compiling) and stale locks (no neuronx-cc process runs on this host), plus leftovers of\n"
    "interrupted runs. Options add more; each entry is removed for the first reason that applies.\n"
    "Safe on a cache in use: an entry with a lock a compiler may hold is never removed; whole entries\n"
    "and whole version directories are renamed to a hidden trash name, checked for a new lock, then\n"
    "deleted; symlinks are removed, never followed. Last use as in 'neuron-cache status'.\n"
    "--evict applies the Neuron SDK's policy: above --cache_size=BYTES from NEURON_CC_FLAGS (default\n"
    "100 GiB), least recently used entries first, but none used within --cache_ttl=DAYS (default 30).\n"
    "AGE: a whole number and a unit s, m, h, d, w (30d, 12h). SIZE: bytes with an optional unit\n"
    "K, M, G, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of 1024), e.g. 100G.";
  command.options = cleanup_options();
  command.examples = {"neuron-cache cleanup --dry-run",
                      "neuron-cache cleanup --all --old-versions",
                      "neuron-cache cleanup --old-versions --keep-version 2.21 --keep-version 2.20",
                      "neuron-cache cleanup --older-than 90d",
                      "neuron-cache cleanup --max-size 200G --ttl 7d",
                      "neuron-cache cleanup --evict --json",
                      "neuron-cache cleanup --wipe --yes",
                      "neuron-cache cleanup --repo --old-versions --keep-version 2.21 --dry-run",
                      "neuron-cache cleanup --repo --older-than 180d --unregistered --yes"};
  command.run = run_cleanup;
  return command;
}

} // namespace neuron_cache
