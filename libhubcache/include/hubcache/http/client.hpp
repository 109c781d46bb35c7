#pragma once

#include "hubcache/error.hpp"
#include "hubcache/util/environment.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// A small HTTP client over libcurl, shaped for the Hub protocol: no automatic redirects
// (callers decide where credentials go), bodies streamed from and to disk, and the retry
// policy of the official clients as pure, testable functions.
namespace hubcache::http {

// Response headers in arrival order; lookups ignore case.
class Headers {
public:
  void add(std::string name, std::string value) { m_entries.emplace_back(std::move(name), std::move(value)); }
  void clear() { m_entries.clear(); }
  std::optional<std::string> get(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& entries() const { return m_entries; }

private:
  std::vector<std::pair<std::string, std::string>> m_entries;
};

// A request body read from a slice of a file at send time, so a multi-GB file is never
// held in memory and every retry re-reads it from the start of the slice.
struct FileSlice {
  std::filesystem::path path; // names the file in errors; opened unless `fd` is given
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  int fd = -1; // an open file the caller keeps open (one without a name: a private payload)
};

// Signs a request with AWS Signature Version 4, computed by libcurl (CURLOPT_AWS_SIGV4).
// The session token, when there is one, travels as an `x-amz-security-token` header.
struct AwsSigV4 {
  std::string region;
  std::string service = "s3";
  std::string access_key_id;
  std::string secret_access_key;
};

// Below this many bytes a second over a request's stall window, a transfer is stalled.
inline constexpr long k_min_transfer_rate = 1024;
// What an API answer kept in memory may weigh (a Hub tree page, an S3 listing).
inline constexpr std::size_t k_default_body_limit = std::size_t{32} << 20;

struct Request {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers; // includes Authorization when wanted
  std::optional<std::string> body;                          // bytes body
  // Or bytes the caller keeps alive until the request returns (a xorb of 8 MiB), sent as
  // they are: no copy.
  std::optional<std::string_view> body_view;
  std::optional<FileSlice> body_file; // or a file slice
  // Abort when fewer than `min_rate` bytes a second moved over this long (unset: the
  // caller's default, 30 s for a bare Client; 0: never), so a server that trickles a byte
  // now and then trips it like one that went silent; and a total limit (0: none).
  std::optional<std::chrono::seconds> stall_timeout;
  long min_rate = k_min_transfer_rate;
  std::chrono::seconds total_timeout{0};
  // The most bytes of an answer kept in Response::body when no sink takes it: a bigger
  // answer is a RemoteError, never a growing buffer.
  std::size_t body_limit = k_default_body_limit;
  // The bytes the answer is expected to carry when that is known to be large (a xorb range):
  // it gets the large receive buffer a sink gets, not libcurl's 16 KiB, so a gigabyte costs
  // a few thousand reads instead of 65,000 reads and as many polls.
  std::size_t expected_body = 0;
  std::optional<AwsSigV4> aws_sigv4;
  // Connection timeout (0: the 10 s default); metadata services want a short one.
  std::chrono::milliseconds connect_timeout{0};
  // Called as the body goes out with the bytes of it sent so far by this attempt (from
  // libcurl's transfer-info callback, several times a second): byte-level progress of a
  // big upload. A retry starts again from 0. May throw to abort the transfer.
  std::function<void(std::uint64_t sent)> on_upload_progress;
};

struct Response {
  long status = 0;
  Headers headers;
  std::string body; // error bodies and bodies not streamed to a sink (capped for sinks)
  std::string url;
  std::optional<std::string> request_id() const { return headers.get("x-request-id"); }
  bool ok() const { return status >= 200 && status < 300; }
};

// Receives the body of a response as it arrives. `start` is called once the headers of
// the final response are in; returning false keeps the body in Response::body instead
// (e.g. for a 302 or an error page). `write` may throw to abort the transfer.
class BodySink {
public:
  virtual ~BodySink() = default;
  virtual bool start(long status, const Headers& headers) = 0;
  virtual void write(std::string_view chunk) = 0;
};

// The request never got a complete answer (connection refused or dropped, timeout,
// truncated body). The message names the host, never the request headers.
class TransportError : public RemoteError {
public:
  TransportError(const std::string& message, std::string hint, int curl_code, bool retryable)
    : RemoteError(message, std::move(hint)), m_curl_code(curl_code), m_retryable(retryable)
  {}
  int curl_code() const noexcept { return m_curl_code; }
  // False for failures a retry cannot fix: unknown host, bad URL, TLS verification.
  bool retryable() const noexcept { return m_retryable; }

private:
  int m_curl_code;
  bool m_retryable;
};

// `neuron-cache/<version>` unless changed; the CLI sets its version at start-up.
void set_user_agent(std::string user_agent);
std::string user_agent();

// One libcurl easy handle. Reusing it across requests keeps connections alive; a handle
// must only be used by one thread at a time (see ClientPool).
class Client {
public:
  Client();
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // One attempt, no retry, no redirect following. Throws TransportError on network failure.
  Response perform(const Request& request, BodySink* sink = nullptr);

