#include "hubcache/compilecache/store_copy.hpp"

#include "transfer_engine.hpp"

#include "hubcache/compilecache/pull_guard.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/checked.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/process.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <mutex>
#include <set>
#include <unordered_map>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

// The version directories of the source that the filter keeps; `all` receives every
// compiler version the source holds.
std::vector<std::string> source_versions(storage::Repository& source, const CopyOptions& options,
                                         std::set<std::string>& all)
{
  std::vector<std::string> versions;
  for (auto& name : source.list_folders()) {
    if (!name.starts_with(k_version_prefix) || name.size() == k_version_prefix.size()) {
      continue;
    }
    all.insert(name.substr(k_version_prefix.size()));
    if (options.compiler_version
        && !version_matches(std::string_view(name).substr(k_version_prefix.size()), *options.compiler_version)) {
      continue;
    }
    versions.push_back(std::move(name));
  }
  return versions;
}

std::vector<storage::RepoFile> list_below(storage::Repository& store, const std::vector<std::string>& folders)
{
  std::vector<storage::RepoFile> files;
  for (const auto& folder : folders) {
    try {
      auto listed = store.list_files(folder);
      files.insert(files.end(), std::make_move_iterator(listed.begin()), std::make_move_iterator(listed.end()));
    } catch (const EntryNotFound&) {
      // nothing below it
    }
  }
  return files;
}

// Same bytes, as far as both stores can tell from a checksum both give; nullopt when
// they give none in common. Two S3-style ETags tell when they are equal, or when both
// are plain MD5s; made with other part sizes (or one encrypted), they prove nothing.
std::optional<bool> compare_checksums(const storage::RepoFile& a, const storage::RepoFile& b)
{
  if (a.size != b.size) {
    return false;
  }
  if (!a.sha256.empty() && !b.sha256.empty()) {
    return a.sha256 == b.sha256;
  }
  if (!a.git_blob_sha1.empty() && !b.git_blob_sha1.empty()) {
    return a.git_blob_sha1 == b.git_blob_sha1;
  }
  if (!a.etag.empty() && !b.etag.empty()) {
    if (a.etag == b.etag) {
      return true;
    }
    if (util::is_md5_hex(a.etag) && util::is_md5_hex(b.etag)) {
      return false;
    }
  }
  return std::nullopt;
}

// The same, then what earlier copies recorded, then the size (recording it as the base
// line a later rewrite is told from).
bool same_stored_content(const storage::RepoFile& source, const storage::RepoFile& target, CopyRecords* records)
{
  if (auto same = compare_checksums(source, target)) {
    return *same;
  }
  if (records == nullptr) {
    return true;
  }
  if (auto same = records->same(source, target)) {
    return *same;
  }
  records->remember(source, target);
  return true;
}

Classification classify_stored(const RepoEntry& entry, const std::vector<const storage::RepoFile*>& files)
{
  std::vector<EntryFileInfo> infos;
  infos.reserve(files.size());
  for (const auto* file : files) {
    infos.push_back({file->path.substr(entry.path.size() + 1), file->size});
  }
  return classify_module_files(infos);
}

struct Decision {
  std::vector<const storage::RepoFile*> to_copy;
  std::optional<Skipped> skip;
};

