#include "hub_commit.hpp"
#include "commit_payload.hpp"
#include "hub_locals.hpp"
#include "hub_objects.hpp"

#include "hubcache/error.hpp"
#include "hubcache/storage/commit_batches.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/process.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>

namespace hubcache::storage {

namespace stdfs = std::filesystem;

namespace {

constexpr std::string_view k_branch = "main";
constexpr int k_max_failed_passes = 6; // passes in a row that land nothing
// Batches one Xet segment (one shard) carries at most, and batches waiting on the committer.
constexpr std::size_t k_max_segment_batches = 4;

// Whether the Hub's oid for a file (hex, from the network) is `digest`.
template <std::size_t N>
bool is_oid(const std::optional<std::string>& oid, const util::DigestBytes<N>& digest)
{
  auto parsed = oid ? util::DigestBytes<N>::from_hex(*oid) : std::nullopt;
  return parsed && *parsed == digest;
}

// One file of the plan and how it travels.
struct Planned {
  std::size_t local = 0; // index into the locals
  bool lfs = false;
};

// Files that land together (a unit of the request), in landing order.
struct PlannedUnit {
  std::vector<Planned> files;
};

// One commit of a pass: a run of units (and, for the first, the deletions).
struct Batch {
  std::size_t first_unit = 0;
  std::size_t end_unit = 0;
  std::size_t files = 0;
  bool full = false; // the sizer's target was what closed it
  std::vector<std::string> deletion_lines;
  std::size_t files_deleted = 0;
  std::unique_ptr<CommitPayload> payload; // built ahead; the header goes in when its turn comes
  bool through_xet = false;               // its objects are in the Xet segment: it waits for the seal
};

// The commits of one pass, one after the other on the committer thread, while the caller
// uploads and builds the next batches. Guarded by its mutex.
struct CommitChain {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<std::string> parent;
  std::size_t pending = 0; // batches handed to the committer, not settled
  bool failed = false;
};

// How one commit request went.
struct CommitOutcome {
  long status = 0; // 0: no answer (the connection failed)
  std::string oid;
  std::string message;
  std::optional<long> retry_after;
  std::chrono::steady_clock::duration took{};
};

class HubCommitRun {
public:
  HubCommitRun(hub::HubApi& api, std::string repo_id, std::string description, const CommitRequest& request,
               const util::ProgressCallback& progress)
    : m_api(api), m_repo_id(std::move(repo_id)), m_description(std::move(description)), m_request(request),
      m_progress(progress)
  {}

  CommitResult run();

private:
  void hash_additions();
  void order_by_unit();
  // Which remaining additions change something (the preupload), grouped in units.
  std::vector<PlannedUnit> plan_units(const std::string& revision);
  std::vector<std::string> deletion_lines(const std::string& revision, std::size_t& files_deleted);
  const LocalFile& with_sha256(const std::string& oid) const;
  hub::HubApi::UploadSource source_of(const std::string& oid) const;
  // Sends the batch's objects ahead of its commit: packed into the Xet push (on the Hub once
  // the segment is sealed: batch.through_xet), or through LFS (on the Hub on return).
  void send_objects(const std::vector<PlannedUnit>& units, Batch& batch);
  // The batch's LFS files not hashed yet: packed into the Xet segment, which hashes them as
  // it reads them, else hashed here.
  void pack_unhashed(const std::vector<std::size_t>& unhashed, Batch& batch);
  void sent(std::uint64_t bytes);
  // Seals the Xet segment; after a failure, sends what `held` had in it through LFS.
  void seal_xet(const std::vector<PlannedUnit>& units, const std::vector<std::shared_ptr<Batch>>& held);
  std::unique_ptr<CommitPayload> build_payload(const std::vector<PlannedUnit>& units, const Batch& batch,
                                               std::size_t header_room) const;
  std::string header_of(const Batch& batch, std::size_t part, const std::optional<std::string>& parent) const;
  CommitOutcome post_commit(const std::vector<PlannedUnit>& units, Batch& batch, std::size_t part,
                            const std::optional<std::string>& parent);
  // The committer's turn for `batch`: commits it on the chain's parent unless the chain failed.
  void commit_in_turn(const std::vector<PlannedUnit>& units, Batch& batch, CommitChain& chain);
  // Commits the plan batch after batch; false when a commit did not land (m_failure says why).
  bool land(const std::vector<PlannedUnit>& units, std::vector<std::string> deletions, std::size_t files_deleted,
            std::optional<std::string> head);
  void landed(const std::vector<PlannedUnit>& units, const Batch& batch, const CommitOutcome& outcome);
  // After a pass that did not land everything: waits as the failure asks, or throws.
  void recover(int& failed_passes);
  std::vector<std::string> remaining_paths() const;
  // The stop point between two commits: once an interrupt arrived, no further batch starts
  // (the commit in flight settles first), and the push ends with what landed, whole units.
  void stop_if_interrupted() const;

