#include "hubcache/hub/download.hpp"
#include "hubcache/hub/api.hpp"

#include "detail.hpp"

#include <algorithm>

namespace hubcache::hub {

using json = nlohmann::json;
using namespace detail;
namespace stdfs = std::filesystem;

void StringDownloadTarget::write(std::string_view chunk)
{
  if (content.size() + chunk.size() > m_limit) {
    throw InvalidArgument("larger than " + std::to_string(m_limit) + " bytes, the limit for a file read whole");
  }
  content.append(chunk);
}

util::FileDigests StringDownloadTarget::digests()
{
  util::FileDigests digests;
  digests.size = content.size();
  digests.sha256 = util::hex_digest(util::HashAlgorithm::sha256, content);
  digests.git_blob_sha1 = util::git_blob_sha1(content);
  return digests;
}

namespace {

// Streams a download into its target while hashing it, and checks every 206 continues
// exactly where the previous attempt stopped.
class DownloadSink final : public http::BodySink {
public:
  DownloadSink(DownloadTarget& target, const util::ProgressCallback& progress) : m_target(target), m_progress(progress)
  {}

  bool start(long status, const http::Headers& headers) override
  {
    if (status == 206) {
      auto range = headers.get("content-range").value_or("");
      auto space = range.find(' ');
      auto dash = range.find('-');
      auto first = space != std::string::npos && dash != std::string::npos
                     ? parse_u64(std::string_view(range).substr(space + 1, dash - space - 1))
                     : std::nullopt;
      if (!first || *first != written) {
        throw IntegrityError("the server resumed the download at the wrong offset (" + range + ")",
                             "retry the command");
      }
      return true;
    }
    if (status == 200) {
      if (written > 0) {
        reset();
      }
      if (!expected_size) {
        if (auto length = headers.get("content-length")) {
          expected_size = parse_u64(*length);
        }
      }
      if (!expected_etag) {
        // A bucket file is named by its Xet hash, also 64 hex digits: not a sha256 to check.
        if (auto etag = headers.get("etag"); etag && normalize_etag(*etag) != headers.get("x-xet-hash")) {
          expected_etag = normalize_etag(*etag);
        }
      }
      if (!commit) {
        commit = headers.get("x-repo-commit");
      }
      if (expected_size) {
        m_target.expect(*expected_size);
      }
      return true;
    }
    return false;
  }

  void write(std::string_view chunk) override
  {
    if (expected_size && written + chunk.size() > *expected_size) {
      throw IntegrityError("the download is longer than the " + std::to_string(*expected_size)
                             + " bytes the Hub announced",
                           "retry later; nothing was installed");
    }
    // An LFS file is checked by its sha256 alone: the git blob sha1 would only cost a
    // second hash of every byte (it is the oid of regular files, announced as a 40-hex ETag).
    bool sha256_checks_it = expected_etag && expected_etag->size() == 64 && is_hex(*expected_etag);
    auto blob_size = expected_size ? expected_size : listed_git_blob ? listed_size : std::nullopt;
    if (!m_sha1 && blob_size && (!sha256_checks_it || listed_git_blob) && written == 0) {
      m_sha1.emplace(util::HashAlgorithm::sha1);
      m_sha1->update("blob " + std::to_string(*blob_size) + std::string(1, '\0'));
    }
    m_target.write(chunk);
    m_sha256.update(chunk);
    if (m_sha1) {
      m_sha1->update(chunk);
    }
    written += chunk.size();
    if (m_progress) {
      m_progress(written, expected_size.value_or(0));
    }
  }

  // What a resolve redirect announces of the file it leads to (an LFS or Xet file):
  // its size and hash, checked once the bytes are in, and the commit it was resolved at.
  void expect_linked(const http::Headers& headers)
  {
    if (auto etag = headers.get("x-linked-etag")) {
      expected_etag = normalize_etag(*etag);
    }
    if (auto size = headers.get("x-linked-size")) {
      expected_size = parse_u64(*size);
    }
    if (auto linked_commit = headers.get("x-repo-commit")) {
      commit = *linked_commit;
    }
  }

  void reset()
  {
    m_target.restart();
    m_sha256 = util::Hasher(util::HashAlgorithm::sha256);
    m_sha1.reset();
    written = 0;
  }

  // Bytes that come from elsewhere than a response (a Xet reconstruction) are announced
  // as a response's would be: the target then streams them as a download (blocks written
  // on a second thread, a big file past the page cache) instead of one write per chunk.
  void expect_announced_size()
  {
    if (expected_size) {
      m_target.expect(*expected_size);
    }
  }

  util::FileDigests digests()
  {
    if (m_sha1) {
      return util::FileDigests{written, m_sha256.hex_digest(), m_sha1->hex_digest()};
    }
    if (expected_size && expected_etag && expected_etag->size() == 64 && is_hex(*expected_etag)) {
      return util::FileDigests{written, m_sha256.hex_digest(), {}};
    }
    return m_target.digests();
  }

