// Writes to a Storage Bucket: contents through Xet, then the batch API phase by phase
// (publish_order.hpp), each batch checked against what the bucket then holds.

#include "hubcache/storage/bucket_repository.hpp"
#include "hubcache/storage/publish_order.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/thread_pool.hpp"
#include "hubcache/xet/cas_client.hpp"
#include "hubcache/xet/cas_upload.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <thread>

namespace hubcache::storage {

using json = nlohmann::json;

namespace {

constexpr int k_publish_rounds = 3;
// Files per shard: a shard names each file with its terms; this keeps one well below the
// CAS's 64 MiB shard limit.
constexpr std::size_t k_files_per_shard = 10000;

std::int64_t now_ms()
{
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

// The local file's mtime in ms, as `hf buckets sync` sends it (so its comparisons hold).
std::int64_t mtime_ms(const Addition& addition)
{
  if (!addition.source.is_file()) {
    return now_ms();
  }
  struct stat st {};
  if (::stat(addition.source.file_for(addition.path_in_repo).c_str(), &st) != 0) {
    return now_ms();
  }
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

// One batch operation, and what the bucket must hold once it is done.
struct Operation {
  std::string key;
  std::string line;
  std::string expected_hash; // empty: the key must be gone (a deletion)
};

} // namespace

std::vector<std::pair<std::string, std::string>> BucketRepository::send_batch(const std::vector<std::string>& keys,
                                                                              const std::vector<std::string>& lines)
{
  http::Request request;
  request.method = "POST";
  request.url = bucket_url("batch");
  request.headers = m_api.auth_headers();
  request.headers.emplace_back("Content-Type", "application/x-ndjson");
  std::string body;
  for (const auto& line : lines) {
    body += line + '\n';
  }
  request.body = std::move(body);
  // Every operation names its result, so sending one again is harmless: retried as usual.
  auto response = m_api.send(request);
  if (response.status == 404) {
    throw_missing(true);
  }
  if (!response.ok() && response.status != 422) {
    hub::throw_hub_error(response, context("publish files to " + describe(), true), m_api.config().token);
  }
  auto answer = json::parse(response.body, nullptr, false);
  std::vector<std::pair<std::string, std::string>> failed;
  std::set<std::string_view> sent(keys.begin(), keys.end());
  const auto bad_answer = RemoteError("the Hub answered a bucket batch (HTTP " + std::to_string(response.status)
                                        + ") with something else than a batch result",
                                      "retry later");
  if (!answer.is_object()) {
    throw bad_answer;
  }
  try {
    for (const auto& item : answer.value("failed", json::array())) {
      auto path = item.at("path").get<std::string>();
      if (!sent.contains(path)) {
        throw IntegrityError("the bucket's batch answer names a file it was not sent", "retry later");
      }
      failed.emplace_back(std::move(path), item.value("error", std::string("no reason given")));
    }
  } catch (const json::exception&) {
    throw bad_answer;
  }
  if (response.status == 422 && failed.empty()) {
    throw RemoteError("the Hub refused a bucket batch (HTTP 422) without saying which files failed", "retry later");
  }
  return failed;
}

// Sends `ops` (one phase) in batches, at most `workers` at once, then checks each batch's
// files in the bucket: what a batch reported failed, or claimed but does not show, goes
// again, up to k_publish_rounds in all. Throws when something still is not in place, so no
// later phase is sent.
void BucketRepository::publish_phase_batches(const std::vector<std::string>& keys,
                                             const std::vector<std::string>& lines,
                                             const std::vector<std::string>& expected_hashes)
{
  std::vector<std::size_t> pending(keys.size());
  for (std::size_t i = 0; i < pending.size(); ++i) {
    pending[i] = i;
  }
  std::map<std::string, std::string> failures; // key -> why
  for (int round = 0; round < k_publish_rounds && !pending.empty(); ++round) {
    if (round > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250 << round));
    }
    failures.clear();
    std::mutex failures_mutex;
    auto batches = (pending.size() + k_batch_operations - 1) / k_batch_operations;
    util::parallel_for(batches, m_api.config().workers, [&](std::size_t b) {
      std::vector<std::string> batch_keys;
      std::vector<std::string> batch_lines;
      for (auto i = b * k_batch_operations; i < pending.size() && i < (b + 1) * k_batch_operations; ++i) {
        batch_keys.push_back(keys[pending[i]]);
        batch_lines.push_back(lines[pending[i]]);
      }
      auto failed = send_batch(batch_keys, batch_lines);
      std::map<std::string, std::string> found;
      for (auto& entry : paths_info(batch_keys)) {
        found[entry.path] = entry.xet_hash;
      }
      std::lock_guard lock(failures_mutex);
      for (auto& [key, why] : failed) {
        failures[key] = why;
      }
      for (auto i = b * k_batch_operations; i < pending.size() && i < (b + 1) * k_batch_operations; ++i) {
        const auto& key = keys[pending[i]];
        const auto& expected = expected_hashes[pending[i]];
        auto it = found.find(key);
        bool in_place = expected.empty() ? it == found.end() : it != found.end() && it->second == expected;
        if (!in_place && !failures.contains(key)) {
          failures[key] = expected.empty() ? "still there after the bucket reported it deleted"
                                           : "not there after the bucket reported it added";
        }
      }
    });
    std::vector<std::size_t> again;
    for (auto index : pending) {
      if (failures.contains(keys[index])) {
        again.push_back(index);
      }
    }
    pending = std::move(again);
  }
  if (!pending.empty()) {
    const auto& [key, why] = *failures.begin();
    throw RemoteError(describe() + " did not take " + std::to_string(pending.size()) + " file(s), e.g. '" + key
                        + "': " + why + "; nothing that depends on them was published",
                      "run the command again: it resumes from what the bucket holds");
  }
}

// Which additions to publish: all but the files of an entry whose model.done the bucket
// already holds (another writer completed that entry after this push was planned: its
// copy stays whole rather than being overwritten file by file).
std::vector<bool> BucketRepository::not_published_elsewhere(const CommitRequest& request)
{
  std::vector<bool> wanted(request.additions.size(), true);
  std::vector<std::string> marker_keys;
  for (const auto& addition : request.additions) {
    if (publish_phase(addition.path_in_repo) == 1) {
      marker_keys.push_back(key_of(addition.path_in_repo));
    }
  }
  if (marker_keys.empty()) {
    return wanted;
  }
  std::set<std::string> done_entries; // entry folders, as keys
  for (const auto& entry : paths_info(marker_keys)) {
    done_entries.insert(entry.path.substr(0, entry.path.rfind('/')));
  }
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    auto key = key_of(request.additions[i].path_in_repo);
    auto slash = key.rfind('/');
    wanted[i] = slash == std::string::npos || !done_entries.contains(key.substr(0, slash));
  }
  return wanted;
}

