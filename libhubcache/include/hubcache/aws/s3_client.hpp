#pragma once

#include "hubcache/aws/config.hpp"
#include "hubcache/aws/credentials.hpp"
#include "hubcache/http/client.hpp"
#include "hubcache/http/listing_bounds.hpp"
#include "hubcache/util/environment.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/progress.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

// The S3 REST calls a cache repo needs, signed by libcurl's SigV4: bucket checks and
// creation, ListObjectsV2 with pagination, whole-object and multipart uploads (parts in
// parallel, aborted on failure), downloads checked against size and ETag. Retries 500,
// 503 and SlowDown with the shared backoff; follows a bucket's region when S3 says it is
// elsewhere; fetches credentials again once when S3 says they expired.
namespace hubcache::aws {

// `s3://bucket[/prefix]`: the bucket name as S3 allows it, the prefix a '/'-separated key
// prefix without leading or trailing '/'.
struct S3Url {
  std::string bucket;
  std::string prefix;
  std::string to_string() const { return "s3://" + bucket + (prefix.empty() ? "" : "/" + prefix); }
};
// InvalidArgument when it is not an s3:// URL S3 could hold.
S3Url parse_s3_url(std::string_view text);
bool is_valid_bucket_name(std::string_view name) noexcept;

struct S3Config {
  std::string region;
  std::string region_source;
  std::string endpoint;         // scheme://host[:port]
  bool custom_endpoint = false; // path-style addressing, region kept on redirects
  std::string endpoint_source;  // "--endpoint-url", "AWS_ENDPOINT_URL_S3", ..., "default"
  bool sign = true;             // false: --no-sign-request, anonymous requests (public buckets)
  http::RetryPolicy retry;
  std::size_t workers = 4;
  std::uint64_t multipart_threshold = std::uint64_t{64} << 20;
  std::uint64_t part_size = std::uint64_t{16} << 20;
  // A transfer moving less than http::k_min_transfer_rate over this long is stalled.
  std::chrono::seconds stall_timeout{30};
  http::ListingLimits listing; // pages and keys of one listing

  // --region/AWS_REGION..., --endpoint-url/AWS_ENDPOINT_URL_S3..., --no-sign-request,
  // NEURON_CACHE_HTTP_BACKOFF_BASE_MS, NEURON_CACHE_S3_MULTIPART_THRESHOLD /
  // NEURON_CACHE_S3_PART_SIZE (bytes; parts are at least 5 MiB, S3's minimum) and
  // NEURON_CACHE_S3_STALL_TIMEOUT (seconds, at least 1).
  static S3Config from_environment(const util::Environment& env, const Overrides& overrides = {});
};

struct S3Object {
  std::string key;
  std::uint64_t size = 0;
  std::string etag;               // without quotes
  std::int64_t last_modified = 0; // LastModified of a listing, seconds since the epoch; 0 unknown
  // False when S3 said (on a HEAD) that the object is encrypted with SSE-KMS or SSE-C:
  // its ETag is then no MD5 of the content. A listing cannot tell.
  bool etag_is_checksum = true;
};

enum class BucketState { exists, missing, forbidden };

class S3Client {
public:
  // `credentials` may be null when the config does not sign.
  S3Client(S3Config config, std::shared_ptr<CredentialChain> credentials);

  const S3Config& config() const { return m_config; }

  BucketState head_bucket(const std::string& bucket);
  // Creates the bucket in the configured region.
  void create_bucket(const std::string& bucket);

  // Every object whose key starts with `prefix` (a plain string prefix), in key order.
  std::vector<S3Object> list_objects(const std::string& bucket, const std::string& prefix, std::size_t max_keys = 0);
  std::optional<S3Object> head_object(const std::string& bucket, const std::string& key);
  // The object's bytes, at most `limit` of them; nullopt when it does not exist.
  std::optional<std::string> get_object(const std::string& bucket, const std::string& key, std::size_t limit);
  // Streams the object into `destination` (temp + rename). `expected` (what the listing
  // said: size, ETag) when given must still be what S3 serves, and the bytes must match a
  // checksum S3 vouches for: the sha256 put_file stored in the object's metadata, else the
  // ETag as an MD5 or a multipart ETag recomputed over etag_part_sizes(). IntegrityError
  // otherwise (an object encrypted with a managed key is checked by its size alone).
  // Returns the digests of the bytes written. `flush`: fsync before the rename (false:
  // the caller flushes many files at once).
  util::FileDigests download(const std::string& bucket, const std::string& key,
                             const std::filesystem::path& destination, const std::optional<S3Object>& expected,
                             const util::ProgressCallback& progress = {}, bool flush = true);
  // The part sizes uploaders of this store use, most likely first: neuron-cache's own, then
  // the AWS CLI's default (8 MiB).
  std::vector<std::uint64_t> etag_part_sizes() const;

  // Uploads bytes in one PUT, their sha256 stored in the object's metadata; returns the
  // ETag S3 gave the object (without quotes).
  std::string put_bytes(const std::string& bucket, const std::string& key, const std::string& bytes);
  // Uploads a file: one PUT below the multipart threshold, else a multipart upload whose
  // parts go in parallel and which is aborted if any part fails. `sha256` (hex, optional)
  // lets S3 verify a single-PUT payload and is stored in the object's metadata, so every
  // download checks its bytes end to end (a multipart ETag alone says nothing of them
  // until recomputed). Returns the ETag S3 gave the object (empty when it gave none).
  std::string put_file(const std::string& bucket, const std::string& key, const std::filesystem::path& file,
                       const std::string& sha256 = {}, const util::ProgressCallback& progress = {});
  void delete_object(const std::string& bucket, const std::string& key);

  // The source of the credentials in use, for messages.
  std::string credential_source();

  struct Call {
    std::string method = "GET";
    std::string bucket;
    std::string key;
    std::vector<std::pair<std::string, std::string>> query; // sorted by the client
    std::vector<std::pair<std::string, std::string>> headers;
    std::optional<std::string> body;
    std::optional<http::FileSlice> body_file;
    std::string payload_sha256; // empty: sha256 of `body`, or UNSIGNED-PAYLOAD for files
  };
  // One signed call with retries; `sink` receives a 2xx body. Throws typed errors for
  // S3 error answers (NoSuchBucket, AccessDenied, ...), except the statuses in `expected`.
  http::Response call(const Call& call, http::BodySink* sink = nullptr, std::vector<long> expected = {});

private:
  std::string url_for(const Call& call, const std::string& region) const;
  std::string region_of(const std::string& bucket);
  http::Request request_for(const Call& call, const Credentials& credentials, const std::string& region) const;
  std::string multipart_upload(const std::string& bucket, const std::string& key, const std::filesystem::path& file,
                               std::uint64_t size, const util::ProgressCallback& progress);

  S3Config m_config;
  std::shared_ptr<CredentialChain> m_credentials;
  http::ClientPool m_clients;
  std::mutex m_region_mutex;
  std::map<std::string, std::string> m_bucket_regions; // learnt from redirects
};

} // namespace hubcache::aws