  hub::HubApi& m_api;
  std::string m_repo_id;
  std::string m_description;
  const CommitRequest& m_request;
  const util::ProgressCallback& m_progress;

  std::vector<LocalFile> m_locals;
  LocalsBySha256 m_by_sha256;            // rebuilt when files are hashed later
  std::vector<std::size_t> m_order;      // local indices in landing order
  std::vector<std::size_t> m_unit_start; // positions in m_order where a unit starts
  std::vector<char> m_present;           // per local: known to be in the repo
  std::vector<std::string> m_warnings;
  HubObjectUploader m_objects{m_api,
                              m_repo_id,
                              std::string(k_branch),
                              [this](const std::string& oid) { return source_of(oid); },
                              [this](std::uint64_t bytes) { sent(bytes); },
                              m_warnings};
  std::size_t m_segment_batches = 1; // batches a Xet segment holds: 1, then 2, up to 4
  CommitSizer m_sizer;               // read by the uploader, adapted by the committer: under m_sizer_mutex
  std::mutex m_sizer_mutex;
  std::string m_revision;
  std::size_t m_commits = 0;
  std::size_t m_files_added = 0;
  std::size_t m_files_deleted = 0;
  std::uint64_t m_bytes_total = 0;
  std::uint64_t m_bytes_sent = 0;
  CommitOutcome m_failure;
  std::size_t m_newly_present = 0; // files the last plan found in the repo that were not known there
  std::chrono::milliseconds m_conflict_delay{0};
};

void HubCommitRun::hash_additions()
{
  // Hash every addition once, several files at a time (the plan may be remade, the hashes
  // stay); big ones wait for the Xet pass when Xet may carry them.
  m_locals.resize(m_request.additions.size());
  const bool defer_big = m_api.config().xet;
  util::parallel_for(m_locals.size(), m_api.config().workers,
                     [&](std::size_t i) { m_locals[i] = describe_addition(m_request.additions[i], defer_big); });
  m_by_sha256.rebuild(m_locals);
  m_present.assign(m_locals.size(), 0);
}

void HubCommitRun::order_by_unit()
{
  std::vector<CommitUnit> units(m_locals.size());
  for (std::size_t i = 0; i < m_locals.size(); ++i) {
    const auto& path = m_locals[i].addition->path_in_repo;
    units[i] = m_request.unit_of ? m_request.unit_of(path) : CommitUnit{path, 0};
  }
  m_order.resize(m_locals.size());
  for (std::size_t i = 0; i < m_order.size(); ++i) {
    m_order[i] = i;
  }
  std::stable_sort(m_order.begin(), m_order.end(), [&](std::size_t a, std::size_t b) {
    if (units[a].stage != units[b].stage) {
      return units[a].stage < units[b].stage;
    }
    if (units[a].key != units[b].key) {
      return units[a].key < units[b].key;
    }
    return m_locals[a].addition->path_in_repo < m_locals[b].addition->path_in_repo;
  });
  for (std::size_t at = 0; at < m_order.size(); ++at) {
    const auto& unit = units[m_order[at]];
    if (at == 0 || unit.stage != units[m_order[at - 1]].stage || unit.key != units[m_order[at - 1]].key) {
      m_unit_start.push_back(at);
    }
  }
}

std::vector<PlannedUnit> HubCommitRun::plan_units(const std::string& revision)
{
  // Only what this run has not seen land is asked about again.
  std::vector<std::size_t> asked;
  for (std::size_t i = 0; i < m_locals.size(); ++i) {
    if (!m_present[i]) {
      asked.push_back(i);
    }
  }
  enum class Way : unsigned char { unanswered, skip, regular, lfs };
  std::vector<Way> ways(m_locals.size(), Way::skip);
  for (auto i : asked) {
    ways[i] = Way::unanswered;
  }
  if (!asked.empty()) {
    // Each batch's answers are turned into a decision per file as they arrive.
    m_api.preupload(
      m_repo_id, revision, asked.size(),
      [&](std::size_t k) {
        const auto& local = m_locals[asked[k]];
        return hub::PreuploadFile{local.addition->path_in_repo, local.size, sample_of(local)};
      },
      [&](std::size_t begin, std::size_t end, hub::PreuploadResult& answer) {
        std::unordered_map<std::string_view, std::size_t> index;
        index.reserve(end - begin);
        for (auto k = begin; k < end; ++k) {
          index.emplace(m_locals[asked[k]].addition->path_in_repo, asked[k]);
        }
        for (const auto& remote : answer.files) {
          auto it = index.find(remote.path);
          if (it == index.end()) {
            continue;
          }
          auto& local = m_locals[it->second];
          bool lfs = remote.lfs && local.size > 0; // empty files cannot be LFS objects
          if (!remote.should_ignore && (remote.remote_oid || !lfs)
              && !(lfs ? local.has_sha256 : local.has_git_blob_sha1)) {
            hash_local(local); // compared with the repo's copy, or committed as a regular file
          }
          if (remote.should_ignore
              || (lfs ? is_oid(remote.remote_oid, local.sha256) : is_oid(remote.remote_oid, local.git_blob_sha1))) {
            ways[it->second] = Way::skip; // ignored, or already there with this content
          } else {
            ways[it->second] = lfs ? Way::lfs : Way::regular;
          }
        }
      });
  }
  m_by_sha256.rebuild(m_locals);
  std::vector<PlannedUnit> units;
  for (std::size_t u = 0; u < m_unit_start.size(); ++u) {
    auto end = u + 1 < m_unit_start.size() ? m_unit_start[u + 1] : m_order.size();
    PlannedUnit unit;
    for (auto at = m_unit_start[u]; at < end; ++at) {
      auto i = m_order[at];
      if (ways[i] == Way::unanswered) {
        throw RemoteError("the Hub did not say how to upload '" + m_locals[i].addition->path_in_repo + "'",
                          "retry later");
      }
      if (ways[i] == Way::skip) {
        m_newly_present += m_present[i] ? 0 : 1;
        m_present[i] = 1;
      } else {
        unit.files.push_back({i, ways[i] == Way::lfs});
      }
    }
    if (!unit.files.empty()) {
      units.push_back(std::move(unit));
    }
  }
  return units;
}

std::vector<std::string> HubCommitRun::deletion_lines(const std::string& revision, std::size_t& files_deleted)
{
  // Deletions of what is actually there, so the Hub never sees a missing path.
  std::vector<std::string> lines;
  std::vector<std::string> file_deletions;
  files_deleted = 0;
  for (const auto& deletion : m_request.deletions) {
    if (!deletion.is_folder) {
      file_deletions.push_back(deletion.path_in_repo);
      continue;
    }
    std::vector<hub::HubTreeEntry> entries;
    try {
      entries = m_api.list_tree(m_repo_id, revision, deletion.path_in_repo, true);
    } catch (const EntryNotFound&) {
    }
    auto count = std::count_if(entries.begin(), entries.end(), [](const auto& e) { return e.type == "file"; });
    if (count > 0) {
      files_deleted += static_cast<std::size_t>(count);
      lines.push_back(hub::commit_deletion_line(deletion.path_in_repo, true));
    }
  }
  if (!file_deletions.empty()) {
    std::set<std::string> present;
    for (const auto& entry : m_api.paths_info(m_repo_id, revision, file_deletions)) {
      if (entry.type == "file") {
        present.insert(entry.path);
      }
    }
    for (const auto& path : file_deletions) {
      if (present.erase(path) > 0) {
        ++files_deleted;
        lines.push_back(hub::commit_deletion_line(path, false));
      }
    }
  }
  return lines;
}

const LocalFile& HubCommitRun::with_sha256(const std::string& oid) const
{
  auto digest = util::Sha256Bytes::from_hex(oid);
  const auto* local = digest ? m_by_sha256.find(*digest) : nullptr;
  if (local == nullptr) {
    throw RemoteError("the Hub asked for an LFS object that is not part of this commit (" + oid + ")", "retry later");
  }
  return *local;
}

hub::HubApi::UploadSource HubCommitRun::source_of(const std::string& oid) const
{
  hub::HubApi::UploadSource source;
  const auto& addition = *with_sha256(oid).addition;
  const auto& content = addition.source;
  if (content.is_file()) {
    source.file = content.file_for(addition.path_in_repo);
  } else {
    source.bytes = &content.bytes();
  }
  return source;
}

void HubCommitRun::send_objects(const std::vector<PlannedUnit>& units, Batch& batch)
{
  // LFS objects first: a commit naming an object the Hub lacks is refused.
  std::vector<std::size_t> unhashed;
  for (auto u = batch.first_unit; u < batch.end_unit; ++u) {
    for (const auto& item : units[u].files) {
      if (item.lfs && !m_locals[item.local].has_sha256) {
        unhashed.push_back(item.local);
      }
    }
  }
  if (!unhashed.empty()) {
    pack_unhashed(unhashed, batch);
  }
  std::vector<hub::LfsObjectRef> objects;
  std::set<util::Sha256Bytes> requested;
  for (auto u = batch.first_unit; u < batch.end_unit; ++u) {
    for (const auto& item : units[u].files) {
      const auto& local = m_locals[item.local];
      if (!item.lfs || m_objects.on_hub(local.sha256)) {
        continue;
      }
      if (m_objects.in_segment(local.sha256)) {
        batch.through_xet = true; // the same content, packed for an earlier batch
      } else if (requested.insert(local.sha256).second) {
        objects.push_back({local.sha256.hex(), local.size});
      }
    }
  }
  if (m_objects.send(objects, requested)) {
    batch.through_xet = true;
  }
}

void HubCommitRun::pack_unhashed(const std::vector<std::size_t>& unhashed, Batch& batch)
{
  std::vector<HubObjectUploader::UnhashedFile> files;
  files.reserve(unhashed.size());
  for (auto i : unhashed) {
    const auto& addition = *m_locals[i].addition;
    files.push_back({addition.source.file_for(addition.path_in_repo), m_locals[i].size});
  }
  const auto packed = m_objects.pack_unhashed(
    files, [&](std::size_t k, const util::Sha256Bytes& sha256) { set_packed_sha256(m_locals[unhashed[k]], sha256); });
  if (packed > 0) {
    batch.through_xet = true;
  }
  // What Xet did not take (it does not carry this push yet, or failed on the way) is hashed
  // now and sent like the rest.
  util::parallel_for(unhashed.size(), m_api.config().workers, [&](std::size_t k) {
    if (!m_locals[unhashed[k]].has_sha256) {
      hash_local(m_locals[unhashed[k]]);
    }
  });
  m_by_sha256.rebuild(m_locals);
}

void HubCommitRun::sent(std::uint64_t bytes)
{
  m_bytes_sent += bytes;
  if (m_progress) {
    m_progress(std::min(m_bytes_sent, m_bytes_total), m_bytes_total);
  }
}

void HubCommitRun::seal_xet(const std::vector<PlannedUnit>& units, const std::vector<std::shared_ptr<Batch>>& held)
{
  m_objects.seal();
  for (const auto& batch : held) {
    if (batch->through_xet && m_objects.xet_failed()) {
      batch->through_xet = false;
      send_objects(units, *batch); // through LFS now
    }
  }
}

std::string HubCommitRun::header_of(const Batch& batch, std::size_t part,
                                    const std::optional<std::string>& parent) const
{
  std::string summary = m_request.message;
  if (summary.empty()) {
    summary = batch.files == 0 ? "Delete " + std::to_string(batch.files_deleted) + " files"
                               : "Upload " + std::to_string(batch.files) + " files";
  }
  if (part > 1) {
    summary += " (part " + std::to_string(part) + ")";
  }
  return hub::commit_header_line(summary, m_request.description, parent);
}

std::unique_ptr<CommitPayload> HubCommitRun::build_payload(const std::vector<PlannedUnit>& units, const Batch& batch,
                                                           std::size_t header_room) const
{
  auto payload = std::make_unique<CommitPayload>(header_room);
  for (auto u = batch.first_unit; u < batch.end_unit; ++u) {
    for (const auto& item : units[u].files) {
      const auto& local = m_locals[item.local];
      if (item.lfs) {
        payload->append(hub::commit_lfs_file_line(local.addition->path_in_repo, local.sha256.hex(), local.size));
      } else {
        payload->append_regular_file(local.addition->path_in_repo, local.addition->source);
      }
    }
  }
  for (const auto& line : batch.deletion_lines) {
    payload->append(line);
  }
  return payload;
}

CommitOutcome HubCommitRun::post_commit(const std::vector<PlannedUnit>& units, Batch& batch, std::size_t part,
                                        const std::optional<std::string>& parent)
{
  auto header = header_of(batch, part, parent);
  if (!batch.payload || !batch.payload->fits(header)) {
    batch.payload = build_payload(units, batch, header.size()); // an unexpectedly long parent id
  }
  // Never re-sent blindly: on any doubt the plan is remade against the head, and since
  // the commit names its parent, an earlier copy that did land turns the next plan into
  // a no-op instead of a duplicate commit.
  CommitOutcome outcome;
  auto started = std::chrono::steady_clock::now();
  try {
    auto answer = m_api.commit(m_repo_id, k_branch, batch.payload->finish(header));
    outcome = {answer.status, answer.commit_oid, answer.message, answer.retry_after, {}};
  } catch (const http::TransportError& error) {
    outcome.status = 0;
    outcome.message = error.what();
  }
  outcome.took = std::chrono::steady_clock::now() - started;
  batch.payload.reset();
  return outcome;
}

void HubCommitRun::landed(const std::vector<PlannedUnit>& units, const Batch& batch, const CommitOutcome& outcome)
{
  for (auto u = batch.first_unit; u < batch.end_unit; ++u) {
    for (const auto& item : units[u].files) {
      m_present[item.local] = 1;
    }
  }
  m_revision = outcome.oid;
  ++m_commits;
  m_files_added += batch.files;
  m_files_deleted += batch.files_deleted;
  std::lock_guard lock(m_sizer_mutex);
  m_sizer.succeeded(outcome.took, batch.files, batch.full);
}

void HubCommitRun::commit_in_turn(const std::vector<PlannedUnit>& units, Batch& batch, CommitChain& chain)
{
  std::optional<std::string> parent;
  std::size_t part = 0;
  {
    std::lock_guard lock(chain.mutex);
    parent = chain.parent;
    part = m_commits + 1;
  }
  const auto settle = [&](std::optional<CommitOutcome> outcome) {
    std::lock_guard lock(chain.mutex);
    --chain.pending;
    if (outcome && outcome->status >= 200 && outcome->status < 300) {
      landed(units, batch, *outcome);
      chain.parent = outcome->oid;
    } else {
      chain.failed = true;
      if (outcome) {
        m_failure = std::move(*outcome);
      }
    }
    chain.changed.notify_all();
  };
  if (chain.failed || commit_stop_signal() != 0) {
    settle(std::nullopt); // interrupted: land() ends the push with what has landed
    return;
  }
  try {
    settle(post_commit(units, batch, part, parent));
  } catch (...) {
    settle(std::nullopt); // the uploader must not wait for a turn that will never come
    throw;
  }
}

bool HubCommitRun::land(const std::vector<PlannedUnit>& units, std::vector<std::string> deletions,
                        std::size_t files_deleted, std::optional<std::string> head)
{
  std::vector<UnitSize> sizes;
  sizes.reserve(units.size());
  for (const auto& unit : units) {
    UnitSize size{unit.files.size(), 0};
    for (const auto& item : unit.files) {
      size.regular_bytes += item.lfs ? 0 : m_locals[item.local].size;
    }
    sizes.push_back(size);
  }
  // One commit carries everything when the request names its parent: it must apply whole.
  const bool whole = m_request.parent_revision.has_value();
  // Room for the header line: its text with the longest commit id a parent may have.
  const auto header_room = header_of(Batch{}, 999999, std::string(64, '0')).size() + 64;
  CommitChain chain;
  chain.parent = std::move(head);
  {
    std::lock_guard lock(m_sizer_mutex);
    m_sizer.plan_first(sizes);
  }
  // One committer: commits land in order, each on the previous one, while this thread
  // uploads the next batch's objects and builds its body. At most two batches sent through
  // LFS wait on the committer, or a Xet segment's (the Hub's quota may stop it: no
  // uploading far ahead of what lands).
  util::TaskQueue committer(1);
  // Through Xet, a segment's batches are packed, then sealed (one shard), then committed,
  // while the next segment is packed: a push's content travels in few xorbs and shards, and
  // its commits start after the first batch instead of after the whole upload. The first
  // segment is one batch, each next one twice as many, up to k_max_segment_batches.
  std::vector<std::shared_ptr<Batch>> held;
  const auto submit = [&](std::vector<std::shared_ptr<Batch>>& batches) {
    for (auto& batch : batches) {
      std::unique_lock lock(chain.mutex);
      const auto ahead = batch->through_xet ? k_max_segment_batches : std::size_t{2};
      chain.changed.wait(lock, [&] { return chain.pending < ahead || chain.failed; });
      if (chain.failed) {
        return false;
      }
      ++chain.pending;
      committer.submit([this, &units, &chain, batch] { commit_in_turn(units, *batch, chain); });
    }
    batches.clear();
    return true;
  };
  std::size_t begin = 0;
  bool first = true;
  while (begin < units.size() || (first && !deletions.empty())) {
    if (commit_stop_signal() != 0) {
      break; // no further batch is prepared; the committer skips what it has not posted
    }
    auto batch = std::make_shared<Batch>();
    batch->first_unit = begin;
    {
      std::lock_guard lock(m_sizer_mutex);
      batch->end_unit = whole ? units.size() : next_batch_end(sizes, begin, m_sizer.target());
    }
    for (auto u = begin; u < batch->end_unit; ++u) {
      batch->files += sizes[u].files;
    }
    batch->full = batch->end_unit < units.size();
    if (first) {
      batch->deletion_lines = std::move(deletions);
      batch->files_deleted = files_deleted;
    }
    send_objects(units, *batch);
    batch->payload = build_payload(units, *batch, header_room);
    held.push_back(batch);
    begin = batch->end_unit;
    first = false;
    if (m_objects.segment_open() && held.size() < m_segment_batches && begin < units.size()) {
      continue; // packed into the Xet segment: committed once it is sealed
    }
    if (m_objects.segment_open()) {
      m_segment_batches = std::min<std::size_t>(2 * m_segment_batches, k_max_segment_batches);
    }
    seal_xet(units, held);
    if (!submit(held)) {
      break;
    }
  }
  committer.wait();
  // The stop point: once interrupted, the commit in flight has settled and no other started.
  stop_if_interrupted();
  return !chain.failed;
}

void HubCommitRun::stop_if_interrupted() const
{
  if (auto signal = commit_stop_signal(); signal != 0) {
    throw CommitInterrupted(signal, m_commits, remaining_paths());
  }
}

std::vector<std::string> HubCommitRun::remaining_paths() const
{
  std::vector<std::string> paths;
  for (auto i : m_order) {
    if (!m_present[i]) {
      paths.push_back(m_locals[i].addition->path_in_repo);
    }
  }
  return paths;
}

void HubCommitRun::recover(int& failed_passes)
{
  const auto& failure = m_failure;
  const auto what = failure.status == 0 ? failure.message : "HTTP " + std::to_string(failure.status);
  if (m_request.parent_revision) {
    if (failure.status == 0) {
      throw RemoteError("the commit to " + m_description + " may or may not have been applied: " + failure.message,
                        "check the repo, then re-run the command");
    }
    throw ConflictError("the " + m_description + " moved on since revision " + *m_request.parent_revision + " (" + what
                          + ")",
                        "re-run the command to apply it on the new head");
  }
  if (failure.status == 429) {
    if (auto quota = parse_commit_quota_answer(failure.message, failure.retry_after)) {
      if (quota->retry_after > m_api.config().max_quota_wait) {
        auto left = remaining_paths();
        throw CommitQuotaReached("the Hub's commit quota for " + m_description + " is spent"
                                   + (quota->quota.empty() ? std::string() : " (" + quota->quota + ")") + " after "
                                   + std::to_string(m_commits) + " commits; " + std::to_string(left.size())
                                   + " files are not committed yet",
                                 quota->quota, quota->retry_after, m_commits, std::move(left));
      }
      // A short wait: sit it out, then carry on where the quota stopped us.
      std::this_thread::sleep_for(quota->retry_after + std::chrono::seconds(1));
      return;
    }
  }
  if (++failed_passes >= k_max_failed_passes) {
    throw ConflictError("could not commit to " + m_description + " after " + std::to_string(k_max_failed_passes)
                          + " attempts: other commits kept landing first (last: " + what + ")",
                        "re-run the command");
  }
  if (failure.status == 0 || failure.status >= 500) {
    m_sizer.failed(); // a timeout says the commit was too big for the Hub's time budget
  }
  static thread_local std::mt19937 random{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  auto wait =
    std::chrono::milliseconds(static_cast<long long>(static_cast<double>(m_conflict_delay.count()) * jitter(random)));
  if (failure.retry_after) {
    wait = std::max<std::chrono::milliseconds>(wait, std::chrono::seconds(*failure.retry_after));
  }
  std::this_thread::sleep_for(wait);
  m_conflict_delay = std::min(m_conflict_delay * 2, m_api.config().conflict_base * 30);
}

CommitResult HubCommitRun::run()
{
  hash_additions();
  order_by_unit();
  m_conflict_delay = m_api.config().conflict_base;
  int failed_passes = 0;
  for (;;) {
    stop_if_interrupted();
    auto info = m_api.repo_info(m_repo_id);
    if (!info) {
      throw RepoNotFound("cannot commit to " + m_description
                           + ": it does not exist or is not accessible with your token",
                         ErrorFacts{m_repo_id, true, true});
    }
    auto head = info->sha;
    if (m_request.parent_revision && head != m_request.parent_revision) {
      throw ConflictError("the " + m_description + " moved on since revision " + *m_request.parent_revision,
                          "re-run the command to apply it on the new head");
    }
    auto plan_revision = head.value_or(std::string(k_branch));
    m_newly_present = 0;
    auto units = plan_units(plan_revision);
    if (m_failure.status != 0 || !m_failure.message.empty()) {
      if (m_newly_present > 0 && (m_failure.status == 0 || m_failure.status >= 500)) {
        // The commit whose answer was lost did land: it is counted, and not made again.
        ++m_commits;
        failed_passes = 0;
      }
      m_failure = {};
    }
    std::size_t files_deleted = 0;
    auto deletions = deletion_lines(plan_revision, files_deleted);
    if (units.empty() && deletions.empty()) {
      m_revision = head.value_or(m_revision);
      break;
    }
    m_bytes_total = m_bytes_sent;
    for (const auto& unit : units) {
      for (const auto& item : unit.files) {
        m_bytes_total += m_locals[item.local].size;
      }
    }
    const auto commits_before = m_commits;
    if (land(units, std::move(deletions), files_deleted, head)) {
      break;
    }
    if (m_commits > commits_before) {
      failed_passes = 0; // progress was made: the count of failures in a row starts again
    }
    recover(failed_passes);
  }
  // What the uploads built on their threads (and libcurl's transfer buffers) is handed
  // back: else it stays in those threads' arenas after the commit.
  util::release_free_memory();
  if (m_progress && m_bytes_total > 0) {
    m_progress(m_bytes_total, m_bytes_total);
  }
  const auto& xet = m_objects.xet();
  return CommitResult{m_revision, m_commits > 0, m_files_added,          m_files_deleted, files_of(m_locals),
                      m_commits,  xet.new_bytes, xet.deduplicated_bytes, m_warnings,      xet.stored_bytes};
}

} // namespace

CommitResult commit_to_hub(hub::HubApi& api, const std::string& repo_id, const std::string& repo_description,
                           const CommitRequest& request, const util::ProgressCallback& progress)
{
  return HubCommitRun(api, repo_id, repo_description, request, progress).run();
}

} // namespace hubcache::storage
