#pragma once

#include "hubcache/util/environment.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/http/client.hpp"
#include "hubcache/storage/repository.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The Hugging Face Hub HTTP API as the official clients speak it (see
// shared/reference/hub-api.md): auth and environment, typed errors, the routes a cache
// repo needs, and the pure pieces of the upload protocol.
namespace hubcache::hub {

inline constexpr std::string_view k_default_hub_endpoint = "https://huggingface.co";

// HF_ENDPOINT without its trailing '/', else https://huggingface.co.
std::string hub_endpoint(const util::Environment& env);
// HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) set to 1/ON/YES/TRUE.
bool hub_offline(const util::Environment& env);
// The token the official clients would use: the explicit one, HF_TOKEN,
// HUGGING_FACE_HUB_TOKEN, the file HF_TOKEN_PATH, else $HF_HOME/token. Values are trimmed
// and an empty one means "none". An unreadable token file is ignored, as Python does.
std::optional<std::string> resolve_hub_token(const util::Environment& env, const std::optional<std::string>& explicit_token);

// Raised instead of touching the network when HF_HUB_OFFLINE is set.
class HubOfflineError : public RemoteError {
public:
  using RemoteError::RemoteError;
};

struct HubConfig {
  std::string endpoint{k_default_hub_endpoint};
  std::optional<std::string> token;
  bool offline = false;
  http::RetryPolicy retry;
  std::size_t workers = 4;                  // transfers in flight
  std::chrono::seconds stall_timeout{30};   // HF_HUB_DOWNLOAD_TIMEOUT, at least 1 s
  std::chrono::milliseconds conflict_base{1000}; // commit re-plan backoff, scaled like `retry`

  static HubConfig from_environment(const util::Environment& env, const std::optional<std::string>& explicit_token);
};

// What an error needs to say what happened and what to do next.
struct HubErrorContext {
  std::string action;  // "create the repo alice/cache"
  std::string repo_id; // empty when not about one repo
  std::string path;    // a file path for EntryNotFound, if any
  bool write = false;  // the request needs write access
  bool token_sent = false;
};

// Maps a failed response to a typed error: X-Error-Code first (RepoNotFound,
// RevisionNotFound, EntryNotFound, GatedRepo), then the status. The X-Request-Id goes into
// the message, the next step into the hint; `token` is scrubbed from anything the server
// echoed.
[[noreturn]] void throw_hub_error(const http::Response& response, const HubErrorContext& context,
                                  const std::optional<std::string>& token);

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
};

// --- upload protocol pieces (pure, unit-tested) ------------------------------------

inline constexpr std::size_t k_preupload_batch_size = 256;
inline constexpr std::size_t k_lfs_batch_size = 256;
inline constexpr std::size_t k_preupload_sample_size = 512;

std::string base64_encode(std::string_view bytes);
std::string lfs_pointer_text(std::string_view sha256, std::uint64_t size);
// [begin, end) index ranges of at most `batch` items covering `count`.
std::vector<std::pair<std::size_t, std::size_t>> batch_ranges(std::size_t count, std::size_t batch);

// One line each (with its '\n') of the NDJSON commit payload.
std::string commit_header_line(std::string_view summary, std::string_view description,
                               const std::optional<std::string>& parent_commit);
std::string commit_lfs_file_line(std::string_view path, std::string_view sha256, std::uint64_t size);
std::string commit_deletion_line(std::string_view path, bool is_folder);
// A regular file line is written in pieces so its content can be streamed: prefix,
// base64 content, suffix.
std::string commit_file_line_prefix(std::string_view path);
inline constexpr std::string_view k_commit_file_line_suffix = "\"}}\n";

struct PreuploadFile {
  std::string path;
  std::uint64_t size = 0;
  std::string sample; // first <= 512 bytes, raw
};
struct PreuploadAnswer {
  std::string path;
  bool lfs = false;
  bool should_ignore = false;
  std::optional<std::string> remote_oid; // sha256 (lfs) or git blob sha1 (regular)
};
struct PreuploadResult {
  std::optional<std::string> commit_oid;
  std::vector<PreuploadAnswer> files;
};
std::string preupload_request_body(const std::vector<PreuploadFile>& files, std::size_t begin, std::size_t end);
PreuploadResult parse_preupload_response(std::string_view body);

