// Running `add` jobs: compile into a local root, find what the run created, register the
// configuration, push it all in one commit.
#include "addjobs/add_job.hpp"

#include "commit_batcher.hpp"

#include "registry/config_diff.hpp"
#include "registry/entry.hpp"
#include "registry/json_text.hpp"
#include "registry/layout.hpp"
#include "registry/lookup.hpp"

#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/pull_guard.hpp>
#include <hubcache/compilecache/pull_lock.hpp>
#include <hubcache/compilecache/push_limits.hpp>
#include <hubcache/error.hpp>
#include <hubcache/storage/repo_choice.hpp>
#include <hubcache/storage/repository.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/thread_pool.hpp>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <set>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace addjobs {

namespace {

namespace stdfs = std::filesystem;
namespace cc = hubcache::compilecache;
using Clock = std::chrono::steady_clock;

std::chrono::milliseconds since(Clock::time_point start)
{
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

struct RootState {
  std::set<std::string> success; // entry paths
  std::set<stdfs::path> lock_files;
  std::map<std::string, stdfs::path> registry_files; // repo path -> local file
};

RootState state_of(const stdfs::path& root)
{
  RootState state;
  std::error_code ec;
  if (!stdfs::exists(root, ec)) {
    return state;
  }
  auto scan = cc::scan(root);
  for (const auto& entry : scan.entries) {
    if (entry.kind == cc::EntryKind::module && entry.state == cc::EntryState::success) {
      state.success.insert(entry.path);
    }
    if (entry.kind == cc::EntryKind::registry) {
      for (const auto& file : entry.files) {
        state.registry_files.emplace(file.path, scan.source_of(file));
      }
    }
    state.lock_files.insert(entry.lock_files.begin(), entry.lock_files.end());
  }
  return state;
}

// Copies a finished entry into the shared root: files into a temp directory next to the
// destination, then one rename, so a compiler sharing the root sees all or nothing.
void install_entry(const cc::Scan& scan, const cc::Entry& entry, const stdfs::path& root)
{
  auto destination = root / entry.path;
  std::error_code ec;
  if (stdfs::exists(destination / "model.done", ec)) {
    return;
  }
  stdfs::create_directories(destination.parent_path(), ec);
  if (ec) {
    throw hubcache::IoError("cannot create " + destination.parent_path().string() + ": " + ec.message());
  }
  auto staging = hubcache::util::unique_temp_path(destination);
  stdfs::create_directory(staging, ec);
  if (ec) {
    throw hubcache::IoError("cannot create " + staging.string() + ": " + ec.message());
  }
  try {
    for (const auto& file : entry.files) {
      auto relative = file.path.substr(entry.path.size() + 1);
      stdfs::create_directories((staging / relative).parent_path());
      stdfs::copy_file(scan.source_of(file), staging / relative);
    }
    stdfs::rename(staging, destination, ec);
    if (ec) {
      // Someone else installed it (or an incomplete copy sits there): leave theirs.
      stdfs::remove_all(staging);
    }
  } catch (const stdfs::filesystem_error& error) {
    stdfs::remove_all(staging, ec);
    throw hubcache::IoError("cannot install " + entry.path + " into " + root.string() + ": " + error.what());
  }
}

// Copies what a job compiled in its staging into the shared root, as a run compiling straight
// into it would have left it, with a pull's guards: the root's pull lock (one writer of
// fetched entries at a time; `on_wait` says whom it waits for), and room for it all first.
// Returns why nothing was copied, or "" once it is.
std::string keep_local_cache_warm(const cc::Scan& scan, const std::vector<const cc::Entry*>& created,
                                  const stdfs::path& root,
                                  const std::function<void(const cc::PullLockHolder&)>& on_wait)
{
  std::uint64_t bytes = 0;
  std::size_t files = 0;
  for (const auto* entry : created) {
    for (const auto& file : entry->files) {
      bytes += file.size;
      ++files;
    }
  }
  auto space = cc::space_for(root, bytes, files);
  if (!space.enough()) {
    constexpr std::uint64_t k_mb = 1'000'000;
    return "not copied into the local cache " + root.string() + ": it needs " + std::to_string(space.needed / k_mb + 1)
           + " MB, " + std::to_string(*space.free / k_mb) + " MB is free";
  }
  cc::PullLock lock(root, on_wait);
  for (const auto* entry : created) {
    install_entry(scan, *entry, root);
  }
  return {};
}

} // namespace

Runner::Runner(hubcache::storage::Repository& repo, Settings settings)
  : m_repo(repo), m_settings(std::move(settings)), m_batcher(std::make_unique<CommitBatcher>(
                                                     [this](const hubcache::storage::CommitRequest& request) {
                                                       std::lock_guard lock(m_repo_mutex);
                                                       return m_repo.commit(request);
                                                     },
                                                     repo.commit_pace()))
{}

Runner::~Runner() = default;

void Runner::load_registered(const std::string& model_id)
{
  if (!m_index) {
    auto files = m_repo.list_files();
    m_index = registry::index_registry(files);
    // Configurations whose registry entries the compile command wrote (optimum's own
    // format) are known by add's attribution records.
    for (const auto& file : files) {
      auto slash = file.path.find('/');
      auto marker =
        "/" + std::string(registry::k_registry_dir) + "/" + std::string(registry::k_attribution_version) + "/";
      if (slash == std::string::npos || file.path.compare(slash, marker.size(), marker) != 0) {
        continue;
      }
      try {
        auto record = registry::parse_json(m_repo.read_file(file.path), file.path);
        if (record.is_object() && record.contains("model_id") && record["model_id"].is_string()
            && record.contains("configuration")) {
          m_recorded.emplace(record["model_id"].get<std::string>(), record["configuration"]);
        }
      } catch (const hubcache::InvalidArgument&) {
      } catch (const hubcache::EntryNotFound&) {
      }
    }
  }
  if (!m_loaded_models.insert(model_id).second) {
    return;
  }
  auto [first, last] = m_recorded.equal_range(model_id);
  for (auto it = first; it != last; ++it) {
    m_registered.emplace(model_id, it->second);
  }
  // Only this model's alias files: a large repo's registry is never read whole.
  for (const auto& location : m_index->entries) {
    if (location.kind != registry::RegistryPathKind::alias || location.model_id != model_id) {
      continue;
    }
    try {
      auto entry = registry::CacheEntry::deserialize(m_repo.read_file(location.path), location.path, location.model_id);
      m_registered.emplace(entry.model_id, entry.neuron_config());
    } catch (const hubcache::InvalidArgument&) {
      // Unreadable entries register nothing; lookup reports them.
    } catch (const hubcache::EntryNotFound&) {
    }
  }
}

bool Runner::is_registered(const Job& job)
{
  std::lock_guard lock(m_repo_mutex);
  load_registered(job.model.model_id);
  auto wanted = neuron_config(job.configuration, job.model.model_id, "", compiler_flags(m_settings.cc_flags));
  auto [begin, end] = m_registered.equal_range(job.model.model_id);
  for (auto it = begin; it != end; ++it) {
    if (same_configuration(it->second, wanted, m_settings.compiler_version)) {
      return true;
    }
  }
  return false;
}

JobResult Runner::run(const Job& job)
{
  JobResult result;
  result.label = job.label();
  result.model_id = job.model.model_id;
  auto started = Clock::now();
  if (!m_settings.force && is_registered(job)) {
    result.status = JobStatus::already_registered;
    result.message = "already registered in " + m_repo.describe();
    return result;
  }
  stdfs::path root = m_settings.cache_root;
  std::optional<stdfs::path> private_root;
  if (m_settings.staging_directory) {
    std::lock_guard lock(m_repo_mutex);
    private_root = *m_settings.staging_directory
                   / ("job-" + std::to_string(++m_job_counter) + "-" + hubcache::util::random_suffix());
    root = *private_root;
  }
  try {
    result.command = expand_command(job.command_template, template_values(job.model, job.configuration, root));
  } catch (const hubcache::InvalidArgument& error) {
    result.status = JobStatus::failed;
    result.message = error.what();
    result.hint = error.hint();
    result.error = std::current_exception();
    return result;
  }
  if (m_settings.dry_run) {
    result.status = JobStatus::planned;
    result.message = "would compile into " + root.string();
    return result;
  }
  try {
    result = execute(job, root, std::move(result));
  } catch (const hubcache::Error& error) {
    result.status = hubcache::util::interrupt_signal() != 0 ? JobStatus::interrupted : JobStatus::failed;
    result.message = error.what();
    result.hint = error.hint();
    result.error = std::current_exception();
  }
  if (private_root) {
    std::error_code ec;
    stdfs::remove_all(*private_root, ec);
  }
  result.elapsed = since(started);
  return result;
}

namespace {

// The compile command as a process: the root as its cache (a --cache_dir in the flags
// would win over NEURON_COMPILE_CACHE_URL in the SDK, so it is taken out), its timeout.
hubcache::util::ProcessSpec compile_process(const Job& job, const stdfs::path& root,
                                            const std::vector<std::string>& command, const Settings& settings)
{
  hubcache::util::ProcessSpec process;
  process.argv = command;
  for (const auto& [name, value] : job.environment) {
    process.environment_overrides[name] = value;
  }
  process.environment_overrides["NEURON_COMPILE_CACHE_URL"] = root.string();
  auto kept_flags = without_cache_dir(settings.cc_flags);
  process.environment_overrides["NEURON_CC_FLAGS"] =
    kept_flags.empty() ? std::optional<std::string>() : std::optional<std::string>(kept_flags);
  if (job.timeout) {
    // Any number of seconds is accepted (manifest, --timeout); beyond what milliseconds
    // can count, it is no limit at all rather than an overflow.
    constexpr auto longest = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::milliseconds::max());
    process.timeout =
      *job.timeout < longest ? std::chrono::milliseconds(*job.timeout) : std::chrono::milliseconds::max();
  }
  process.termination_grace = settings.termination_grace;
  if (settings.on_line) {
    process.on_line = [&settings, &job](hubcache::util::ProcessStream stream, std::string_view line) {
      settings.on_line(job, stream, line);
    };
  }
  return process;
}

// A compile that did not succeed: our command and everything it started are gone, so the
// locks it left are stale and would make the next run wait forever on them.
void record_failed_compile(const hubcache::util::ProcessResult& outcome, const RootState& before,
                           const stdfs::path& root, JobResult& result)
{
  if (outcome.interrupted_by || outcome.timed_out || outcome.term_signal) {
    std::error_code remove_error;
    for (const auto& lock : state_of(root).lock_files) {
      if (before.lock_files.count(lock) == 0) {
        stdfs::remove(lock, remove_error);
      }
    }
  }
  result.status = outcome.interrupted_by ? JobStatus::interrupted : JobStatus::failed;
  result.message = "the command " + outcome.describe() + "; nothing was pushed";
  result.hint = outcome.interrupted_by ? "run the same command again to continue"
                                       : "see the command's output above; fix it and run again";
}

// The successful entries the run created; failed ones are counted for the message.
std::vector<const cc::Entry*> created_entries(const cc::Scan& scan, const RootState& before,
                                              std::size_t& failed_entries)
{
  std::vector<const cc::Entry*> created;
  for (const auto& entry : scan.entries) {
    if (entry.kind != cc::EntryKind::module) {
      continue;
    }
    if (entry.state == cc::EntryState::success && before.success.count(entry.path) == 0) {
      created.push_back(&entry);
    } else if (entry.state == cc::EntryState::failed) {
      ++failed_entries;
    }
  }
  return created;
}

// Registry files last: they are what makes the configuration visible. Those the command
// wrote itself (an optimum export does) are pushed as they are, and then ours is not
// written (optimum reads its own; a second copy would list the configuration twice).
// Otherwise one entry per compiler version the run used (normally exactly one).
void add_registry_files(hubcache::storage::CommitRequest& commit, const Job& job,
                        const std::map<std::string, stdfs::path>& written,
                        const std::map<std::string, std::vector<const cc::Entry*>>& by_version,
                        const std::vector<std::string>& flags, JobResult& result)
{
  for (const auto& [path, source] : written) {
    commit.additions.push_back({path, hubcache::storage::FileSource::from_file(source)});
    result.registry_files.push_back(path);
  }
  if (!written.empty()) {
    return;
  }
  for (const auto& [version, entries] : by_version) {
    // The config as optimum stores it (transformers' to_diff_dict()), so optimum >= 0.4.5
    // finds the entry under the digest directory of the architecture.
    auto entry = registry::make_registry_entry(job.model.model_id, job.configuration.task,
                                               registry::to_diff_dict(job.model.config),
                                               neuron_config(job.configuration, job.model.model_id, version, flags));
    auto bytes = entry.serialize();
    for (const auto& path : {registry::registry_path(version, std::string(k_registry_version), entry),
                             registry::digest_registry_path(version, std::string(k_registry_version), entry)}) {
      commit.additions.push_back({path, hubcache::storage::FileSource::from_bytes(bytes)});
      result.registry_files.push_back(path);
    }
  }
}

// Which graphs this configuration produced, for `synchronize --pull --model`: one record
// per registry entry file (alias and digest copies share a name, so one).
void add_attribution_records(hubcache::storage::CommitRequest& commit, const Job& job,
                             const std::vector<std::string>& flags, const JobResult& result)
{
  std::set<std::pair<std::string, std::string>> recorded;
  for (const auto& path : result.registry_files) {
    auto location = registry::parse_registry_path(path);
    if (!location || location->kind == registry::RegistryPathKind::unexpected
        || !recorded.emplace(location->compiler_version, location->file_hash).second) {
      continue;
    }
    nlohmann::json record = {
      {"model_id", job.model.model_id},
      {"task", job.configuration.task},
      {"configuration", neuron_config(job.configuration, job.model.model_id, location->compiler_version, flags)},
      {"registry_files", nlohmann::json::array()},
      {"modules", result.entries}};
    for (const auto& other : result.registry_files) {
      auto other_location = registry::parse_registry_path(other);
      if (other_location && other_location->file_hash == location->file_hash) {
        record["registry_files"].push_back(other);
      }
    }
    commit.additions.push_back({registry::attribution_path(location->compiler_version, location->file_hash),
                                hubcache::storage::FileSource::from_bytes(registry::dumps_indented(record))});
  }
}

} // namespace

