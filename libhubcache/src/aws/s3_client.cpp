#include "hubcache/aws/s3_client.hpp"

#include "detail.hpp"
#include "hubcache/aws/config.hpp"
#include "hubcache/error.hpp"
#include "hubcache/http/listing_bounds.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/text.hpp"
#include "hubcache/util/thread_pool.hpp"
#include "s3_content_check.hpp"
#include "s3_xml.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <thread>

namespace hubcache::aws {

using detail::parse_u64;
using xml::unquote_etag;

namespace {

constexpr std::string_view k_empty_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr std::size_t k_xml_limit = xml::k_max_document_size;
constexpr std::uint64_t k_min_part_size = std::uint64_t{5} << 20;
constexpr std::uint64_t k_max_parts = 10000;

// Text from a server as it may appear in one line of a message.
std::string printable(std::string_view text, std::size_t limit = 200)
{
  return util::escape_control(text, limit);
}

// SSE-KMS and SSE-C objects have ETags that look like an MD5 and are not one.
bool etag_is_checksum(const http::Headers& headers)
{
  auto encryption = headers.get("x-amz-server-side-encryption").value_or("");
  return encryption != "aws:kms" && encryption != "aws:kms:dsse"
         && !headers.get("x-amz-server-side-encryption-customer-algorithm");
}

// Server text with the credentials in use blanked out: an error answer may echo what it
// was sent (a hostile or broken endpoint may echo anything).
std::string redact(std::string text, const Credentials& credentials)
{
  for (const auto* secret : {&credentials.secret_access_key, &credentials.session_token}) {
    if (secret->empty()) {
      continue;
    }
    for (auto at = text.find(*secret); at != std::string::npos; at = text.find(*secret, at)) {
      text.replace(at, secret->size(), "***");
    }
  }
  return text;
}

std::string where(const S3Client::Call& call)
{
  return "s3://" + call.bucket + (call.key.empty() ? "" : "/" + printable(call.key));
}

// Sends a 2xx body to the caller's sink (or keeps it, bounded); error bodies stay in
// Response::body for the error report.
class RoutingSink final : public http::BodySink {
public:
  explicit RoutingSink(http::BodySink* target) : m_target(target), m_kept(k_xml_limit) {}
  bool start(long status, const http::Headers& headers) override
  {
    m_started = true;
    if (status < 200 || status >= 300) {
      return false;
    }
    m_forwarding = m_target == nullptr || m_target->start(status, headers);
    return m_forwarding;
  }
  void write(std::string_view chunk) override
  {
    if (m_target != nullptr) {
      m_target->write(chunk);
    } else {
      m_kept.write(chunk);
    }
  }
  bool started() const { return m_started; }
  std::string take() { return std::move(m_kept.body()); }

private:
  http::BodySink* m_target;
  detail::CappedBody m_kept;
  bool m_started = false;
  bool m_forwarding = false;
};

// A GetObject (or HeadObject) answered with a redirect to where the bytes are: the Hugging
// Face S3 gateway sends 302 to its CDN. S3's own 301/307 for a bucket in another region
// (x-amz-bucket-region) are not this: those are signed again for that region.
bool is_object_redirect(const S3Client::Call& call, const http::Response& response)
{
  const bool moved = response.status == 302 || response.status == 303 || response.status == 307;
  return moved && !call.key.empty() && (call.method == "GET" || call.method == "HEAD")
         && response.headers.get("location") && !response.headers.get("x-amz-bucket-region");
}

// Follows an object redirect with a plain request: no signature, no session token, no
// x-amz-* header. The redirect URL is the authorisation, and the CDN it points at is
// another host that must never see the caller's credentials.
http::Response follow_object_redirect(http::Client& client, const S3Client::Call& call, http::Response response,
                                      http::BodySink* sink, RoutingSink& routing, std::chrono::seconds stall_timeout)
{
  constexpr int k_max_hops = 5;
  for (int hop = 0; hop < k_max_hops; ++hop) {
    auto location = response.headers.get("location").value_or("");
    auto url = location.starts_with("/") ? http::url_origin(response.url) + location : location;
    if (location.size() > 8192 || !(url.starts_with("https://") || url.starts_with("http://"))) {
      throw RemoteError("S3 redirected " + where(call) + " to an unusable location '" + printable(location) + "'");
    }
    http::Request plain;
    plain.method = call.method;
    plain.url = url;
    plain.stall_timeout = stall_timeout;
    routing = RoutingSink(sink);
    response = client.perform(plain, &routing);
    if (!is_object_redirect(call, response)) {
      return response;
    }
  }
  throw RemoteError("S3 redirected " + where(call) + " more than " + std::to_string(k_max_hops) + " times");
}

} // namespace

bool is_valid_bucket_name(std::string_view name) noexcept
{
  if (name.size() < 3 || name.size() > 63) {
    return false;
  }
  auto edge = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!edge(name.front()) || !edge(name.back()) || name.find("..") != std::string_view::npos) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [&](char c) { return edge(c) || c == '.' || c == '-'; });
}