  struct Impl; // public so the libcurl callbacks can reach it

private:
  std::unique_ptr<Impl> m_impl;
};

// Idle clients kept for reuse, one borrowed per worker thread.
class ClientPool {
public:
  class Lease {
  public:
    Lease(ClientPool& pool, std::unique_ptr<Client> client) : m_pool(&pool), m_client(std::move(client)) {}
    ~Lease();
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Client& operator*() const { return *m_client; }
    Client* operator->() const { return m_client.get(); }

  private:
    ClientPool* m_pool;
    std::unique_ptr<Client> m_client;
  };

  Lease acquire();

private:
  std::mutex m_mutex;
  std::vector<std::unique_ptr<Client>> m_idle;
};

// Retries for 408, 429 and 5xx answers and network errors: exponential backoff from
// `base` doubling up to `cap`, or what the server asks (Retry-After seconds, or
// `RateLimit: "api";r=0;t=N` -> N+1 seconds), capped at `server_wait_cap`.
struct RetryPolicy {
  int max_attempts = 6; // the first try and 5 retries, as huggingface_hub
  std::chrono::milliseconds base{1000};
  std::chrono::milliseconds cap{8000};
  std::chrono::milliseconds server_wait_cap{60000};

  // NEURON_CACHE_HTTP_BACKOFF_BASE_MS sets the length of one backoff "second" (default
  // 1000): every wait, server-requested ones included, scales with it. Tests use a few ms.
  static RetryPolicy from_environment(const util::Environment& env);

  // The wait before attempt `attempt + 1` (attempt counts from 1) after `response`
  // (nullptr: a network error), or nullopt when it must not be retried.
  std::optional<std::chrono::milliseconds> delay_after(int attempt, const Response* response) const;
};

bool is_retryable_status(long status) noexcept;
// `Retry-After: <seconds>` (the HTTP-date form is ignored, as huggingface_hub does).
std::optional<long> parse_retry_after(std::string_view value);
// `"api";r=0;t=42` -> 42 when the remaining count r is 0, else nullopt.
std::optional<long> parse_ratelimit_reset(std::string_view value);
// The target of `rel="next"` in a Link header (several comma-separated values allowed).
std::optional<std::string> parse_link_next(std::string_view value);
// The target of `rel="<relation>"` (lowercase) in a Link header, e.g. Xet's "xet-auth".
std::optional<std::string> parse_link(std::string_view value, std::string_view relation);

// Percent-encoding: unreserved characters stay, '/' too when `keep_slash`.
std::string url_encode(std::string_view text, bool keep_slash = false);
// `scheme://host[:port]` of an absolute URL, lowercase; empty when not absolute.
std::string url_origin(std::string_view url);
// `location` resolved against `base` (absolute, or a path on the same origin).
std::string resolve_location(std::string_view base, std::string_view location);

} // namespace hubcache::http
