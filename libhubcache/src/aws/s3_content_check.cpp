#include "s3_content_check.hpp"

#include "detail.hpp"
#include "s3_xml.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/text.hpp"

namespace hubcache::aws {

namespace {

using detail::parse_u64;

bool is_sha256_hex(std::string_view text)
{
  return util::Sha256Bytes::from_hex(text).has_value();
}

// Server text in a message: bounded, no control characters.
std::string shown(std::string_view text)
{
  return util::escape_control(text.substr(0, 80));
}

} // namespace

ContentCheck::ContentCheck(std::string where, const std::optional<S3Object>& listed,
                           std::vector<std::uint64_t> part_sizes)
  : m_where(std::move(where)), m_listed(listed), m_part_sizes(std::move(part_sizes))
{}

void ContentCheck::start(const http::Headers& headers)
{
  m_announced = parse_u64(headers.get("Content-Length").value_or(""));
  m_etag = xml::unquote_etag(headers.get("ETag").value_or(""));
  m_sha256 = headers.get(k_sha256_metadata).value_or("");
  auto encryption = headers.get("x-amz-server-side-encryption").value_or("");
  // SSE-KMS and SSE-C objects have ETags that look like an MD5 and are not one.
  m_etag_is_checksum = encryption != "aws:kms" && encryption != "aws:kms:dsse"
                       && !headers.get("x-amz-server-side-encryption-customer-algorithm");
  if (m_listed && !m_listed->etag.empty() && m_listed->etag != m_etag) {
    throw IntegrityError(m_where + " changed since it was listed (ETag '" + shown(m_etag) + "', listed '"
                           + shown(m_listed->etag) + "')",
                         "retry once the writer is done");
  }
  if (is_sha256_hex(m_sha256)) {
    m_sha256_hasher.emplace(util::HashAlgorithm::sha256); // what we stored at upload vouches for it
    return;
  }
  auto parts = util::etag_part_count(m_etag);
  if (parts && *parts == 0 && m_etag_is_checksum) {
    m_md5.emplace(util::HashAlgorithm::md5);
    return;
  }
  if (parts && m_etag_is_checksum) {
    auto size = m_listed ? m_listed->size : m_announced.value_or(0);
    for (auto part_size : util::guess_part_sizes(size, *parts, m_part_sizes).sizes) {
      m_multipart.emplace_back(part_size);
    }
    if (!m_multipart.empty()) {
      return;
    }
    throw IntegrityError(m_where + " cannot be checked: it was uploaded in " + std::to_string(*parts)
                           + " parts of a size neuron-cache cannot tell, and carries no sha256",
                         "upload it again with neuron-cache (or in parts of a whole number of MiB)");
  }
  if (!m_etag_is_checksum) {
    return; // encrypted with a managed key: S3 gives no checksum of the bytes, only their size
  }
  throw IntegrityError(m_where + " cannot be checked: S3 sent neither a checksum ETag nor a sha256 (ETag '"
                         + shown(m_etag) + "')",
                       "check AWS_ENDPOINT_URL points at S3");
}

void ContentCheck::update(std::string_view chunk)
{
  if (m_sha256_hasher) {
    m_sha256_hasher->update(chunk);
  }
  if (m_md5) {
    m_md5->update(chunk);
  }
  for (auto& etag : m_multipart) {
    etag.update(chunk);
  }
}

util::FileDigests ContentCheck::finish(std::uint64_t size)
{
  auto expected = m_listed ? std::optional<std::uint64_t>(m_listed->size) : m_announced;
  if ((m_announced && *m_announced != size) || (expected && *expected != size)) {
    throw IntegrityError(m_where + " arrived with " + std::to_string(size) + " bytes instead of "
                           + std::to_string(expected.value_or(m_announced.value_or(0))),
                         "retry; the object may be changing");
  }
  util::FileDigests digests;
  digests.size = size;
  if (m_sha256_hasher) {
    digests.sha256 = m_sha256_hasher->hex_digest();
    if (digests.sha256 != m_sha256) {
      throw IntegrityError(m_where + " does not match the sha256 stored with it: corrupted in transfer or storage",
                           "retry; if it persists, push the entry again");
    }
  } else if (m_md5) {
    digests.md5 = m_md5->hex_digest();
    if (digests.md5 != m_etag) {
      throw IntegrityError(m_where + " does not match its ETag (MD5): corrupted in transfer", "retry");
    }
  } else if (!m_multipart.empty()) {
    bool matched = false;
    for (auto& etag : m_multipart) {
      matched = matched || etag.finish() == m_etag;
    }
    if (!matched) {
      throw IntegrityError(m_where + " does not match its multipart ETag: corrupted in transfer or storage",
                           "retry; if it persists, push the entry again");
    }
  } else {
    return digests; // unchecked content (a managed-key object): no ETag vouches for it
  }
  digests.etag = m_etag;
  return digests;
}

} // namespace hubcache::aws