JobResult Runner::execute(const Job& job, const stdfs::path& root, JobResult result)
{
  std::error_code ec;
  stdfs::create_directories(root, ec);
  if (ec) {
    throw hubcache::IoError("cannot create the compile cache root " + root.string() + ": " + ec.message(),
                            "pass a writable --cache-dir");
  }
  auto before = state_of(root);
  auto notify = [&](const std::string& event) {
    if (m_settings.on_event) {
      m_settings.on_event(job, event);
    }
  };
  notify("compiling");
  auto outcome = hubcache::util::run_process(compile_process(job, root, result.command, m_settings));
  result.output_tail = outcome.tail;
  if (!outcome.succeeded()) {
    record_failed_compile(outcome, before, root, result);
    return result;
  }

  auto scan = cc::scan(root);
  std::size_t failed_entries = 0;
  const auto created = created_entries(scan, before, failed_entries);
  if (created.empty()) {
    result.status = JobStatus::failed;
    result.message = "the command succeeded but created no new compile-cache entry in " + root.string();
    if (failed_entries > 0) {
      result.message += " (" + std::to_string(failed_entries) + " failed entries there)";
    }
    result.hint = "check that it compiles with NEURON_COMPILE_CACHE_URL as its cache";
    result.created_nothing = true;
    return result;
  }

  std::map<std::string, stdfs::path> written;
  for (const auto& [path, source] : state_of(root).registry_files) {
    if (before.registry_files.count(path) == 0 && registry::parse_registry_path(path)) {
      written.emplace(path, source);
    }
  }
  std::map<std::string, std::vector<const cc::Entry*>> by_version;
  for (const auto* entry : created) {
    by_version[entry->compiler_version].push_back(entry);
  }
  const auto flags = compiler_flags(m_settings.cc_flags);
  hubcache::storage::CommitRequest commit;
  commit.message = "Add " + job.model.model_id + " (" + job.configuration.task + ", " + job.configuration.summary()
                   + ") to the Neuron cache.";
  for (const auto* entry : created) {
    for (const auto& file : entry->files) {
      commit.additions.push_back({file.path, hubcache::storage::FileSource::from_file(scan.source_of(file))});
    }
    result.entries.push_back(entry->path);
  }
  add_registry_files(commit, job, written, by_version, flags, result);
  for (const auto& [version, entries] : by_version) {
    result.compiler_version += (result.compiler_version.empty() ? "" : ",") + version;
  }
  add_attribution_records(commit, job, flags, result);
  if (hubcache::util::interrupt_signal() != 0) {
    result.status = JobStatus::interrupted;
    result.message = "interrupted before pushing; nothing was pushed";
    result.hint = "run the same command again to continue";
    return result;
  }
  notify("pushing");
  {
    commit.unit_of = hubcache::compilecache::commit_unit_of;
    auto pushed = m_batcher->commit(std::move(commit));
    std::lock_guard lock(m_repo_mutex);
    result.revision = pushed.revision;
    if (m_loaded_models.count(job.model.model_id) != 0) {
      m_registered.emplace(job.model.model_id,
                           neuron_config(job.configuration, job.model.model_id, by_version.begin()->first, flags));
    }
  }
  std::string not_kept;
  if (m_settings.staging_directory) {
    not_kept = keep_local_cache_warm(scan, created, m_settings.cache_root, [&](const cc::PullLockHolder& holder) {
      notify("waiting for " + holder.describe());
    });
  }
  result.status = JobStatus::added;
  result.message = "pushed " + std::to_string(created.size()) + " entries and the registry entry to "
                   + m_repo.describe() + (not_kept.empty() ? std::string() : "; " + not_kept);
  return result;
}