Decision decide(const RepoEntry& entry, const std::unordered_map<std::string, const storage::RepoFile*>& at_target,
                std::vector<Skipped>& skipped_files, CopyRecords* records)
{
  Decision decision;
  std::vector<const storage::RepoFile*> source_files;
  for (const auto& file : entry.files) {
    source_files.push_back(&file);
  }
  bool is_module = entry.kind == EntryKind::module;
  if (is_module) {
    auto state = classify_stored(entry, source_files);
    if (state.state == EntryState::failed) {
      decision.skip = Skipped{entry.path, SkipReason::failed_in_source, state.why.subject, state.why.finding};
      return decision;
    }
    if (state.state != EntryState::success) {
      decision.skip = Skipped{entry.path, SkipReason::incomplete_in_source, state.why.subject, state.why.finding};
      return decision;
    }
  }
  std::vector<const storage::RepoFile*> target_files;
  std::vector<const storage::RepoFile*> differing;
  for (const auto* file : source_files) {
    auto found = at_target.find(file->path);
    if (found == at_target.end()) {
      decision.to_copy.push_back(file);
      continue;
    }
    target_files.push_back(found->second);
    if (!same_stored_content(*file, *found->second, records)) {
      differing.push_back(file);
    }
  }
  if (differing.empty()) {
    return decision;
  }
  if (!is_module) {
    // Registry and exported-model trees: the target's version of a file stays.
    for (const auto* file : differing) {
      skipped_files.push_back({file->path, SkipReason::target_file_differs, {}});
    }
    return decision;
  }
  // A complete entry at the target is in use there; a partial one is completed.
  if (classify_stored(entry, target_files).state == EntryState::success && target_files.size() == source_files.size()) {
    decision.to_copy.clear();
    decision.skip = Skipped{entry.path, SkipReason::target_entry_differs,
                            differing.front()->path.substr(entry.path.size() + 1), Finding::file_differs};
    return decision;
  }
  decision.to_copy.insert(decision.to_copy.end(), differing.begin(), differing.end());
  return decision;
}

// A module entry is copied only when its flags file gives its name's suffix, as a push
// from a local cache checks: read (small) for the entries to copy only, several at once.
void check_flags(storage::Repository& source, CopyPlan& plan, std::size_t workers)
{
  std::vector<EntryFinding> problems(plan.copies.size());
  util::parallel_for(plan.copies.size(), std::max<std::size_t>(workers, 1), [&](std::size_t i) {
    const auto& entry = plan.copies[i].entry;
    if (entry.kind != EntryKind::module) {
      return;
    }
    std::vector<EntryFileInfo> infos;
    for (const auto& file : entry.files) {
      infos.push_back({file.path.substr(entry.path.size() + 1), file.size});
    }
    auto flags_name = flags_file_name(infos);
    std::optional<std::string> flags;
    if (!flags_name.empty()) {
      flags = source.read_file(entry.path + "/" + flags_name);
    }
    auto name = parse_module_name(entry.path.substr(entry.path.find('/') + 1));
    problems[i] = name ? check_flags_suffix(*name, flags) : EntryFinding{Finding::not_an_entry, {}};
  });
  std::vector<CopyItem> kept;
  for (std::size_t i = 0; i < plan.copies.size(); ++i) {
    auto& item = plan.copies[i];
    if (!problems[i]) {
      kept.push_back(std::move(item));
      continue;
    }
    plan.skipped.push_back(
      {item.entry.path, SkipReason::flags_mismatch_in_source, problems[i].subject, problems[i].finding});
    plan.files_planned -= item.to_copy.size();
    plan.bytes_planned -= item.bytes;
  }
  plan.copies = std::move(kept);
}

} // namespace

namespace {

// Digests a listing left out (a directory repo hashes on demand) are asked for where two
// files of the same size are compared and the listings give no checksum in common.
void complete_compared(storage::Repository& source, std::vector<storage::RepoFile>& source_listing,
                       storage::Repository& target, std::vector<storage::RepoFile>& target_listing)
{
  std::unordered_map<std::string_view, storage::RepoFile*> at_target;
  for (auto& file : target_listing) {
    at_target.emplace(file.path, &file);
  }
  std::vector<storage::RepoFile*> from_source;
  std::vector<storage::RepoFile*> from_target;
  for (auto& file : source_listing) {
    auto it = at_target.find(file.path);
    if (it == at_target.end() || compare_checksums(file, *it->second)) {
      continue;
    }
    if (storage::has_no_checksum(file)) {
      from_source.push_back(&file);
    }
    if (storage::has_no_checksum(*it->second)) {
      from_target.push_back(it->second);
    }
  }
  at_target.clear();
  storage::complete_listing(source, source_listing, from_source);
  storage::complete_listing(target, target_listing, from_target);
}

} // namespace

