#pragma once

#include "hubcache/http/client.hpp"
#include "hubcache/hub/config.hpp"
#include "hubcache/hub/download.hpp"
#include "hubcache/hub/errors.hpp"
#include "hubcache/hub/protocol.hpp"
#include "hubcache/util/environment.hpp"
#include "hubcache/util/progress.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The routes of the Hugging Face Hub HTTP API a cache repo needs, as the official clients
// speak them (see shared/reference/hub-api.md).
namespace hubcache::hub {

struct WhoAmI {
  std::string name;
  std::string type;
  std::vector<std::string> orgs;
  std::string token_role; // read, write, fineGrained...; empty when not reported
};

struct HubRepoInfo {
  std::string id;
  std::optional<std::string> sha; // head of the default branch; absent for an empty repo
  bool is_private = false;
};

struct HubTreeEntry {
  std::string type; // file or directory
  std::string path;
  std::uint64_t size = 0;
  std::string oid;                    // git object id (for LFS files: of the pointer)
  std::optional<std::string> lfs_oid; // sha256 of the content, LFS files only
  std::string last_commit_date;       // ISO 8601, of the last commit that changed it (expand only)
};

// --- the API -------------------------------------------------------------------------

// One Hub endpoint and token. Safe to use from several threads: each call borrows its
// own libcurl handle from a pool, so connections are reused across calls.
class HubApi {
public:
  explicit HubApi(HubConfig config);

  const HubConfig& config() const { return m_config; }
  bool has_token() const { return m_config.token.has_value(); }

  WhoAmI whoami();
  // `repo_id` must have a namespace. Returns the id the Hub reports. A 409 throws
  // RepoAlreadyExists unless exist_ok.
  std::string create_repo(std::string_view repo_id, bool is_private, bool exist_ok);
  // nullopt when the repo does not exist or is not readable with the token (401/404:
  // the Hub deliberately does not tell them apart).
  std::optional<HubRepoInfo> repo_info(std::string_view repo_id);
  // Every entry under `path` (empty: the whole repo), following Link pagination.
  // Throws EntryNotFound when `path` does not exist.
  // expand: each entry with its last commit (the Hub answers that more slowly).
  std::vector<HubTreeEntry> list_tree(std::string_view repo_id, std::string_view revision, std::string_view path,
                                      bool recursive = true, bool expand = false);
  std::vector<HubTreeEntry> paths_info(std::string_view repo_id, std::string_view revision,
                                       const std::vector<std::string>& paths);
  PreuploadResult preupload(std::string_view repo_id, std::string_view revision,
                            const std::vector<PreuploadFile>& files);
  // The same for `count` files described on demand: `file_at(i)` is called while its
  // batch is built and each batch's answers go to `on_batch(begin, end, answers)` as they
  // arrive, so the samples and answers of tens of thousands of files are never all in
  // memory. Both run on worker threads, several batches at a time (each with its own
  // indices).
  void preupload(std::string_view repo_id, std::string_view revision, std::size_t count,
                 const std::function<PreuploadFile(std::size_t index)>& file_at,
                 const std::function<void(std::size_t begin, std::size_t end, PreuploadResult& answers)>& on_batch);
  std::vector<LfsBatchObject> lfs_batch(std::string_view repo_id, std::string_view branch,
                                        const std::vector<LfsObjectRef>& objects, bool offer_xet = false);

  // Body of an LFS upload: a file, or bytes held by the caller.
  struct UploadSource {
    std::optional<std::filesystem::path> file;
    const std::string* bytes = nullptr;
  };
  // Uploads every object that needs it (basic PUT or multipart parts + completion, then
  // verify), `workers` transfers at a time. `on_bytes_sent` gets each increment of bytes
  // sent as they go out (libcurl's transfer-info callback, several times a second per
  // transfer; one call at a time), so their sum rises steadily during one big file.
  void lfs_upload(const std::vector<LfsBatchObject>& objects,
                  const std::function<UploadSource(const std::string& oid)>& source_of,
                  const std::function<void(std::uint64_t)>& on_bytes_sent);

  // Whether the token may write to `repo_id`, asked without changing anything: deleting
  // a branch that cannot exist answers "revision not found" to writers and 401/403/404 to
  // everyone else (optimum-neuron >= 0.0.24 probes the same way). Throws AuthError.
  void check_write_access(std::string_view repo_id);
  struct CommitAnswer {
    long status = 0; // 200, or 409/412 when the parent moved on
    std::string commit_oid;
    std::string message;             // the server's error text (sanitized), for a failure
    std::optional<long> retry_after; // Retry-After seconds, when sent
  };
  // Posts an NDJSON payload from (a slice of) a file. Never retried: a lost answer could
  // otherwise make a duplicate commit. 409/412 are returned, every other failure thrown.
  CommitAnswer commit(std::string_view repo_id, std::string_view revision, const http::FileSlice& payload);

  // Downloads /{repo}/resolve/{revision}/{path}: follows the LFS redirect (without the
  // token when it leaves the Hub's origin), resumes with Range after a dropped connection,
  // and checks the size and the sha256 (LFS) or git blob sha1 (regular) the Hub advertises.
  // With `listed`, every digest that listing gives is computed too (a git blob sha1 even
  // where the Hub announces a sha256), for the caller to hold the bytes against it.
  DownloadResult download(std::string_view repo_id, std::string_view revision, std::string_view path,
                          DownloadTarget& target, const util::ProgressCallback& progress = {},
                          const ListedContent* listed = nullptr);

  // The same from `url` on the Hub's origin (a Storage Bucket's /buckets/{id}/resolve/{path});
  // `context` names the file (repo_id, path) in errors.
  DownloadResult download_from(std::string url, const HubErrorContext& context, DownloadTarget& target,
                               const util::ProgressCallback& progress = {}, const ListedContent* listed = nullptr);

  // One request with the retry policy (retryable statuses and network errors); returns
  // the last response, whatever its status.
  http::Response send(http::Request request, bool retry = true);
  // send(), then throw_hub_error() unless 2xx.
  http::Response call(http::Request request, const HubErrorContext& context, bool retry = true);

  std::vector<std::pair<std::string, std::string>> auth_headers() const;
  std::string api_url(std::string_view repo_id, std::string_view route) const;
  void require_online() const;
  HubErrorContext context(std::string action, std::string_view repo_id = {}, bool write = false) const;

private:
  HubConfig m_config;
  http::ClientPool m_clients;
};

// Whole text of one file of any Hub model repo (for `lookup`): throws RepoNotFound,
// EntryNotFound, RevisionNotFound, AuthError, HubOfflineError or RemoteError.
std::string download_hub_file_text(const util::Environment& env, std::optional<std::string> token,
                                   std::string_view repo_id, std::string_view path, std::string_view revision = "main");

} // namespace hubcache::hub
