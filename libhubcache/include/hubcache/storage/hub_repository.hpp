#pragma once

#include "hubcache/hub/api.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/recent_answer.hpp"

#include <memory>
#include <mutex>
#include <string>

namespace hubcache::storage {

// A cache repo that is a Hugging Face Hub model repo, byte-compatible with what
// optimum-neuron writes: files live on branch main, large ones in LFS.
//
// commit() mirrors huggingface_hub's create_commit: preupload (which files are LFS, which
// are already there) -> LFS batch + uploads -> an NDJSON commit whose parentCommit is the
// head the plan was made against. A request that does not fit one commit (more files than
// the adaptive target, 250 at first, 20..1000 as commits prove fast or slow, or over
// 100 MiB of regular files) lands in several, as huggingface_hub >= 1.20 does, but by whole
// CommitRequest units in unit order, each commit naming the previous as its parent, and
// the next batch uploading while one commits: a reader of any head sees whole units only.
// When a commit does not land (409/412, 5xx, a timeout or a lost answer) the rest of the
// plan is remade on the new head: what landed is recognised there (no duplicate commit),
// up to 6 failed passes in a row with backoff and jitter, as optimum-neuron's synchronize
// does. A spent commit quota (429) is waited out when short, else CommitQuotaReached is
// thrown with what is left. With CommitRequest::parent_revision set, the request is one
// commit and a ConflictError is raised instead of a re-plan.
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
  std::map<std::string, std::int64_t> item_dates(std::string_view prefix, bool recursive) override;
  std::optional<RepoFile> stat(std::string_view path) override;
  std::string read_file(std::string_view path) override;
  void download_file(std::string_view path, const std::filesystem::path& destination,
                     const util::ProgressCallback& progress = {}, bool flush = true) override;
  util::FileDigests download_listed(const RepoFile& listed, const std::filesystem::path& destination,
                                    const util::ProgressCallback& progress = {}, bool flush = true) override;
  void check_writable() override;
  CommitResult commit(const CommitRequest& request, const util::ProgressCallback& progress = {}) override;

  hub::HubApi& api() { return m_api; }

  std::optional<std::size_t> max_folder_entries() const override;
  CommitPace commit_pace() const override { return {m_api.config().commit_spacing, m_api.config().commit_burst}; }

  static constexpr std::string_view k_branch = "main";

private:
  // The repo id with its namespace (resolved once, from whoami, for a bare name).
  std::string qualified_id();
  RepoFile to_repo_file(const hub::HubTreeEntry& entry) const;
  // The repo's info, one request for the calls a command makes within a second of each
  // other (exists, revision, the write check); a commit forgets it.
  std::optional<hub::HubRepoInfo> info();

  std::mutex m_id_mutex; // guards the one-time resolution of a bare name
  std::string m_repo_id;
  hub::HubApi m_api;
  util::RecentAnswer<std::optional<hub::HubRepoInfo>> m_info;
};

} // namespace hubcache::storage
