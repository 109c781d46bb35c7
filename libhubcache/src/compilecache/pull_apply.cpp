#include "hubcache/compilecache/pull.hpp"

#include "pull_local.hpp"

#include "hubcache/compilecache/cleanup.hpp"
#include "hubcache/compilecache/pull_guard.hpp"
#include "hubcache/compilecache/transfer_errors.hpp"
#include "hubcache/error.hpp"
#include "hubcache/layout/names.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/nofollow.hpp"
#include "hubcache/util/process.hpp"
#include "hubcache/util/temp_owner.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

using pull_local::check_root;
using pull_local::local_names;
using pull_local::relative_name;

namespace {

constexpr std::string_view k_staging_name = ".neuron-cache-pull";

// Staging left by a pull that died: its writer provably gone (util/temp_owner.hpp), or
// older than a day. Only names of the pull's own staging form, removed through the root's
// descriptor without following links.
void sweep_stale_staging(const stdfs::path& root)
{
  auto prefix = std::string(k_staging_name) + std::string(util::k_temp_infix);
  util::sweep_abandoned(
    util::open_root_directory(root), [&](std::string_view name) { return name.starts_with(prefix); },
    std::chrono::hours(24));
}

// Makes the folder that will hold `relative` (below `root`) as real directories; throws
// util::LinkOnTheWay when a link is on the way: a pull never writes outside the cache.
void make_parent_directories(const stdfs::path& root, std::string_view relative)
{
  auto slash = relative.rfind('/');
  if (slash == std::string_view::npos) {
    return;
  }
  auto root_fd = util::open_root_directory(root);
  util::open_directory_below(root_fd, relative.substr(0, slash), root.native(), true);
}

void rename_checked(const stdfs::path& from, const stdfs::path& to)
{
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw IoError("cannot move " + to.filename().string() + " into " + to.parent_path().string() + ": "
                  + std::strerror(errno));
  }
}

// Moves a fully downloaded entry from its staging directory into the root; returns the
// reason it was not installed (a Skipped) or nullopt when it was.
std::optional<Skipped> install_entry(const PullInstall& install, const stdfs::path& stage, const stdfs::path& root)
{
  const auto& entry = install.entry;
  auto target = root / entry.path;
  if (entry.kind == EntryKind::module) {
    // The flags suffix can only be checked with the flags file's bytes.
    std::vector<EntryFileInfo> infos;
    for (const auto& file : install.fresh ? install.to_download : entry.files) {
      infos.push_back({relative_name(entry, file), file.size});
    }
    auto flags_name = flags_file_name(infos);
    std::optional<std::string> flags;
    if (!flags_name.empty()) {
      auto staged = stage / flags_name;
      flags = util::read_file(stdfs::exists(staged) ? staged : target / flags_name);
    }
    auto module = parse_module_name(stdfs::path(entry.path).filename().string());
    if (auto problem = check_flags_suffix(*module, flags); !problem.empty()) {
      return Skipped{entry.path, "flags-mismatch-in-repo", problem};
    }
  }
  // Checked again at install time: a link may have been planted since the plan.
  try {
    make_parent_directories(root, entry.path);
    for (const auto& file : install.fresh ? std::vector<storage::RepoFile>{} : install.to_download) {
      make_parent_directories(root, file.path);
    }
  } catch (const util::LinkOnTheWay& link) {
    return Skipped{entry.path, "link-in-local-path", link.what()};
  }
  if (install.replace) {
    // Out of the way by the cleanup's rename-check-delete: a compiler that locked the
    // failed entry meanwhile (to retry it) keeps it.
    if (remove_safely(target, 1) == RemoveOutcome::taken) {
      return Skipped{entry.path, "locked-locally", "a compiler locked it during the pull"};
    }
  }
  if (install.fresh) {
    if (!util::rename_no_replace(stage, target)) {
      return Skipped{entry.path, "appeared-during-pull", "created locally while it was downloaded"};
    }
  } else {
    auto names = local_names(target);
    if (std::any_of(names.begin(), names.end(),
                    [](const std::string& name) { return is_lock_name(stdfs::path(name).filename().string()); })) {
      return Skipped{entry.path, "locked-locally", "a compiler locked it during the pull"};
    }
    std::vector<const storage::RepoFile*> files;
    for (const auto& file : install.to_download) {
      files.push_back(&file);
    }
    std::stable_sort(files.begin(), files.end(), [&](const storage::RepoFile* a, const storage::RepoFile* b) {
      return layout::install_rank(relative_name(entry, *a)) < layout::install_rank(relative_name(entry, *b));
    });
    for (const auto* file : files) {
      auto name = relative_name(entry, *file);
      rename_checked(stage / name, target / name);
    }
  }
  return std::nullopt;
}

} // namespace

