#pragma once

// What the bytes of one S3 GET must match, decided before the body arrives and checked
// after it: the size and ETag the listing gave, and a checksum S3 vouches for (the sha256
// neuron-cache stores in the object's metadata at upload, else the ETag as an MD5 or as a
// multipart ETag recomputed over the part sizes uploaders use). Private to the aws floor.
#include "hubcache/aws/s3_client.hpp"
#include "hubcache/http/client.hpp"
#include "hubcache/util/hash.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hubcache::aws {

// The object metadata that carries the sha256 of an object's bytes, written by put_file
// and put_bytes (x-amz-meta-*: S3 keeps it with the object and sends it with every GET).
inline constexpr std::string_view k_sha256_metadata = "x-amz-meta-neuron-cache-sha256";

class ContentCheck {
public:
  // `where` names the object in errors; `listed` is what the listing said of it.
  ContentCheck(std::string where, const std::optional<S3Object>& listed, std::vector<std::uint64_t> part_sizes);

  // With the answer's headers: IntegrityError when the object changed since it was listed,
  // or when nothing S3 sent can vouch for its bytes.
  void start(const http::Headers& headers);
  void update(std::string_view chunk);
  // The Content-Length of the answer, once started.
  std::optional<std::uint64_t> announced() const { return m_announced; }
  // Once every byte is in: IntegrityError when they are not what was promised. Returns the
  // digests of those bytes (size, and the md5 / sha256 / ETag that were checked).
  util::FileDigests finish(std::uint64_t size);

private:
  std::string m_where;
  std::optional<S3Object> m_listed;
  std::vector<std::uint64_t> m_part_sizes;
  std::optional<std::uint64_t> m_announced; // Content-Length
  std::string m_etag;
  std::string m_sha256; // from the metadata
  bool m_etag_is_checksum = true;
  std::optional<util::Hasher> m_md5;
  std::optional<util::Hasher> m_sha256_hasher;
  std::vector<util::MultipartEtag> m_multipart;
};

} // namespace hubcache::aws
