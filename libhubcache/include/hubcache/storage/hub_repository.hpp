#pragma once

#include "hubcache/hub/api.hpp"
#include "hubcache/storage/repository.hpp"

#include <memory>
#include <mutex>
#include <string>

namespace hubcache::storage {

// A cache repo that is a Hugging Face Hub model repo, byte-compatible with what
// optimum-neuron writes: files live on branch main, large ones in LFS.
//
// commit() mirrors huggingface_hub's create_commit: preupload (which files are LFS, which
// are already there) -> LFS batch + uploads -> one NDJSON commit whose parentCommit is the
// head the plan was made against. When someone else commits first (409/412) the plan is
// remade on the new head, up to 6 attempts with backoff and jitter, as optimum-neuron's
// synchronize does; with CommitRequest::parent_revision set, a ConflictError is raised
// instead.
//
// Thread-safe as Repository requires: every call borrows a pooled connection, so parallel
// downloads reuse connections (HTTP keep-alive, HTTP/2 over TLS where offered).
class HubRepository final : public Repository {
public:
  // `repo_id` is `org/name`, or a bare `name`: with a token, that means `<user>/name` (the
  // token's user, from whoami) for every operation, as create() does.
  HubRepository(std::string repo_id, hub::HubConfig config);

  std::string spec() const override { return m_repo_id; }
  std::string describe() const override;
  bool exists() override;
  std::string create(const RepoCreateOptions& options) override;
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

  hub::HubApi& api() { return m_api; }

  static constexpr int k_max_commit_attempts = 6;
  static constexpr std::string_view k_branch = "main";

private:
  // The repo id with its namespace (resolved once, from whoami, for a bare name).
  std::string qualified_id();
  RepoFile to_repo_file(const hub::HubTreeEntry& entry) const;

  std::mutex m_id_mutex; // guards the one-time resolution of a bare name
  std::string m_repo_id;
  hub::HubApi m_api;
};

} // namespace hubcache::storage