S3Url parse_s3_url(std::string_view text)
{
  if (!text.starts_with("s3://")) {
    throw InvalidArgument("'" + printable(text) + "' is not an s3:// URL");
  }
  auto rest = text.substr(5);
  auto slash = rest.find('/');
  S3Url url;
  url.bucket = std::string(rest.substr(0, slash));
  if (!is_valid_bucket_name(url.bucket)) {
    throw InvalidArgument("'" + printable(url.bucket) + "' in " + printable(text) + " is not a valid S3 bucket name",
                          "bucket names are 3 to 63 lowercase letters, digits, '.' and '-'");
  }
  std::string prefix = slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash + 1));
  while (!prefix.empty() && prefix.back() == '/') {
    prefix.pop_back();
  }
  if (!prefix.empty()) {
    std::size_t start = 0;
    while (start <= prefix.size()) {
      auto end = prefix.find('/', start);
      if (end == std::string::npos) {
        end = prefix.size();
      }
      auto part = std::string_view(prefix).substr(start, end - start);
      if (part.empty() || part == "." || part == ".." || std::any_of(part.begin(), part.end(), [](char c) {
            return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
          })) {
        throw InvalidArgument("the key prefix in " + printable(text) + " is not a clean path",
                              "write it as s3://bucket/some/prefix");
      }
      start = end + 1;
    }
  }
  url.prefix = std::move(prefix);
  return url;
}

S3Config S3Config::from_environment(const util::Environment& env, const Overrides& overrides)
{
  S3Config config;
  auto region = resolve_region(env, overrides);
  config.region = region.name;
  config.region_source = region.source;
  auto endpoint = resolve_s3_endpoint(env, config.region, overrides);
  config.endpoint = endpoint.url;
  config.custom_endpoint = endpoint.custom;
  config.endpoint_source = endpoint.source;
  config.sign = !overrides.no_sign_request;
  config.retry = http::RetryPolicy::from_environment(env);
  auto size_setting = [&](const char* name, std::uint64_t& out, const char* unit = "bytes") {
    if (auto text = env.get_non_empty(name)) {
      auto value = parse_u64(*text);
      if (!value || *value == 0) {
        throw ConfigError(std::string(name) + " must be a positive number of " + unit);
      }
      out = *value;
    }
  };
  size_setting("NEURON_CACHE_S3_MULTIPART_THRESHOLD", config.multipart_threshold);
  size_setting("NEURON_CACHE_S3_PART_SIZE", config.part_size);
  std::uint64_t stall_seconds = static_cast<std::uint64_t>(config.stall_timeout.count());
  size_setting("NEURON_CACHE_S3_STALL_TIMEOUT", stall_seconds, "seconds");
  config.stall_timeout = std::chrono::seconds(std::min<std::uint64_t>(stall_seconds, 3600));
  config.part_size = std::max(config.part_size, k_min_part_size);
  return config;
}