namespace {

// What a report takes over from its plan, whether the plan is applied or only shown.
PullReport report_of_plan(PullPlan& plan)
{
  PullReport report;
  report.entries_present = std::move(plan.entries_present);
  report.skipped = std::move(plan.skipped);
  report.other_files = plan.other_files;
  report.files_planned = plan.files_planned;
  report.bytes_planned = plan.bytes_planned;
  report.compiler_versions = std::move(plan.compiler_versions);
  return report;
}

} // namespace

PullReport apply_pull(storage::Repository& repo, const stdfs::path& root, PullPlan plan, DigestCache& digests,
                      const PullOptions& options, const util::TransferCallback& progress)
{
  auto report = report_of_plan(plan);
  report.entries_planned = plan.installs.size();
  if (plan.installs.empty()) {
    return report;
  }
  util::InterruptScope interrupts; // Ctrl-C stops between files, and the staging goes (pull_guard.hpp)
  std::error_code ec;
  stdfs::create_directories(root, ec);
  if (ec) {
    throw IoError("cannot create the compile cache " + root.string() + ": " + ec.message(),
                  "check the compile cache path");
  }
  check_root(root);
  sweep_stale_staging(root);
  // One pull's downloads, removed when done.
  util::TemporaryDirectory staging(root / std::string(k_staging_name));

  // One task per file, entry after entry, so entries complete (and appear) one by one
  // while the workers share the files of big entries.
  struct Slot {
    std::atomic<std::size_t> remaining{0};
    std::atomic<bool> failed{false};
  };
  auto& installs = plan.installs;
  std::vector<Slot> slots(installs.size());
  // Each entry's staging directory, named by its index (not kept: one path per entry).
  auto stage_of = [&](std::size_t index) { return staging.path() / std::to_string(index); };
  std::vector<std::pair<std::size_t, std::size_t>> tasks; // (install, file)
  for (std::size_t i = 0; i < installs.size(); ++i) {
    slots[i].remaining = installs[i].to_download.size();
    for (std::size_t f = 0; f < installs[i].to_download.size(); ++f) {
      tasks.emplace_back(i, f);
    }
  }

  auto remove_quietly = [](const stdfs::path& path) {
    std::error_code ignored;
    stdfs::remove_all(path, ignored);
  };
  std::mutex mutex; // guards the report, the digest cache, the progress state and the stop reason
  std::atomic<bool> stopped{false};
  std::string stop_reason;
  util::TransferProgress state{0, plan.bytes_planned, 0, plan.files_planned};
  auto report_progress = [&] {
    if (progress) {
      progress(state);
    }
  };
  {
    std::lock_guard lock(mutex);
    report_progress();
  }

  auto fail_entry = [&](std::size_t index, const std::exception_ptr& error) {
    auto& slot = slots[index];
    bool first = !slot.failed.exchange(true);
    std::lock_guard lock(mutex);
    if (is_interruption(error)) {
      return; // not an error of the entry: the run was asked to stop
    }
    report.no_space = report.no_space || is_no_space(error);
    if (first) {
      report.errors.push_back({installs[index].entry.path, "error", message_of(error)});
    }
    if (stops_the_run(error) && !stopped.exchange(true)) {
      stop_reason = message_of(error);
    }
  };

  auto finish_entry = [&](std::size_t index) {
    auto& install = installs[index];
    try {
      auto skipped = install_entry(install, stage_of(index), root);
      std::lock_guard lock(mutex);
      if (skipped) {
        report.skipped.push_back(std::move(*skipped));
        return;
      }
      auto target = root / install.entry.path;
      for (const auto& file : install.to_download) {
        try {
          digests.remember(
            file.path, stamp_of(target / relative_name(install.entry, file)),
            {.size = file.size, .sha256 = file.sha256, .git_blob_sha1 = file.git_blob_sha1, .etag = file.etag});
        } catch (const Error&) {
        }
      }
      report.entries_pulled.push_back(install.entry.path);
      if (install.replace) {
        report.entries_replaced.push_back(install.entry.path);
      }
      report.files_downloaded += install.to_download.size();
      report.bytes_downloaded += install.bytes;
    } catch (const Error&) {
      fail_entry(index, std::current_exception());
    } catch (const stdfs::filesystem_error&) {
      fail_entry(index, std::current_exception());
    }
    remove_quietly(stage_of(index));
  };

  // Entries whose files have all landed are installed in batches: one syncfs makes every
  // staged file of the batch durable (instead of one fsync per file, which dominated
  // pulls of many small files), then each entry appears by its rename. One worker at a
  // time installs; the others keep downloading.
  std::mutex ready_mutex;
  std::vector<std::size_t> ready;
  std::mutex install_mutex;
  auto install_ready = [&](bool wait) {
    std::unique_lock installing(install_mutex, std::defer_lock);
    if (wait) {
      installing.lock();
    } else if (!installing.try_lock()) {
      return; // the installing worker takes this entry in its next batch
    }
    for (;;) {
      std::vector<std::size_t> batch;
      {
        std::lock_guard lock(ready_mutex);
        batch.swap(ready);
      }
      if (batch.empty()) {
        return;
      }
      std::exception_ptr flush_error;
      try {
        util::sync_filesystem(staging.path());
      } catch (const Error&) {
        flush_error = std::current_exception();
      }
      for (auto index : batch) {
        if (flush_error) {
          fail_entry(index, flush_error);
          remove_quietly(stage_of(index));
        } else {
          finish_entry(index);
        }
      }
    }
  };

  util::parallel_for(tasks.size(), std::max<std::size_t>(1, options.workers), [&](std::size_t task) {
    auto [index, file_index] = tasks[task];
    auto& install = installs[index];
    auto& slot = slots[index];
    auto& file = install.to_download[file_index];
    if (!stopped && !slot.failed && interrupting_signal() == 0) {
      std::uint64_t reported = 0;
      try {
        auto destination = stage_of(index) / relative_name(install.entry, file);
        stdfs::create_directories(destination.parent_path());
        // Checked against the listing; what is remembered is the digest of the bytes written.
        auto written = repo.download_listed(
          file, destination,
          [&](std::uint64_t done, std::uint64_t) {
            throw_if_interrupted();
            std::lock_guard lock(mutex);
            if (done > reported) {
              state.bytes_done += done - reported;
              reported = done;
            }
            report_progress();
          },
          false); // made durable by one syncfs per batch of entries, before they appear
        file.sha256 = std::move(written.sha256);
        file.git_blob_sha1 = std::move(written.git_blob_sha1);
        file.etag = std::move(written.etag); // empty when no ETag vouched for these bytes
        std::lock_guard lock(mutex);
        state.bytes_done += file.size > reported ? file.size - reported : 0;
        ++state.files_done;
        report_progress();
      } catch (const Error&) {
        fail_entry(index, std::current_exception());
      } catch (const stdfs::filesystem_error&) {
        fail_entry(index, std::current_exception());
      }
    }
    // Whoever lands an entry's last file queues it for installing; a failed entry is
    // dropped whole.
    if (slot.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (!slot.failed && !stopped && interrupting_signal() == 0) {
        {
          std::lock_guard lock(ready_mutex);
          ready.push_back(index);
        }
        install_ready(false);
      } else {
        remove_quietly(stage_of(index));
      }
    }
  });
  install_ready(true);
  if (!report.entries_pulled.empty()) {
    // The renames that made entries appear, durable once for the whole run.
    try {
      util::sync_filesystem(root);
    } catch (const Error&) {
    }
  }

  report.interrupted_by = interrupting_signal();
  if (stopped && report.interrupted_by == 0) {
    for (std::size_t i = 0; i < installs.size(); ++i) {
      const auto& path = installs[i].entry.path;
      bool installed =
        std::find(report.entries_pulled.begin(), report.entries_pulled.end(), path) != report.entries_pulled.end();
      bool reported = slots[i].failed || installed
                      || std::any_of(report.skipped.begin(), report.skipped.end(),
                                     [&](const Skipped& item) { return item.path == path; });
      if (!reported) {
        report.errors.push_back(
          {path, "stopped", "not installed: the run stopped after an error of the repo (" + stop_reason + ")"});
      }
    }
  }
  // The same report whatever the number of workers and the order they finished in.
  auto by_path = [](const Skipped& a, const Skipped& b) { return a.path < b.path; };
  std::sort(report.entries_pulled.begin(), report.entries_pulled.end());
  std::sort(report.entries_replaced.begin(), report.entries_replaced.end());
  std::stable_sort(report.errors.begin(), report.errors.end(), by_path);
  return report;
}

PullReport pull(storage::Repository& repo, const stdfs::path& root, DigestCache& digests, const PullOptions& options,
                const util::TransferCallback& progress)
{
  auto plan = plan_pull(repo, root, digests, options);
  if (!options.dry_run) {
    return apply_pull(repo, root, std::move(plan), digests, options, progress);
  }
  return dry_run_report(std::move(plan));
}

PullReport dry_run_report(PullPlan plan)
{
  auto report = report_of_plan(plan);
  for (const auto& install : plan.installs) {
    report.entries_pulled.push_back(install.entry.path);
    if (install.replace) {
      report.entries_replaced.push_back(install.entry.path);
    }
  }
  return report;
}

} // namespace hubcache::compilecache