CopyPlan plan_copy(storage::Repository& source, storage::Repository& target, const CopyOptions& options)
{
  CopyPlan plan;
  auto versions = source_versions(source, options, plan.compiler_versions);
  auto source_listing = list_below(source, versions);
  std::vector<storage::RepoFile> target_listing;
  if (storage::exists_yet(target)) {
    target_listing = list_below(target, versions);
  }
  complete_compared(source, source_listing, target, target_listing);
  auto layout = group_repo_files(std::move(source_listing));
  plan.other_files = layout.other_files;

  std::unordered_map<std::string, const storage::RepoFile*> at_target;
  at_target.reserve(target_listing.size());
  for (const auto& file : target_listing) {
    at_target.emplace(file.path, &file);
  }

  std::vector<CopyItem> registries;
  for (auto& entry : layout.entries) {
    if (options.only_entries && options.only_entries->count(entry.path) == 0) {
      continue;
    }
    auto decision = decide(entry, at_target, plan.skipped, options.records);
    if (decision.skip) {
      plan.skipped.push_back(std::move(*decision.skip));
      continue;
    }
    if (decision.to_copy.empty()) {
      plan.entries_present.push_back(entry.path);
      continue;
    }
    CopyItem item;
    for (const auto* file : decision.to_copy) {
      item.to_copy.push_back(*file);
      item.bytes = util::saturating_add(item.bytes, file->size);
    }
    plan.files_planned += item.to_copy.size();
    plan.bytes_planned = util::saturating_add(plan.bytes_planned, item.bytes);
    item.entry = std::move(entry);
    (item.entry.kind == EntryKind::registry ? registries : plan.copies).push_back(std::move(item));
  }
  check_flags(source, plan, options.workers);
  // A registry names graphs: it lands after them.
  std::move(registries.begin(), registries.end(), std::back_inserter(plan.copies));
  return plan;
}

namespace {

// One applied copy, a batch of whole entries at a time (within the byte and file budgets):
// the batch's files downloaded at once into the scratch folder, then one commit to the
// target of the entries whose files all landed. A failure of the source stops the run; an
// interrupt stops it at the target's next safe point (between batches, during a batch's
// downloads, or where the target's commit stops: CommitInterrupted), whole entries only.
class CopyRun {
public:
  CopyRun(storage::Repository& source, storage::Repository& target, CopyPlan& plan, const CopyOptions& options,
          const util::TransferCallback& progress, TransferReport& report, const stdfs::path& scratch)
    : m_source(source), m_target(target), m_copies(plan.copies), m_options(options), m_progress(progress),
      m_report(report), m_scratch(scratch),
      m_engine(engine_items(plan.copies)), m_state{0, plan.bytes_planned, 0, plan.files_planned}
  {}

  void run()
  {
    {
      std::lock_guard lock(m_mutex);
      report_progress();
    }
    std::size_t next = 0;
    std::size_t batch_number = 0;
    while (next < m_copies.size() && !m_engine.stopped() && !stop_for_interrupt()) {
      auto begin = next;
      next = batch_end(begin);
      auto stage = m_scratch / std::to_string(batch_number++);
      download_batch(begin, next, stage);
      if (m_engine.stopped() || stop_for_interrupt()) {
        break;
      }
      commit_batch(begin, next, stage);
    }
  }

  // The signal that cut the run short, or 0 (one arriving after the last commit cut nothing).
  int interrupted_by() const noexcept { return m_interrupted_by; }

  // After run(): everything not committed yet is left out, each entry reported once.
  void report_stopped()
  {
    if (!m_engine.stopped() || m_interrupted_by != 0) {
      return;
    }
    std::set<std::string> reported(m_report.transferred.begin(), m_report.transferred.end());
    for (const auto& error : m_report.errors) {
      reported.insert(error.path);
    }
    for (const auto& copy : m_copies) {
      const auto& path = copy.entry.path;
      if (reported.insert(path).second) {
        m_report.errors.push_back({path, SkipReason::stopped, m_engine.stop_reason()});
      }
    }
  }

private:
  static std::vector<TransferEngine::Item> engine_items(std::vector<CopyItem>& copies)
  {
    std::vector<TransferEngine::Item> items;
    for (auto& copy : copies) {
      items.push_back({&copy.entry.path, &copy.to_copy});
    }
    return items;
  }