std::vector<BucketRepository::Uploaded> BucketRepository::upload_contents(const CommitRequest& request,
                                                                          const std::vector<bool>& wanted,
                                                                          CommitResult& result,
                                                                          const util::ProgressCallback& progress)
{
  std::vector<Uploaded> uploaded(request.additions.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    if (wanted[i]) {
      todo.push_back(i);
    }
  }
  if (todo.empty()) {
    return uploaded;
  }
  http::Client client;
  xet::CasOptions options;
  options.stall_timeout = m_api.config().stall_timeout;
  options.retry = m_api.config().retry;
  const auto token_url = bucket_url("xet-write-token");
  xet::CasClient cas(xet::fetch_cas_token(client, token_url, m_api.config().token), options);
  cas.set_token_refresh([token_url, token = m_api.config().token] {
    http::Client refresh_client;
    return xet::fetch_cas_token(refresh_client, token_url, token);
  });
  std::uint64_t done = 0;
  for (std::size_t begin = 0; begin < todo.size(); begin += k_files_per_shard) {
    xet::CasUpload upload(cas);
    for (auto k = begin; k < todo.size() && k < begin + k_files_per_shard; ++k) {
      // The stop point: an interrupt while contents go up publishes nothing (publishing, a
      // few batch calls once every content is in the CAS, is not cut short).
      if (auto signal = commit_stop_signal(); signal != 0) {
        std::vector<std::string> remaining;
        for (auto index : todo) {
          remaining.push_back(request.additions[index].path_in_repo);
        }
        throw CommitInterrupted(signal, 0, std::move(remaining));
      }
      const auto& addition = request.additions[todo[k]];
      const auto& source = addition.source;
      auto packed = source.is_file()
                      ? upload.add_file(source.file_for(addition.path_in_repo))
                      : upload.add_bytes(xet::Bytes(reinterpret_cast<const std::uint8_t*>(source.bytes().data()),
                                                    source.bytes().size()));
      uploaded[todo[k]] = Uploaded{packed.file_hash.hex(), packed.sha256, packed.size};
      done += packed.size;
      if (progress) {
        progress(done, 0);
      }
    }
    const auto stats = upload.finish();
    result.xet_new_bytes += stats.new_bytes;
    result.xet_deduplicated_bytes += stats.deduplicated_bytes;
    result.xet_stored_bytes += stats.stored_bytes;
  }
  return uploaded;
}