struct LfsAction {
  std::string href;
  std::vector<std::pair<std::string, std::string>> header;
};
struct LfsBatchObject {
  std::string oid;
  std::uint64_t size = 0;
  std::optional<LfsAction> upload; // absent: the Hub already has the object
  std::optional<LfsAction> verify;
};
struct LfsObjectRef {
  std::string oid;
  std::uint64_t size = 0;
};
std::string lfs_batch_request_body(const std::vector<LfsObjectRef>& objects, std::size_t begin, std::size_t end,
                                   std::string_view branch);
std::vector<LfsBatchObject> parse_lfs_batch_response(std::string_view body);

// Part URLs of an HF multipart upload, ordered by part number; nullopt for a basic upload.
// Throws RemoteError when the part count does not cover `size` with `chunk_size` parts.
struct MultipartPlan {
  std::uint64_t chunk_size = 0;
  std::vector<std::string> part_urls;
};
std::optional<MultipartPlan> multipart_plan(const LfsAction& upload, std::uint64_t size);

// --- downloads ---------------------------------------------------------------------

// Where downloaded bytes go. `restart()` drops what was written (the server ignored our
// Range); `digests()` reads back what was written when streaming hashes were impossible.
class DownloadTarget {
public:
  virtual ~DownloadTarget() = default;
  virtual void restart() = 0;
  virtual void write(std::string_view chunk) = 0;
  virtual util::FileDigests digests() = 0;
};

// The content of one file in memory (for small files).
class StringDownloadTarget final : public DownloadTarget {
public:
  void restart() override { content.clear(); }
  void write(std::string_view chunk) override { content.append(chunk); }
  util::FileDigests digests() override;
  std::string content;
};

struct DownloadResult {
  std::uint64_t size = 0;
  std::string sha256;
  std::string commit; // X-Repo-Commit, when sent
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
  std::vector<HubTreeEntry> list_tree(std::string_view repo_id, std::string_view revision, std::string_view path,
                                      bool recursive = true);
  std::vector<HubTreeEntry> paths_info(std::string_view repo_id, std::string_view revision,
                                       const std::vector<std::string>& paths);
  PreuploadResult preupload(std::string_view repo_id, std::string_view revision,
                            const std::vector<PreuploadFile>& files);
  std::vector<LfsBatchObject> lfs_batch(std::string_view repo_id, std::string_view branch,
                                        const std::vector<LfsObjectRef>& objects);

  // Body of an LFS upload: a file, or bytes held by the caller.
  struct UploadSource {
    std::optional<std::filesystem::path> file;
    const std::string* bytes = nullptr;
  };
  // Uploads every object that needs it (basic PUT or multipart parts + completion, then
  // verify), `workers` transfers at a time. `progress` gets bytes sent so far.
  void lfs_upload(const std::vector<LfsBatchObject>& objects,
                  const std::function<UploadSource(const std::string& oid)>& source_of,
                  const std::function<void(std::uint64_t)>& on_bytes_sent);

  struct CommitAnswer {
    long status = 0; // 200, or 409/412 when the parent moved on
    std::string commit_oid;
  };
  // Posts an NDJSON payload from a file. Never retried: a lost answer could otherwise
  // make a duplicate commit. 409/412 are returned, every other failure thrown.
  CommitAnswer commit(std::string_view repo_id, std::string_view revision, const std::filesystem::path& payload);

  // Downloads /{repo}/resolve/{revision}/{path}: follows the LFS redirect (without the
  // token when it leaves the Hub's origin), resumes with Range after a dropped connection,
  // and checks the size and the sha256 (LFS) or git blob sha1 (regular) the Hub advertises.
  DownloadResult download(std::string_view repo_id, std::string_view revision, std::string_view path,
                          DownloadTarget& target, const util::ProgressCallback& progress = {});

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

// Runs task(0..count-1) on up to `workers` threads; the first exception stops the rest
// from starting and is rethrown.
void run_parallel(std::size_t count, std::size_t workers, const std::function<void(std::size_t)>& task);

// Whole text of one file of any Hub model repo (for `lookup`): throws RepoNotFound,
// EntryNotFound, RevisionNotFound, AuthError, HubOfflineError or RemoteError.
std::string download_hub_file_text(const util::Environment& env, std::optional<std::string> token, std::string_view repo_id,
                                   std::string_view path, std::string_view revision = "main");

} // namespace hubcache::hub