S3Client::S3Client(S3Config config, std::shared_ptr<CredentialChain> credentials)
  : m_config(std::move(config)), m_credentials(std::move(credentials))
{}

std::string S3Client::credential_source()
{
  if (!m_config.sign) {
    return "no credentials (--no-sign-request)";
  }
  try {
    return m_credentials->get().source;
  } catch (const Error&) {
    return "no source";
  }
}

std::string S3Client::url_for(const Call& call, const std::string& region) const
{
  std::vector<std::pair<std::string, std::string>> query = call.query;
  // SigV4 signs the query in key order; sending it in that order keeps libcurl's
  // canonical form and S3's identical.
  std::sort(query.begin(), query.end());
  std::string query_text;
  for (const auto& [name, value] : query) {
    query_text += (query_text.empty() ? "?" : "&") + http::url_encode(name) + "=" + http::url_encode(value);
  }
  std::string key = http::url_encode(call.key, true);
  if (m_config.custom_endpoint || call.bucket.find('.') != std::string::npos) {
    auto base = m_config.custom_endpoint ? m_config.endpoint : s3_endpoint_for_region(region);
    return base + "/" + call.bucket + (call.key.empty() ? "" : "/" + key) + query_text;
  }
  auto base = s3_endpoint_for_region(region);
  return "https://" + call.bucket + "." + base.substr(std::string_view("https://").size()) + "/" + key + query_text;
}

std::string S3Client::region_of(const std::string& bucket)
{
  std::lock_guard lock(m_region_mutex);
  auto it = m_bucket_regions.find(bucket);
  return it != m_bucket_regions.end() ? it->second : m_config.region;
}

http::Request S3Client::request_for(const Call& call, const Credentials& credentials, const std::string& region) const
{
  http::Request request;
  request.method = call.method;
  request.url = url_for(call, region);
  request.body = call.body;
  request.body_file = call.body_file;
  request.headers = call.headers;
  std::string payload = call.payload_sha256;
  if (payload.empty()) {
    payload = call.body        ? util::hex_digest(util::HashAlgorithm::sha256, *call.body)
              : call.body_file ? std::string("UNSIGNED-PAYLOAD")
                               : std::string(k_empty_sha256);
  }
  request.headers.emplace_back("x-amz-content-sha256", payload);
  if (!credentials.session_token.empty()) {
    request.headers.emplace_back("x-amz-security-token", credentials.session_token);
  }
  if (m_config.sign) {
    request.aws_sigv4 = http::AwsSigV4{region, "s3", credentials.access_key_id, credentials.secret_access_key};
  }
  request.stall_timeout = m_config.stall_timeout;
  return request;
}

namespace {

bool is_expired_credentials(const std::string& code)
{
  return code == "ExpiredToken" || code == "TokenRefreshRequired" || code == "RequestExpired";
}

// The errors no retry mends, each as the typed error that names what to do.
void throw_if_final(const S3Client::Call& call, const http::Response& response, const std::string& code,
                    const std::string& detail, const Credentials& credentials, const std::string& region,
                    const std::string& region_source)
{
  if (response.status == 301 || code == "PermanentRedirect") {
    throw RemoteError("bucket " + call.bucket + " is not in region " + region + " (from " + region_source
                        + ") and S3 did not say where it is",
                      "set AWS_REGION to the bucket's region");
  }
  if (is_expired_credentials(code)) {
    throw AuthError("the AWS credentials from " + credentials.source + " have expired (" + detail + ")",
                    "renew them and run again");
  }
  if (code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "InvalidToken") {
    throw AuthError("S3 rejected the AWS credentials from " + credentials.source + " (" + detail + ")",
                    "check the keys and the session token");
  }
  if (code == "NoSuchBucket" || (response.status == 404 && call.key.empty())) {
    throw RepoNotFound("S3 bucket " + call.bucket + " does not exist", "create it, or check the bucket name");
  }
  if (code == "NoSuchKey" || (response.status == 404 && call.method == "HEAD")) {
    throw EntryNotFound(where(call) + " does not exist");
  }
  if (response.status == 403) {
    throw AuthError("access to " + where(call) + " is denied for the AWS credentials from " + credentials.source + " ("
                      + detail + ")",
                    "use a bucket these credentials may use, or other credentials");
  }
}

// How long to wait before trying again, when S3 says it is busy or failed for the moment.
std::optional<std::chrono::milliseconds> retry_delay(const http::RetryPolicy& retry, const std::string& code,
                                                     const http::Response& response, int attempt)
{
  if (code == "SlowDown" || code == "RequestTimeout") {
    // S3 asks to slow down with 503 (or 400 for timeouts): back off whatever the status.
    http::Response as_unavailable = response;
    as_unavailable.status = 503;
    return retry.delay_after(attempt, &as_unavailable);
  }
  if (code == "InternalError" || code == "ServiceUnavailable" || http::is_retryable_status(response.status)) {
    return retry.delay_after(attempt, &response);
  }
  return std::nullopt;
}

} // namespace

