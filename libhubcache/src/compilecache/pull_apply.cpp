#include "hubcache/compilecache/pull.hpp"

#include "pull_local.hpp"
#include "transfer_engine.hpp"

#include "hubcache/compilecache/cleanup.hpp"
#include "hubcache/compilecache/pull_guard.hpp"
#include "hubcache/compilecache/pull_lock.hpp"
#include "hubcache/error.hpp"
#include "hubcache/layout/names.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/nofollow.hpp"
#include "hubcache/util/process.hpp"
#include "hubcache/util/temp_owner.hpp"

#include <algorithm>
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
    if (auto problem = check_flags_suffix(*module, flags)) {
      return Skipped{entry.path, SkipReason::flags_mismatch_in_repo, problem.subject, problem.finding};
    }
  }
  // Checked again at install time: a link may have been planted since the plan.
  try {
    make_parent_directories(root, entry.path);
    for (const auto& file : install.fresh ? std::vector<storage::RepoFile>{} : install.to_download) {
      make_parent_directories(root, file.path);
    }
  } catch (const util::LinkOnTheWay& link) {
    return Skipped{entry.path, SkipReason::link_in_local_path, link.component(), Finding::link_on_the_way};
  }
  if (install.replace) {
    // Out of the way by the cleanup's rename-check-delete: a compiler that locked the
    // failed entry meanwhile (to retry it) keeps it.
    if (remove_safely(target, 1) == RemoveOutcome::taken) {
      return Skipped{entry.path, SkipReason::locked_locally, {}, Finding::locked_meanwhile};
    }
  }
  if (install.fresh) {
    if (!util::rename_no_replace(stage, target)) {
      return Skipped{entry.path, SkipReason::appeared_during_pull, {}};
    }
  } else {
    auto names = local_names(target);
    if (std::any_of(names.begin(), names.end(),
                    [](const std::string& name) { return is_lock_name(stdfs::path(name).filename().string()); })) {
      return Skipped{entry.path, SkipReason::locked_locally, {}, Finding::locked_meanwhile};
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
TransferReport report_of_plan(PullPlan& plan)
{
  TransferReport report;
  report.entries = transfer_entries(plan);
  report.present = std::move(plan.entries_present);
  report.skipped = std::move(plan.skipped);
  report.other_files = plan.other_files;
  report.files_planned = plan.files_planned;
  report.bytes_planned = plan.bytes_planned;
  report.compiler_versions = std::move(plan.compiler_versions);
  report.entries_planned = plan.installs.size();
  return report;
}

} // namespace

namespace {

// One applied pull: one task per file, entry after entry (the TransferEngine's), so
// entries complete (and appear) one by one while the workers share the files of big
// entries. Entries whose files have all landed are installed in batches: one syncfs makes
// every staged file of the batch durable (instead of one fsync per file, which dominated
// pulls of many small files), then each entry appears by its rename. One worker at a time
// installs; the others keep downloading. An entry fails whole; a failure of the repo stops
// the run (transfer_errors).
class PullRun {
public:
  PullRun(storage::Repository& repo, const stdfs::path& root, PullPlan& plan, DigestCache& digests,
          const util::TransferCallback& progress, TransferReport& report, const stdfs::path& staging)
    : m_repo(repo), m_root(root), m_installs(plan.installs), m_digests(digests), m_progress(progress), m_report(report),
      m_staging(staging), m_engine(engine_items(plan.installs)), m_state{0, plan.bytes_planned, 0, plan.files_planned}
  {}

  void run(std::size_t workers)
  {
    {
      std::lock_guard lock(m_mutex);
      report_progress();
    }
    TransferEngine::Hooks hooks;
    hooks.destination = [&](std::size_t index, const storage::RepoFile& file) {
      return stage_of(index) / relative_name(m_installs[index].entry, file);
    };
    hooks.on_bytes = [&](std::uint64_t bytes) {
      std::lock_guard lock(m_mutex);
      m_state.bytes_done += bytes;
      report_progress();
    };
    hooks.on_landed = [&](std::size_t, storage::RepoFile& file, util::FileDigests written, std::uint64_t told) {
      // Checked against the listing; what is remembered is the digest of the bytes written.
      file.sha256 = std::move(written.sha256);
      file.git_blob_sha1 = std::move(written.git_blob_sha1);
      file.etag = std::move(written.etag); // empty when no ETag vouched for these bytes
      std::lock_guard lock(m_mutex);
      m_state.bytes_done += file.size > told ? file.size - told : 0;
      ++m_state.files_done;
      report_progress();
    };
    // Whoever lands an entry's last file queues it for installing; a failed entry is
    // dropped whole.
    hooks.on_item_done = [&](std::size_t index) {
      if (!m_engine.failed(index) && !m_engine.stopped() && interrupting_signal() == 0) {
        {
          std::lock_guard lock(m_ready_mutex);
          m_ready.push_back(index);
        }
        install_ready(false);
      } else {
        remove_quietly(stage_of(index));
      }
    };
    m_engine.download(m_repo, 0, m_installs.size(), workers, hooks);
    install_ready(true);
    auto errors = m_engine.take_errors();
    m_report.errors.insert(m_report.errors.end(), errors.begin(), errors.end());
    m_report.no_space = m_engine.no_space();
    if (!m_report.transferred.empty()) {
      // The renames that made entries appear, durable once for the whole run.
      try {
        util::sync_filesystem(m_root);
      } catch (const Error&) {
      }
    }
  }

  // After run(): every entry neither installed, skipped nor failed is said to be left out
  // when a failure of the repo stopped the run.
  void report_stopped()
  {
    if (!m_engine.stopped() || m_report.interrupted_by != 0) {
      return;
    }
    for (std::size_t i = 0; i < m_installs.size(); ++i) {
      const auto& path = m_installs[i].entry.path;
      bool installed =
        std::find(m_report.transferred.begin(), m_report.transferred.end(), path) != m_report.transferred.end();
      bool reported = m_engine.failed(i) || installed
                      || std::any_of(m_report.skipped.begin(), m_report.skipped.end(),
                                     [&](const Skipped& item) { return item.path == path; });
      if (!reported) {
        m_report.errors.push_back({path, SkipReason::stopped, m_engine.stop_reason()});
      }
    }
  }

private:
  static std::vector<TransferEngine::Item> engine_items(std::vector<PullInstall>& installs)
  {
    std::vector<TransferEngine::Item> items;
    for (auto& install : installs) {
      items.push_back({&install.entry.path, &install.to_download});
    }
    return items;
  }

  static void remove_quietly(const stdfs::path& path)
  {
    std::error_code ignored;
    stdfs::remove_all(path, ignored);
  }

  // Each entry's staging directory, named by its index (not kept: one path per entry).
  stdfs::path stage_of(std::size_t index) const { return m_staging / std::to_string(index); }

  void report_progress()
  {
    if (m_progress) {
      m_progress(m_state);
    }
  }

  void install_ready(bool wait)
  {
    std::unique_lock installing(m_install_mutex, std::defer_lock);
    if (wait) {
      installing.lock();
    } else if (!installing.try_lock()) {
      return; // the installing worker takes this entry in its next batch
    }
    for (;;) {
      std::vector<std::size_t> batch;
      {
        std::lock_guard lock(m_ready_mutex);
        batch.swap(m_ready);
      }
      if (batch.empty()) {
        return;
      }
      std::exception_ptr flush_error;
      try {
        util::sync_filesystem(m_staging);
      } catch (const Error&) {
        flush_error = std::current_exception();
      }
      for (auto index : batch) {
        if (flush_error) {
          m_engine.fail(index, flush_error);
          remove_quietly(stage_of(index));
        } else {
          finish_entry(index);
        }
      }
    }
  }

  void finish_entry(std::size_t index)
  {
    auto& install = m_installs[index];
    try {
      auto skipped = install_entry(install, stage_of(index), m_root);
      std::lock_guard lock(m_mutex);
      if (skipped) {
        m_report.skipped.push_back(std::move(*skipped));
        return;
      }
      auto target = m_root / install.entry.path;
      for (const auto& file : install.to_download) {
        try {
          m_digests.remember(
            file.path, stamp_of(target / relative_name(install.entry, file)),
            {.size = file.size, .sha256 = file.sha256, .git_blob_sha1 = file.git_blob_sha1, .etag = file.etag});
        } catch (const Error&) {
        }
      }
      m_report.transferred.push_back(install.entry.path);
      if (install.replace) {
        m_report.replaced.push_back(install.entry.path);
      }
      m_report.files_transferred += install.to_download.size();
      m_report.bytes_transferred += install.bytes;
    } catch (const Error&) {
      m_engine.fail(index, std::current_exception());
    } catch (const stdfs::filesystem_error&) {
      m_engine.fail(index, std::current_exception());
    }
    remove_quietly(stage_of(index));
  }

  storage::Repository& m_repo;
  const stdfs::path& m_root;
  std::vector<PullInstall>& m_installs;
  DigestCache& m_digests;
  const util::TransferCallback& m_progress;
  TransferReport& m_report;
  stdfs::path m_staging;
  TransferEngine m_engine;
  std::mutex m_mutex; // guards the report, the digest cache and the progress state
  util::TransferProgress m_state;
  std::mutex m_ready_mutex;
  std::vector<std::size_t> m_ready; // entries whose files have all landed
  std::mutex m_install_mutex;
};

} // namespace

TransferReport apply_pull(storage::Repository& repo, const stdfs::path& root, PullPlan plan, DigestCache& digests,
                          const PullOptions& options, const util::TransferCallback& progress)
{
  auto report = report_of_plan(plan);
  if (plan.installs.empty()) {
    // Nothing to download, but a pull killed after its last install left its staging and
    // its lock: a re-run that finds everything present still clears them (best effort, as
    // a no-op pull must not fail on housekeeping).
    struct stat status {};
    if (::stat(root.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
      try {
        sweep_stale_staging(root);
        clear_abandoned_pull_lock(root);
      } catch (const Error&) {
      }
    }
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
  PullRun run(repo, root, plan, digests, progress, report, staging.path());
  run.run(options.workers);
  report.interrupted_by = interrupting_signal();
  run.report_stopped();
  // The same report whatever the number of workers and the order they finished in.
  auto by_path = [](const Skipped& a, const Skipped& b) { return a.path < b.path; };
  std::sort(report.transferred.begin(), report.transferred.end());
  std::sort(report.replaced.begin(), report.replaced.end());
  std::stable_sort(report.errors.begin(), report.errors.end(), by_path);
  list_planned_after_run(report);
  return report;
}

TransferReport pull(storage::Repository& repo, const stdfs::path& root, DigestCache& digests,
                    const PullOptions& options, const util::TransferCallback& progress)
{
  auto plan = plan_pull(repo, root, digests, options);
  if (!options.dry_run) {
    return apply_pull(repo, root, std::move(plan), digests, options, progress);
  }
  return dry_run_report(std::move(plan));
}

TransferReport dry_run_report(PullPlan plan)
{
  auto report = report_of_plan(plan);
  for (const auto& install : plan.installs) {
    report.planned.push_back(install.entry.path);
    if (install.replace) {
      report.replaced.push_back(install.entry.path);
    }
  }
  return report;
}

std::vector<TransferEntry> transfer_entries(const PullPlan& plan)
{
  std::vector<TransferEntry> entries;
  for (const auto& install : plan.installs) {
    entries.push_back(
      {install.entry.path, install.entry.compiler_version, install.to_download.size(), install.bytes, std::nullopt});
  }
  return entries;
}

} // namespace hubcache::compilecache