  // True once an interrupt arrived: no further batch is downloaded or committed.
  bool stop_for_interrupt()
  {
    if (m_interrupted_by == 0) {
      m_interrupted_by = interrupting_signal();
    }
    return m_interrupted_by != 0;
  }

  // Every byte is read from the source and written to the target: progress counts half a
  // byte for each, so that the bar's rate and ETA cover the whole copy.
  void report_progress()
  {
    m_state.bytes_done = (m_downloaded + m_uploaded) / 2;
    if (m_progress) {
      m_progress(m_state);
    }
  }

  // The end of the batch starting at `begin`: whole entries, within the byte and file
  // budgets (at least one entry).
  std::size_t batch_end(std::size_t begin) const
  {
    auto next = begin;
    std::uint64_t batch_bytes = 0;
    std::size_t batch_files = 0;
    do {
      batch_bytes += m_copies[next].bytes;
      batch_files += m_copies[next].to_copy.size();
      ++next;
    } while (next < m_copies.size() && batch_bytes + m_copies[next].bytes <= m_options.batch_bytes
             && batch_files + m_copies[next].to_copy.size() <= m_options.batch_files);
    return next;
  }

  void download_batch(std::size_t begin, std::size_t end, const stdfs::path& stage)
  {
    TransferEngine::Hooks hooks;
    // Staged without fsync: the scratch copy only has to outlive the commit.
    hooks.destination = [&](std::size_t, const storage::RepoFile& file) { return stage / file.path; };
    hooks.on_bytes = [&](std::uint64_t bytes) {
      std::lock_guard lock(m_mutex);
      m_downloaded += bytes;
      report_progress();
    };
    // Checked against the listing; the records keep the digest of the bytes copied.
    hooks.on_landed = [](std::size_t, storage::RepoFile& file, util::FileDigests copied, std::uint64_t) {
      file.sha256 = std::move(copied.sha256);
      file.git_blob_sha1 = std::move(copied.git_blob_sha1);
    };
    m_engine.download(m_source, begin, end, m_options.workers, hooks);
    auto errors = m_engine.take_errors();
    m_report.errors.insert(m_report.errors.end(), errors.begin(), errors.end());
  }

  void commit_batch(std::size_t begin, std::size_t end, const stdfs::path& stage)
  {
    storage::CommitRequest request;
    request.message = m_options.commit_message;
    std::vector<std::size_t> landed;
    std::uint64_t landed_bytes = 0;
    for (auto i = begin; i < end; ++i) {
      if (m_engine.failed(i)) {
        continue;
      }
      landed.push_back(i);
      landed_bytes += m_copies[i].bytes;
      for (const auto& file : m_copies[i].to_copy) {
        request.additions.push_back({file.path, storage::FileSource::from_file(stage / file.path)});
      }
    }
    if (request.additions.empty()) {
      return;
    }
    auto uploaded_before = m_uploaded;
    storage::CommitResult result;
    try {
      result = m_target.commit(request, [&](std::uint64_t done, std::uint64_t) {
        std::lock_guard lock(m_mutex);
        m_uploaded = std::max(m_uploaded, uploaded_before + done);
        report_progress();
      });
    } catch (const storage::CommitInterrupted& stop) {
      count_interrupted_commit(stop, landed);
      return;
    }
    if (m_options.records != nullptr) {
      remember(result, landed);
    }
    std::lock_guard lock(m_mutex);
    m_uploaded = uploaded_before + landed_bytes;
    ++m_report.commits;
    m_report.revision = result.revision;
    m_report.xet.new_bytes += result.xet_new_bytes;
    m_report.xet.deduplicated_bytes += result.xet_deduplicated_bytes;
    m_report.xet.stored_bytes += result.xet_stored_bytes;
    m_report.files_transferred += request.additions.size();
    m_report.bytes_transferred += landed_bytes;
    for (auto i : landed) {
      m_report.transferred.push_back(m_copies[i].entry.path);
    }
    m_state.files_done += request.additions.size();
    report_progress();
    std::error_code ignored;
    stdfs::remove_all(stage, ignored);
  }

