// `neuron-cache synchronize` (and `push`): the local compile cache into the cache repo.
#include "sync_shared.hpp"

#include "progress_bar.hpp"
#include "pull_stops.hpp"
#include "transfer_report.hpp"
#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <future>
#include <hubcache/compilecache/cleanup.hpp>
#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/local_transfer.hpp>
#include <hubcache/compilecache/store_copy.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/compilecache/usage.hpp>
#include <hubcache/error.hpp>
#include <hubcache/hub/config.hpp>
#include <hubcache/util/environment.hpp>
#include <hubcache/util/process.hpp>
#include <hubcache/util/text.hpp>
#include <map>
#include <registry/lookup.hpp>
#include <set>
#include <unistd.h>

namespace neuron_cache {

namespace {

namespace cc = hubcache::compilecache;

// Local cleanup asked for before a push, by the same engine as `cleanup`. Never while a
// compiler runs on this host: it may own the locks and be about to replace a failed entry.
nlohmann::json clean_local_cache(Invocation& invocation, cc::Scan& scan, const std::filesystem::path& root,
                                 cc::FlagsMemo& flags_memo)
{
  nlohmann::json cleaned = {{"failed", nlohmann::json::array()}, {"locks", nlohmann::json::array()}};
  bool clean_failed = invocation.has("clean-failed");
  auto stale_minutes = invocation.integer("clear-stale-locks", 0);
  if (!clean_failed && !stale_minutes) {
    return cleaned;
  }
  bool dry_run = invocation.has("dry-run");
  if (cc::compiler_running()) {
    invocation.out().warning("a neuronx-cc process is running on this host: the local cache is not cleaned");
    cleaned["skipped"] = "compiler running";
    return cleaned;
  }
  cc::CleanupOptions options;
  options.failed = clean_failed;
  options.stale_locks = stale_minutes.has_value();
  options.stale_lock_age = stale_minutes.value_or(0) * 60;
  options.now = cc::unix_now();
  auto plan = cc::plan_cleanup(scan, cc::UsageRecords(), options);
  auto note = [&](const cc::Removal& removal, const std::string& verb) {
    if (removal.reason == "failed") {
      cleaned["failed"].push_back(removal.path);
      invocation.out().info(verb + " failed entry " + removal.path);
    } else if (removal.reason == "stale-lock") {
      cleaned["locks"].push_back(removal.path);
      invocation.out().info(verb + " stale lock " + removal.path);
    }
  };
  for (const auto& kept : plan.kept) {
    invocation.out().info("Kept " + kept.path + ": " + skip_detail(kept));
  }
  if (dry_run) {
    for (const auto& removal : plan.removals) {
      note(removal, "Dry run: would remove");
    }
    return cleaned;
  }
  auto report = cc::apply_cleanup(scan, plan);
  for (const auto& removal : report.removed) {
    note(removal, "Removed");
  }
  for (const auto& error : report.errors) {
    invocation.out().warning("could not remove " + error.path + ": " + skip_detail(error));
  }
  scan = cc::scan(root, followed_directories(invocation), &flags_memo);
  return cleaned;
}

// 7400 -> "7,400".
std::string grouped(std::uint64_t count)
{
  auto digits = std::to_string(count);
  std::string text;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      text += ',';
    }
    text += digits[i];
  }
  return text;
}

// A push the commit quota stopped: what was published, and when to run again.
std::string stopped_line(const cc::PushStopped& stopped)
{
  auto retry_at = std::chrono::system_clock::to_time_t(stopped.retry_at);
  std::tm local{};
  localtime_r(&retry_at, &local);
  char when[32];
  std::strftime(when, sizeof when, stopped.wait >= std::chrono::hours(20) ? "%Y-%m-%d %H:%M" : "%H:%M", &local);
  return "published " + grouped(stopped.entries_published) + " of " + grouped(stopped.entries_total) + " entries; "
         + (stopped.quota.empty() ? std::string("the Hub's commit quota is spent") : "the Hub allows " + stopped.quota)
         + ": run again after " + when;
}