http::Response S3Client::call(const Call& call, http::BodySink* sink, std::vector<long> expected)
{
  bool refreshed = false;
  int region_moves = 0;
  for (int attempt = 1;; ++attempt) {
    auto credentials =
      m_config.sign ? m_credentials->get() : Credentials{{}, {}, {}, {}, "--no-sign-request (anonymous)"};
    const auto region = region_of(call.bucket);
    const auto request = request_for(call, credentials, region);
    RoutingSink routing(sink);
    http::Response response;
    try {
      auto client = m_clients.acquire();
      response = client->perform(request, &routing);
      if (is_object_redirect(call, response)) {
        response = follow_object_redirect(*client, call, std::move(response), sink, routing, m_config.stall_timeout);
      }
    } catch (const http::TransportError& error) {
      auto delay = error.retryable() && !(routing.started() && sink != nullptr)
                     ? m_config.retry.delay_after(attempt, nullptr)
                     : std::nullopt;
      if (delay) {
        std::this_thread::sleep_for(*delay);
        continue;
      }
      throw RemoteError("cannot reach S3 at " + http::url_origin(request.url) + " for " + where(call) + ": "
                          + error.what(),
                        "check the network, AWS_ENDPOINT_URL and the region");
    }
    if (response.ok()) {
      if (sink == nullptr) {
        response.body = routing.take();
      }
      return response;
    }
    if (std::find(expected.begin(), expected.end(), response.status) != expected.end()) {
      return response;
    }
    auto answer = xml::parse_error(response.body);
    const auto& code = answer.code;
    auto detail = code.empty()
                    ? "HTTP " + std::to_string(response.status)
                    : printable(redact(code, credentials))
                        + (answer.message.empty() ? "" : ": " + printable(redact(answer.message, credentials)));

    // The bucket lives in another region: sign for that one (and use its endpoint).
    auto bucket_region = response.headers.get("x-amz-bucket-region");
    if (!bucket_region && !answer.region.empty()) {
      bucket_region = answer.region;
    }
    if ((response.status == 301 || response.status == 307 || code == "AuthorizationHeaderMalformed"
         || code == "PermanentRedirect" || code == "IllegalLocationConstraintException")
        && bucket_region && *bucket_region != region && is_valid_region(*bucket_region) && region_moves < 2) {
      std::lock_guard lock(m_region_mutex);
      m_bucket_regions[call.bucket] = *bucket_region;
      ++region_moves;
      continue;
    }
    if (is_expired_credentials(code) && !refreshed && m_config.sign) {
      refreshed = true;
      m_credentials->refresh();
      continue;
    }
    throw_if_final(call, response, code, detail, credentials, region, m_config.region_source);
    if (auto delay = retry_delay(m_config.retry, code, response, attempt)) {
      std::this_thread::sleep_for(*delay);
      continue;
    }
    throw RemoteError("S3 answered " + detail + " to " + call.method + " " + where(call),
                      http::is_retryable_status(response.status) ? "S3 is unavailable; retry later" : "");
  }
}

