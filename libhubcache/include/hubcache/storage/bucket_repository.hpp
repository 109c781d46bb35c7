#pragma once

#include "hubcache/hub/api.hpp"
#include "hubcache/hub/download.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/recent_answer.hpp"

#include <optional>
#include <string>
#include <vector>

namespace hubcache::storage {

// A cache repo in a Hugging Face Storage Bucket (`hf://buckets/<ns>/<name>[/<prefix>]`):
// the Hub's mutable, non-versioned object store, spoken to through its native API
// (shared/reference/hub-buckets-and-limits.md §1.2) with the HF token, as Hub repos are.
//
// Reads need no Xet: the tree listing (paginated), paths-info (<= 1,000 paths a call) and
// plain `resolve` downloads with Range resume. A listing gives no sha256, only the size and
// the Xet file hash, which RepoFile::etag carries as "xet:<hash>": a download is checked
// against both (the Xet hash of the bytes received is computed as they arrive).
//
// Writes go through Xet (one write token, xorbs and one shard for every file of the
// request, packed by xet::UploadPacker), then the batch API, which is not transactional:
// files are published phase by phase (publish_order.hpp: entry files, model.done markers,
// loose files, registry), each phase in batches of at most 1,000 operations sent only once
// the previous phase is in place; a batch's 422 failures, and any file a batch reported
// but the bucket does not hold, are sent again (3 rounds), else the push stops before
// the next phase. An entry whose model.done another writer published since the plan was
// made is left as that writer made it. The bucket API has no conditional writes: two
// writers of one file race, the last one's whole file wins.
class BucketRepository final : public Repository {
public:
  BucketRepository(std::string bucket_id, std::string prefix, hub::HubConfig config);

  std::string spec() const override;
  std::string describe() const override;
  bool exists() override;
  std::string create(const RepoCreateOptions& options) override;
  // A bucket has no commits: "<digest>.<hour>", a digest of what its info says of its
  // content (updatedAt, size, totalFiles) and the hour, one request whatever the bucket
  // holds. A listing remembered under it is trusted for an hour at most; nullopt for an
  // empty bucket.
  std::optional<std::string> revision() override;
  std::vector<RepoFile> list_files(std::string_view prefix = {}) override;
  std::vector<std::string> list_folders(std::string_view prefix = {}) override;
  std::optional<RepoFile> stat(std::string_view path) override;
  std::string read_file(std::string_view path) override;
  void download_file(std::string_view path, const std::filesystem::path& destination,
                     const util::ProgressCallback& progress = {}, bool flush = true) override;
  util::FileDigests download_listed(const RepoFile& listed, const std::filesystem::path& destination,
                                    const util::ProgressCallback& progress = {}, bool flush = true) override;
  void check_writable() override;
  CommitResult commit(const CommitRequest& request, const util::ProgressCallback& progress = {}) override;

  static constexpr std::size_t k_batch_operations = 1000; // per batch call, as huggingface_hub sends
  static constexpr std::size_t k_paths_info_batch = 1000; // per paths-info call, the API's limit
  static constexpr std::string_view k_etag_prefix = "xet:";

  // One entry of a bucket listing, as the bucket names it (the prefix included).
  struct Entry {
    std::string type; // "file" or "directory"
    std::string path;
    std::uint64_t size = 0;
    std::string xet_hash;
  };

private:
  std::string key_of(std::string_view path) const;
  std::string bucket_url(std::string_view route) const; // {E}/api/buckets/{id}[/route]
  hub::HubErrorContext context(std::string action, bool write = false) const;
  // The body of GET {E}/api/buckets/{id}, one request for the calls a command makes within
  // a second (exists, revision); a missing bucket throws RepoNotFound. A commit forgets it.
  std::string read_info();
  std::string fetch_info();
  std::vector<Entry> list_tree(std::string_view folder_key, bool recursive);
  std::vector<Entry> paths_info(const std::vector<std::string>& keys);
  std::optional<RepoFile> to_repo_file(const Entry& entry, std::string_view folder);
  [[noreturn]] void throw_missing(bool write);
  bool reread_through_xet(const RepoFile& listed, util::FileDigests& got, hub::DownloadTarget& target);
  void require_token(std::string_view action) const;

  // Writes (bucket_publish.cpp).
  struct Uploaded {
    std::string xet_hash;
    std::string sha256;
    std::uint64_t size = 0;
  };
  std::vector<Uploaded> upload_contents(const CommitRequest& request, const std::vector<bool>& wanted,
                                        CommitResult& result, const util::ProgressCallback& progress);
  std::vector<bool> not_published_elsewhere(const CommitRequest& request);
  // Sends `lines` (NDJSON operations on `keys`) and returns the keys that failed, with why.
  std::vector<std::pair<std::string, std::string>> send_batch(const std::vector<std::string>& keys,
                                                              const std::vector<std::string>& lines);
  // Sends every batch of one phase until the bucket holds it (3 rounds); throws otherwise.
  void publish_phase_batches(const std::vector<std::string>& keys, const std::vector<std::string>& lines,
                             const std::vector<std::string>& expected_hashes);
  // Deletes what `deletions` names and the bucket holds; returns those paths.
  std::vector<std::string> delete_files(const std::vector<Deletion>& deletions);

  std::string m_bucket_id;
  std::string m_prefix;
  hub::HubApi m_api;
  util::RecentAnswer<std::string> m_info;
};

// The content part of a bucket revision (without its hour).
std::string_view bucket_content_of(std::string_view revision);

} // namespace hubcache::storage