std::vector<JobResult> Runner::run_all(const std::vector<Job>& jobs, unsigned parallelism, bool continue_on_error)
{
  std::vector<JobResult> results(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    results[i].label = jobs[i].label();
    results[i].model_id = jobs[i].model.model_id;
  }
  std::atomic<bool> stop{false};
  hubcache::util::parallel_for(jobs.size(), std::max(1U, parallelism), [&](std::size_t index) {
    if (stop || hubcache::util::interrupt_signal() != 0) {
      return; // left not_run, explained below
    }
    try {
      results[index] = run(jobs[index]);
    } catch (const std::exception& error) {
      results[index].status = JobStatus::failed;
      results[index].message = error.what();
    }
    if (results[index].status == JobStatus::failed && !continue_on_error) {
      stop = true;
    }
  });
  for (auto& result : results) {
    if (result.status == JobStatus::not_run && result.message.empty()) {
      result.message = hubcache::util::interrupt_signal() != 0 ? "not started: interrupted"
                                                               : "not started: an earlier configuration failed";
    }
  }
  return results;
}

PreconditionReport check_preconditions(hubcache::storage::Repository& repo)
{
  PreconditionReport report;
  repo.check_writable();
  report.public_default_repo = repo.spec() == hubcache::storage::k_default_cache_repo;
  return report;
}

} // namespace addjobs
