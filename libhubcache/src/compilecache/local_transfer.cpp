#include "hubcache/compilecache/local_transfer.hpp"

#include "hubcache/compilecache/push.hpp"
#include "hubcache/compilecache/usage.hpp"
#include "hubcache/util/process.hpp"

#include <future>
#include <memory>

namespace hubcache::compilecache {

namespace {

// The answer of an early Repository::check_writable: a refusal stops a push before it
// hashes anything; a dry run hears of it and goes on planning.
void check_write_access(std::future<void>& write_check, const PushSteps& steps)
{
  try {
    write_check.get();
  } catch (const AuthError& error) {
    if (!steps.dry_run) {
      throw;
    }
    if (steps.refused) {
      steps.refused(error);
    }
  }
}

// The cache's pull lock, unless `plan` installs nothing (or is a dry run's); a pull that
// waited for another replaces `plan` with a new one.
std::unique_ptr<PullLock> lock_for_pull(storage::Repository& repo, LocalCache& local, const PullOptions& options,
                                        PullPlan& plan, const PullSteps& steps)
{
  if (options.dry_run || plan.installs.empty()) {
    return nullptr;
  }
  bool waited = false;
  auto lock = std::make_unique<PullLock>(local.root(), [&](const PullLockHolder& holder) {
    waited = true;
    if (steps.waiting) {
      steps.waiting(holder);
    }
  });
  if (waited) {
    plan = plan_pull(repo, local.root(), local.digests(), options);
  }
  return lock;
}

} // namespace

TransferReport push_scan(storage::Repository& repo, LocalCache& local, Scan scan,
                         const std::optional<std::string>& head, const PushSteps& steps)
{
  auto snapshot = local.snapshot(repo.spec());
  auto fingerprint = publish_fingerprint(scan);
  if (snapshot.in_sync(head, fingerprint)) {
    auto report = dry_run_report(plan_already_pushed(scan));
    report.revision = head;
    return report;
  }
  auto& digests = local.digests();
  digests.set_etag_part_sizes(repo.etag_part_sizes());
  auto write_check = std::async(std::launch::async, [&repo] { repo.check_writable(); });
  auto versions = publishable_versions(scan);
  auto remembered = snapshot.files(head, versions);
  bool listed = !remembered;
  auto remote = remembered ? std::move(*remembered) : list_remote_for(repo, scan);
  complete_remote_digests(repo, remote, scan);
  if (steps.listed) {
    steps.listed();
  }
  check_write_access(write_check, steps);
  auto plan = plan_push(scan, remote, digests);
  // The plan holds what the rest needs: the scan (every file of the cache, built on the
  // walk's threads) goes before the uploads start.
  scan = {};
  util::release_free_memory();
  TransferReport report;
  if (steps.dry_run) {
    report = dry_run_report(std::move(plan));
    report.revision = head;
    if (steps.planned) {
      steps.planned(report.entries);
    }
  } else {
    if (steps.planned) {
      steps.planned(transfer_entries(plan));
    }
    // Ctrl-C or SIGTERM ends the push at the store's next safe point (between commits or
    // batches), with what landed whole: TransferReport::interrupted_by.
    util::InterruptScope interrupts;
    report = push(repo, std::move(plan), digests, steps.progress, head);
    if (report.revision && (listed || report.committed)) {
      snapshot.save(*report.revision, versions, remote, report.committed_files);
    }
    if (report.revision) {
      snapshot.mark_in_sync(*report.revision, fingerprint);
    }
  }
  report.files_hashed = digests.hashed();
  return report;
}

TransferReport pull_into(storage::Repository& repo, LocalCache& local, const PullOptions& options,
                         const PullSteps& steps)
{
  auto& digests = local.digests();
  auto revision = repo.revision(); // the report names what the pull read
  auto plan = plan_pull(repo, local.root(), digests, options);
  if (!options.dry_run && steps.confirm) {
    steps.confirm(plan);
  }
  auto lock = lock_for_pull(repo, local, options, plan, steps);
  TransferReport report;
  if (options.dry_run) {
    report = dry_run_report(std::move(plan));
    if (steps.planned) {
      steps.planned(report.entries);
    }
  } else {
    auto entries = transfer_entries(plan);
    if (steps.planned) {
      steps.planned(entries);
    }
    report = apply_pull(repo, local.root(), std::move(plan), digests, options, steps.progress);
    report.entries = std::move(entries);
  }
  report.revision = revision;
  if (steps.finished) {
    steps.finished(report);
  }
  // An entry pulled onto this host is one somebody is about to use.
  auto now = unix_now();
  for (const auto& path : report.transferred) {
    local.usage().record(path, now);
  }
  local.save();
  return report;
}

} // namespace hubcache::compilecache
