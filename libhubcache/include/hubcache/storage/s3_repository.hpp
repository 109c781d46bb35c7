#pragma once

#include "hubcache/aws/s3_client.hpp"
#include "hubcache/storage/repository.hpp"

#include <memory>

namespace hubcache::storage {

// A cache repo under an S3 prefix, in the Neuron SDK's own S3 cache layout:
//   s3://bucket/prefix/neuronxcc-<ver>/MODULE_<key>+<flags>/...   (NEURON_COMPILE_CACHE_URL=s3://bucket/prefix)
//   s3://bucket/prefix/.neuron-cache/repo.json                     the marker written by create
// A prefix without the marker that holds only compile-cache keys (what a SageMaker job
// wrote) is a repo as it is. Commits upload each entry's files, then its model.done, then
// the registry files: a reader that trusts model.done never sees a partial entry.
// Revisions are content-derived: a digest of every key, size and ETag. Files carry S3's
// ETag (RepoFile::etag), which callers compare with the local content's MD5.
class S3Repository final : public Repository {
public:
  S3Repository(aws::S3Url url, std::shared_ptr<aws::S3Client> client);

  std::string spec() const override;
  std::string describe() const override;
  // RepoNotFound (naming the bucket) when the bucket itself does not exist.
  bool exists() override;
  std::string create(const RepoCreateOptions& options) override;
  std::optional<std::string> revision() override;
  std::vector<RepoFile> list_files(std::string_view prefix = {}) override;
  std::optional<RepoFile> stat(std::string_view path) override;
  std::string read_file(std::string_view path) override;
  void download_file(std::string_view path, const std::filesystem::path& destination,
                     const util::ProgressCallback& progress = {}, bool flush = true) override;
  util::FileDigests download_listed(const RepoFile& listed, const std::filesystem::path& destination,
                                    const util::ProgressCallback& progress = {}, bool flush = true) override;
  // neuron-cache's own part size, then the AWS CLI's default (8 MiB).
  std::vector<std::uint64_t> etag_part_sizes() const override;
  void check_writable() override;
  CommitResult commit(const CommitRequest& request, const util::ProgressCallback& progress = {}) override;

  const aws::S3Url& url() const { return m_url; }
  // Transfers one call runs at once (--max-workers, else S3Config's default).
  std::size_t workers() const { return m_client->config().workers; }

private:
  std::string key_of(std::string_view path) const;
  std::string marker_key() const;
  void require_repo();
  // The first key under the prefix that is not compile-cache content, if any.
  std::optional<std::string> foreign_key();
  // commit's parts: its checks before anything is written (paths, the repo, the parent);
  // the deletions (a folder: every file under it), returning how many files went; the
  // additions' uploads phase by phase, returning the ETag S3 gave each.
  void check_commit(const CommitRequest& request);
  std::size_t delete_for_commit(const std::vector<Deletion>& deletions);
  std::vector<std::string> upload_in_phases(const CommitRequest& request, const std::vector<std::uint64_t>& sizes,
                                            const util::ProgressCallback& progress);

  aws::S3Url m_url;
  std::shared_ptr<aws::S3Client> m_client;
};

} // namespace hubcache::storage