BucketState S3Client::head_bucket(const std::string& bucket)
{
  Call request{"HEAD", bucket, {}, {}, {}, {}, {}, {}};
  auto response = call(request, nullptr, {403, 404});
  if (response.status == 404) {
    return BucketState::missing;
  }
  if (response.status == 403) {
    return BucketState::forbidden;
  }
  return BucketState::exists;
}

void S3Client::create_bucket(const std::string& bucket)
{
  Call request{"PUT", bucket, {}, {}, {}, std::string(), {}, {}};
  if (m_config.region != "us-east-1") {
    request.body = "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>"
                   + m_config.region + "</LocationConstraint></CreateBucketConfiguration>";
    request.headers.emplace_back("Content-Type", "application/xml");
  }
  auto response = call(request, nullptr, {409});
  if (response.status == 409) {
    auto code = xml::parse_error(response.body).code;
    if (code == "BucketAlreadyOwnedByYou") {
      return;
    }
    throw AuthError("S3 bucket name " + bucket + " is taken by another account (" + printable(code) + ")",
                    "choose another bucket name");
  }
}

std::vector<S3Object> S3Client::list_objects(const std::string& bucket, const std::string& prefix, std::size_t max_keys)
{
  std::vector<S3Object> objects;
  auto where = "s3://" + bucket + "/" + printable(prefix);
  http::ListingBounds bounds("the listing of " + where, m_config.listing);
  std::string token;
  for (;;) {
    bounds.next_page(token);
    Call request{"GET", bucket, {}, {{"list-type", "2"}, {"prefix", prefix}}, {}, {}, {}, {}};
    if (!token.empty()) {
      request.query.emplace_back("continuation-token", token);
    }
    if (max_keys > 0) {
      request.query.emplace_back("max-keys", std::to_string(std::min<std::size_t>(max_keys, 1000)));
    }
    auto page = xml::parse_list_page(call(request).body, where);
    bounds.add_entries(page.objects.size());
    std::move(page.objects.begin(), page.objects.end(), std::back_inserter(objects));
    if ((max_keys > 0 && objects.size() >= max_keys) || !page.truncated) {
      break;
    }
    token = std::move(page.next_token);
  }
  std::sort(objects.begin(), objects.end(), [](const S3Object& a, const S3Object& b) { return a.key < b.key; });
  return objects;
}

std::optional<S3Object> S3Client::head_object(const std::string& bucket, const std::string& key)
{
  Call request{"HEAD", bucket, key, {}, {}, {}, {}, {}};
  auto response = call(request, nullptr, {404});
  if (response.status == 404) {
    return std::nullopt;
  }
  auto size = parse_u64(response.headers.get("Content-Length").value_or(""));
  if (!size) {
    throw RemoteError("S3 gave no size for " + where(request));
  }
  return S3Object{key, *size, unquote_etag(response.headers.get("ETag").value_or("")),
                  etag_is_checksum(response.headers)};
}

std::optional<std::string> S3Client::get_object(const std::string& bucket, const std::string& key, std::size_t limit)
{
  Call request{"GET", bucket, key, {}, {}, {}, {}, {}};
  detail::CappedBody body(limit);
  auto response = call(request, &body, {404});
  if (response.status == 404) {
    return std::nullopt;
  }
  return std::move(body.body());
}

std::string S3Client::put_bytes(const std::string& bucket, const std::string& key, const std::string& bytes)
{
  auto sha256 = util::hex_digest(util::HashAlgorithm::sha256, bytes);
  Call request{"PUT", bucket, key, {}, {{std::string(k_sha256_metadata), sha256}}, bytes, {}, sha256};
  return unquote_etag(call(request).headers.get("ETag").value_or(""));
}