std::vector<std::string> BucketRepository::delete_files(const std::vector<Deletion>& deletions)
{
  std::vector<std::string> paths;
  std::vector<std::string> single_keys;
  for (const auto& deletion : deletions) {
    auto path = folder_of_prefix(deletion.path_in_repo);
    if (deletion.is_folder) {
      for (auto& file : list_files(path)) {
        paths.push_back(std::move(file.path));
      }
    } else {
      single_keys.push_back(key_of(path));
    }
  }
  auto own_base = m_prefix.empty() ? std::size_t{0} : m_prefix.size() + 1;
  for (const auto& entry : paths_info(single_keys)) { // only what is there: a missing file is no failure
    paths.push_back(entry.path.substr(own_base));
  }
  std::vector<std::string_view> views(paths.begin(), paths.end());
  std::array<std::vector<std::size_t>, k_publish_phases> phases;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    phases[removal_phase(paths[i])].push_back(i);
  }
  for (const auto& phase : phases) {
    std::vector<std::string> keys;
    std::vector<std::string> lines;
    for (auto i : phase) {
      keys.push_back(key_of(paths[i]));
      lines.push_back(json{{"type", "deleteFile"}, {"path", keys.back()}}.dump());
    }
    publish_phase_batches(keys, lines, std::vector<std::string>(keys.size()));
  }
  return paths;
}

CommitResult BucketRepository::commit(const CommitRequest& request, const util::ProgressCallback& progress)
{
  for (const auto& addition : request.additions) {
    validate_path_in_repo(addition.path_in_repo);
  }
  for (const auto& deletion : request.deletions) {
    validate_path_in_repo(folder_of_prefix(deletion.path_in_repo));
  }
  require_token("push to");
  // What the bucket holds changes from here: its info is read again, not reused, also
  // after a commit that fails midway.
  m_info.forget();
  struct ForgetAfter {
    util::RecentAnswer<std::string>& info;
    ~ForgetAfter() { info.forget(); }
  } forget_after{m_info};
  if (request.parent_revision) {
    // Checked against the bucket's content as it is now (an hour turning over is no change).
    const auto now = revision();
    if (!now || bucket_content_of(*now) != bucket_content_of(*request.parent_revision)) {
      throw ConflictError("the bucket changed since revision " + *request.parent_revision,
                          "run again to apply the change on the current content");
    }
  }
  CommitResult result;
  const auto deleted = delete_files(request.deletions);
  result.files_deleted = deleted.size();
  const auto wanted = not_published_elsewhere(request);
  const auto uploaded = upload_contents(request, wanted, result, progress);

  std::vector<std::size_t> indices;
  std::vector<std::string_view> paths;
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    if (wanted[i]) {
      indices.push_back(i);
      paths.push_back(request.additions[i].path_in_repo);
    }
  }
  // Phase by phase; a phase's batches together (the machinery cuts them again by size).
  auto batches = phased_batches(paths, publish_phase, k_batch_operations);
  for (std::size_t b = 0; b < batches.size();) {
    const auto phase = publish_phase(paths[batches[b].front()]);
    std::vector<std::string> keys;
    std::vector<std::string> lines;
    std::vector<std::string> hashes;
    for (; b < batches.size() && publish_phase(paths[batches[b].front()]) == phase; ++b) {
      for (auto k : batches[b]) {
        const auto index = indices[k];
        const auto& addition = request.additions[index];
        keys.push_back(key_of(addition.path_in_repo));
        hashes.push_back(uploaded[index].xet_hash);
        lines.push_back(
          json{{"type", "addFile"}, {"path", keys.back()}, {"xetHash", hashes.back()}, {"mtime", mtime_ms(addition)}}
            .dump());
      }
    }
    publish_phase_batches(keys, lines, hashes);
  }
  for (auto index : indices) {
    const auto& file = uploaded[index];
    result.files.push_back(RepoFile{
      request.additions[index].path_in_repo, file.size, file.sha256, {}, std::string(k_etag_prefix) + file.xet_hash});
  }
  result.files_added = indices.size();
  result.created = result.files_added > 0 || result.files_deleted > 0;
  result.commits = result.created ? 1 : 0;
  m_info.forget();
  result.revision = revision().value_or("");
  return result;
}

} // namespace hubcache::storage