  std::uint64_t written = 0;
  std::optional<std::uint64_t> expected_size;
  std::optional<std::string> expected_etag;
  std::optional<std::string> commit;
  // The listing's size, and whether it gave a git blob sha1 (which must then be computed).
  std::optional<std::uint64_t> listed_size;
  bool listed_git_blob = false;

private:
  DownloadTarget& m_target;
  const util::ProgressCallback& m_progress;
  util::Hasher m_sha256{util::HashAlgorithm::sha256};
  std::optional<util::Hasher> m_sha1;
};

// The Xet file a resolve redirect announces (X-Xet-Hash, X-Linked-Size and a read-token
// URL on the Hub's own origin, where the Hub token may go), or nullopt.
std::optional<XetFileRef> xet_file_of(const http::Response& response, const std::string& hub_origin)
{
  auto hash = response.headers.get("x-xet-hash");
  auto size = response.headers.get("x-linked-size");
  auto link = response.headers.get("link");
  if (!hash || !size || !link || !parse_u64(*size)) {
    return std::nullopt;
  }
  auto token_url = http::parse_link(*link, "xet-auth");
  if (!token_url || http::url_origin(*token_url) != hub_origin) {
    return std::nullopt;
  }
  return XetFileRef{*hash, *token_url, *parse_u64(*size)};
}

// A download is whole only with the size and hash the Hub announced (when it did).
void check_announced(const DownloadSink& sink, const util::FileDigests& digests, const std::string& where)
{
  if (sink.expected_size && digests.size != *sink.expected_size) {
    throw IntegrityError("the download of " + where + " has " + std::to_string(digests.size) + " bytes, not the "
                           + std::to_string(*sink.expected_size) + " the Hub announced; nothing was installed",
                         "retry later");
  }
  if (sink.expected_etag) {
    const auto& etag = *sink.expected_etag;
    bool matches = true;
    if (etag.size() == 64 && is_hex(etag)) {
      matches = etag == digests.sha256;
    } else if (etag.size() == 40 && is_hex(etag)) {
      matches = etag == digests.git_blob_sha1;
    }
    if (!matches) {
      throw IntegrityError("the download of " + where + " does not match the hash the Hub announced (" + etag
                             + "); nothing was installed",
                           "retry later");
    }
  }
}

constexpr int k_max_redirects = 5;
constexpr int k_max_stalled_resumes = 5;

} // namespace

DownloadResult HubApi::download(std::string_view repo_id, std::string_view revision, std::string_view path,
                                DownloadTarget& target, const util::ProgressCallback& progress,
                                const ListedContent* listed)
{
  auto error_context = context("download '" + std::string(path) + "' from " + std::string(repo_id), repo_id);
  error_context.path = std::string(path);
  std::string url = m_config.endpoint + "/" + http::url_encode(repo_id, true) + "/resolve/" + http::url_encode(revision)
                    + "/" + http::url_encode(path, true);
  return download_from(std::move(url), error_context, target, progress, listed);
}

DownloadResult HubApi::download_from(std::string url, const HubErrorContext& error_context, DownloadTarget& target,
                                     const util::ProgressCallback& progress, const ListedContent* listed)
{
  require_online();
  const auto& path = error_context.path;
  const auto& repo_id = error_context.repo_id;
  auto hub_origin = http::url_origin(m_config.endpoint);
  DownloadSink sink(target, progress);
  if (listed != nullptr) {
    sink.listed_size = listed->size;
    sink.listed_git_blob = !listed->git_blob_sha1.empty();
  }
  auto client = m_clients.acquire();
  int redirects = 0;
  int stalled = 0;
  int status_attempt = 0;
  for (;;) {
    http::Request request;
    request.url = url;
    if (http::url_origin(url) == hub_origin) {
      request.headers = auth_headers(); // never sent to another host (the LFS CDN)
    }
    request.headers.emplace_back("Accept-Encoding", "identity");
    if (sink.written > 0) {
      request.headers.emplace_back("Range", "bytes=" + std::to_string(sink.written) + "-");
    }
    request.stall_timeout = m_config.stall_timeout;
    auto before = sink.written;
    http::Response response;
    try {
      require_online();
      response = client->perform(request, &sink);
    } catch (const http::TransportError& error) {
      stalled = sink.written > before ? 0 : stalled + 1;
      if (stalled >= k_max_stalled_resumes || !error.retryable()) {
        throw;
      }
      sleep_for(std::min(m_config.retry.base * stalled, m_config.retry.cap));
      continue; // resume with Range from what we have
    }
    if (response.status >= 300 && response.status < 400) {
      auto location = response.headers.get("location");
      if (!location || ++redirects > k_max_redirects) {
        throw RemoteError("cannot " + error_context.action + ": bad redirect from the Hub (HTTP "
                            + std::to_string(response.status) + ")",
                          "retry later");
      }
      sink.expect_linked(response.headers);
      if (auto xet_file = xet_file_of(response, hub_origin); xet_file && m_config.xet && m_config.xet_reader) {
        // Stored with Xet: rebuilt from the CAS, through the same sink (size and sha256
        // checks below) as a download from the Hub's redirect.
        sink.reset();
        sink.expect_announced_size();
        m_config.xet_reader(*xet_file, [&sink](std::string_view bytes) { sink.write(bytes); });
        break;
      }
      url = http::resolve_location(url, *location);
      continue;
    }
    if (response.ok()) {
      break;
    }
    if (auto delay = m_config.retry.delay_after(++status_attempt, &response)) {
      sleep_for(*delay);
      continue;
    }
    throw_hub_error(response, error_context, m_config.token);
  }

  auto digests = sink.digests();
  check_announced(sink, digests, "'" + std::string(path) + "' from " + std::string(repo_id));
  return DownloadResult{digests.size, digests.sha256, sink.commit.value_or(""), digests.git_blob_sha1};
}

std::string download_hub_file_text(const util::Environment& env, std::optional<std::string> token,
                                   std::string_view repo_id, std::string_view path, std::string_view revision)
{
  HubApi api(HubConfig::from_environment(env, token));
  StringDownloadTarget target;
  try {
    api.download(repo_id, revision, path, target);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(std::string(repo_id) + "/" + std::string(path) + ": " + error.what());
  }
  return std::move(target.content);
}

} // namespace hubcache::hub