std::string S3Client::put_file(const std::string& bucket, const std::string& key, const std::filesystem::path& file,
                               const std::string& sha256, const util::ProgressCallback& progress)
{
  std::error_code ec;
  auto size = std::filesystem::file_size(file, ec);
  if (ec) {
    throw IoError("cannot read " + file.string() + ": " + ec.message());
  }
  if (size >= m_config.multipart_threshold && size > m_config.part_size) {
    return multipart_upload(bucket, key, file, size, progress);
  }
  Call request{"PUT", bucket, key, {}, {}, {}, http::FileSlice{file, 0, size}, sha256};
  if (util::Sha256Bytes::from_hex(sha256)) {
    // S3 refuses a payload whose sha256 is not this one, so the metadata is true of the
    // object's bytes. (A multipart upload is checked by its ETag, recomputed over our part
    // size: S3 never checks a sha256 given for all its parts.)
    request.headers.emplace_back(k_sha256_metadata, sha256);
  }
  auto response = call(request);
  if (progress) {
    progress(size, size);
  }
  return unquote_etag(response.headers.get("ETag").value_or(""));
}

std::string S3Client::multipart_upload(const std::string& bucket, const std::string& key,
                                       const std::filesystem::path& file, std::uint64_t size,
                                       const util::ProgressCallback& progress)
{
  auto part_size = std::max(m_config.part_size, (size + k_max_parts - 1) / k_max_parts);
  auto parts = static_cast<std::size_t>((size + part_size - 1) / part_size);
  Call create{"POST", bucket, key, {{"uploads", ""}}, {}, std::string(), {}, {}};
  auto created = call(create);
  auto upload_id = xml::child_text(created.body, "InitiateMultipartUploadResult", "UploadId");
  if (!upload_id || upload_id->empty()) {
    throw RemoteError("S3 started no multipart upload for " + where(create));
  }
  std::vector<std::string> etags(parts);
  std::atomic<std::uint64_t> done{0};
  std::mutex progress_mutex;
  try {
    util::parallel_for(parts, m_config.workers, [&](std::size_t index) {
      auto offset = index * part_size;
      auto length = std::min<std::uint64_t>(part_size, size - offset);
      Call part{"PUT",
                bucket,
                key,
                {{"partNumber", std::to_string(index + 1)}, {"uploadId", *upload_id}},
                {},
                {},
                http::FileSlice{file, offset, length},
                {}};
      auto response = call(part);
      auto etag = response.headers.get("ETag");
      if (!etag || etag->empty()) {
        throw RemoteError("S3 gave no ETag for part " + std::to_string(index + 1) + " of " + where(part));
      }
      etags[index] = *etag;
      auto total = done += length;
      if (progress) {
        std::lock_guard lock(progress_mutex);
        progress(total, size);
      }
    });
    std::string body = "<CompleteMultipartUpload>";
    for (std::size_t i = 0; i < parts; ++i) {
      auto etag = etags[i].front() == '"' ? etags[i] : "\"" + etags[i] + "\"";
      body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etag + "</ETag></Part>";
    }
    body += "</CompleteMultipartUpload>";
    Call complete{"POST", bucket, key, {{"uploadId", *upload_id}}, {{"Content-Type", "application/xml"}}, body, {}, {}};
    auto response = call(complete);
    // S3 may answer 200 and still fail the completion in the body.
    auto etag = xml::child_text(response.body, "CompleteMultipartUploadResult", "ETag");
    if (!etag) {
      auto code = xml::parse_error(response.body).code;
      throw RemoteError("S3 could not complete the upload of " + where(complete) + " ("
                        + printable(code.empty() ? std::string("no CompleteMultipartUploadResult") : code) + ")");
    }
    return unquote_etag(*etag);
  } catch (...) {
    // No orphan parts left to be billed: abort, whatever failed.
    try {
      Call abort{"DELETE", bucket, key, {{"uploadId", *upload_id}}, {}, {}, {}, {}};
      call(abort, nullptr, {404});
    } catch (const Error&) {
    }
    throw;
  }
}

void S3Client::delete_object(const std::string& bucket, const std::string& key)
{
  Call request{"DELETE", bucket, key, {}, {}, {}, {}, {}};
  call(request, nullptr, {404});
}

} // namespace hubcache::aws