nlohmann::json stopped_json(const cc::PushStopped& stopped)
{
  auto retry_at = std::chrono::system_clock::to_time_t(stopped.retry_at);
  std::tm utc{};
  gmtime_r(&retry_at, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return {{"reason", "commit-quota"},
          {"quota", stopped.quota.empty() ? nlohmann::json() : nlohmann::json(stopped.quota)},
          {"entries_published", stopped.entries_published},
          {"entries_total", stopped.entries_total},
          {"wait_seconds", stopped.wait.count()},
          {"retry_after", when},
          {"message", stopped.message}};
}

// The push's summary, JSON document and diagnostics.
int print_push(Invocation& invocation, const cc::CacheRoot& root, hubcache::storage::Repository& repo, bool dry_run,
               const nlohmann::json& cleaned, const cc::TransferReport& result, double seconds)
{
  Transfer transfer{"push", dry_run, repo.spec(), root.path.string(), root.source, result, seconds};
  std::string human;
  std::string sizes = " (" + count_of(result.files_planned, "file") + ", " + human_size(result.bytes_planned) + ")";
  if (dry_run) {
    human = "Dry run: would push " + count_of(result.planned.size(), "entry", "entries") + sizes + " to " + repo.spec();
  } else if (result.files_planned == 0) {
    human = "Nothing to push: " + repo.spec() + " already has every complete entry of " + root.path.string();
  } else {
    // Only the Hub has commits: a directory or S3 repo is at a new revision.
    bool hub = parse_user_repo(repo.spec()).kind == hubcache::storage::RepoKind::hub;
    human = "Pushed " + count_of(result.planned.size(), "entry", "entries") + sizes + " to " + repo.spec();
    if (hub) {
      human += result.commits > 1 ? " in " + count_of(result.commits, "commit") : std::string(" in one commit");
    }
    if (result.revision) {
      human += (hub ? " " : " at revision ") + result.revision->substr(0, 12);
    }
  }
  human += transfer.summary_tail("push");

  auto data = transfer.to_json();
  data["committed"] = result.committed;
  data["files_hashed"] = result.files_hashed;
  data["cleaned"] = cleaned;
  data["commits"] = result.commits;
  add_xet_figures(result.xet, human, data);
  for (const auto& warning : result.warnings) {
    invocation.out().warning(warning);
  }
  data["entries_left"] = result.quota ? result.quota->entries_left.size() : 0;
  if (auto code = report_interrupted_publish(invocation, result, human, data)) {
    return *code;
  }
  if (result.quota) {
    // Nothing partial is left: the entries published are whole, the rest waits for a re-run.
    data["stopped"] = stopped_json(*result.quota);
    if (invocation.out().format() == Format::json) {
      invocation.out().result(human, data, {});
    }
    invocation.out().error_line(stopped_line(*result.quota), "run the same command again then: it resumes");
    return k_exit_error;
  }
  invocation.out().result(human, data, lines(result.planned));
  report_skips(invocation.out(), result.skipped);
  return k_exit_ok;
}

} // namespace

std::optional<int> report_interrupted_publish(Invocation& invocation, const cc::TransferReport& report,
                                              const std::string& human, nlohmann::json& data)
{
  if (report.interrupted_by == 0) {
    return std::nullopt;
  }
  // Stopped at the store's next safe point: what was published is whole, a re-run finishes.
  auto published = report.transferred.size();
  auto total = std::max(report.entries_planned, published);
  data["entries_left"] = total - published;
  data["stopped"] = {{"reason", "interrupted"}, {"entries_published", published}, {"entries_total", total}};
  if (invocation.out().format() == Format::json) {
    invocation.out().result(human, data, {});
  }
  invocation.out().notice("Interrupted: " + std::to_string(published) + " of " + std::to_string(total)
                          + " entries published; run the same command to finish.");
  return k_exit_signal_base + report.interrupted_by;
}

int run_push(Invocation& invocation, const cc::CacheRoot& root, hubcache::storage::Repository& repo)
{
  auto start = std::chrono::steady_clock::now();
  bool dry_run = invocation.has("dry-run");
  cc::LocalCache local(root.path, invocation.env(), dry_run);
  // The repo's head is read while the local cache is scanned: one is the network (or, for
  // a directory repo, a walk of its tree), the other the local disk.
  auto head_reader = std::async(std::launch::async, [&repo] { return repo.revision(); });
  // Flags files found good by an earlier scan are not read again.
  auto scan = cc::scan(root.path, followed_directories(invocation), &local.flags_memo());
  auto cleaned = clean_local_cache(invocation, scan, root.path, local.flags_memo());
  cc::record_scan(local.usage(), scan, cc::access_time_mode(root.path).recorded);
  // What the scan learnt is kept even when the push fails.
  local.save();

  std::optional<ProgressBar> bar;
  cc::PushSteps steps;
  steps.dry_run = dry_run;
  steps.listed = [&] { warn_skipped_paths(invocation.out(), repo); };
  steps.refused = [&](const hubcache::AuthError& error) {
    invocation.out().warning(std::string("this push would fail: ") + error.what());
  };
  steps.planned = [&](const std::vector<TransferEntry>& entries) {
    detail_entries(invocation.out(), dry_run ? "would push" : "push", entries);
    if (!dry_run) {
      bar.emplace(invocation.out(), "Uploading");
    }
  };
  steps.progress = [&](const hubcache::util::TransferProgress& progress) { bar->update(progress); };
  auto result = cc::push_scan(repo, local, std::move(scan), head_reader.get(), steps);
  if (bar) {
    bar->finish();
  }
  local.save();
  return print_push(invocation, root, repo, dry_run, cleaned, result, seconds_since(start));
}

} // namespace neuron_cache