  // The target stopped at its safe point: the entries none of whose files is left are
  // published whole, the rest is not (the scratch folder goes with the run).
  void count_interrupted_commit(const storage::CommitInterrupted& stop, const std::vector<std::size_t>& landed)
  {
    std::set<std::string_view> left(stop.remaining_paths().begin(), stop.remaining_paths().end());
    std::lock_guard lock(m_mutex);
    m_interrupted_by = stop.signal();
    m_report.commits += stop.commits_made();
    for (auto i : landed) {
      const auto& files = m_copies[i].to_copy;
      if (std::none_of(files.begin(), files.end(), [&](const auto& file) { return left.contains(file.path); })) {
        m_report.transferred.push_back(m_copies[i].entry.path);
        m_report.files_transferred += files.size();
        m_report.bytes_transferred += m_copies[i].bytes;
      }
    }
  }

  // What the target now holds of each file, beside the source's checksums.
  void remember(const storage::CommitResult& result, const std::vector<std::size_t>& landed)
  {
    std::unordered_map<std::string_view, const storage::RepoFile*> committed;
    for (const auto& file : result.files) {
      committed.emplace(file.path, &file);
    }
    for (auto i : landed) {
      for (const auto& file : m_copies[i].to_copy) {
        if (auto it = committed.find(file.path); it != committed.end()) {
          m_options.records->remember(file, *it->second);
        }
      }
    }
  }

  storage::Repository& m_source;
  storage::Repository& m_target;
  std::vector<CopyItem>& m_copies;
  const CopyOptions& m_options;
  const util::TransferCallback& m_progress;
  TransferReport& m_report;
  stdfs::path m_scratch;
  TransferEngine m_engine;
  std::mutex m_mutex; // guards the report and the progress state
  util::TransferProgress m_state;
  std::uint64_t m_downloaded = 0;
  std::uint64_t m_uploaded = 0;
  int m_interrupted_by = 0; // set by the thread that runs the batches
};

} // namespace

namespace {

// What a report takes over from its plan, whether the plan is applied or only shown.
TransferReport report_of_plan(CopyPlan& plan)
{
  TransferReport report;
  report.entries = transfer_entries(plan);
  report.present = std::move(plan.entries_present);
  report.skipped = std::move(plan.skipped);
  report.other_files = plan.other_files;
  report.files_planned = plan.files_planned;
  report.bytes_planned = plan.bytes_planned;
  report.compiler_versions = std::move(plan.compiler_versions);
  report.entries_planned = plan.copies.size();
  return report;
}

} // namespace

TransferReport apply_copy(storage::Repository& source, storage::Repository& target, CopyPlan plan,
                          const CopyOptions& options, const util::TransferCallback& progress)
{
  auto report = report_of_plan(plan);
  if (plan.copies.empty()) {
    report.revision = storage::exists_yet(target) ? target.revision() : std::nullopt;
    return report;
  }
  auto parent = options.scratch_parent.empty() ? stdfs::path("/tmp") : options.scratch_parent;
  // Ctrl-C or SIGTERM ends the copy at the target's next safe point; the scratch folder goes.
  util::InterruptScope interrupts;
  util::TemporaryDirectory scratch(parent / "neuron-cache-copy");
  CopyRun run(source, target, plan, options, progress, report, scratch.path());
  run.run();
  report.interrupted_by = run.interrupted_by();
  run.report_stopped();
  if (report.commits == 0 || report.interrupted_by != 0) {
    report.revision = storage::exists_yet(target) ? target.revision() : std::nullopt;
  }
  list_planned_after_run(report);
  return report;
}

TransferReport dry_run_report(CopyPlan plan)
{
  auto report = report_of_plan(plan);
  for (const auto& copy : plan.copies) {
    report.planned.push_back(copy.entry.path);
  }
  return report;
}

std::vector<TransferEntry> transfer_entries(const CopyPlan& plan)
{
  std::vector<TransferEntry> entries;
  for (const auto& copy : plan.copies) {
    entries.push_back({copy.entry.path, copy.entry.compiler_version, copy.to_copy.size(), copy.bytes, std::nullopt});
  }
  return entries;
}

} // namespace hubcache::compilecache
