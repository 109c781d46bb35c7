#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hubcache::util {

enum class HashAlgorithm { md5, sha1, sha256, sha512 };

// A digest kept as its N bytes rather than 2N hex characters on the heap: what a structure
// holds per file when it holds tens of thousands of files (indexes, commit plans).
template <std::size_t N>
struct DigestBytes {
  std::array<unsigned char, N> bytes{};

  // Exactly 2N lowercase hex digits (the form every digest here is written in), else
  // nullopt: text from outside is checked, never trusted.
  static std::optional<DigestBytes> from_hex(std::string_view hex) noexcept
  {
    auto value = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
    if (hex.size() != 2 * N) {
      return std::nullopt;
    }
    DigestBytes digest;
    for (std::size_t i = 0; i < N; ++i) {
      int high = value(hex[2 * i]);
      int low = value(hex[2 * i + 1]);
      if (high < 0 || low < 0) {
        return std::nullopt;
      }
      digest.bytes[i] = static_cast<unsigned char>(high * 16 + low);
    }
    return digest;
  }

  std::string hex() const
  {
    static constexpr char digits[] = "0123456789abcdef";
    std::string text(2 * N, '0');
    for (std::size_t i = 0; i < N; ++i) {
      text[2 * i] = digits[bytes[i] >> 4];
      text[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    return text;
  }

  auto operator<=>(const DigestBytes&) const = default;
};
using Sha256Bytes = DigestBytes<32>;
using Sha1Bytes = DigestBytes<20>;

// Streaming digest over OpenSSL's EVP interface; `hex_digest()` finalizes.
class Hasher {
public:
  explicit Hasher(HashAlgorithm algorithm);
  ~Hasher();
  Hasher(Hasher&&) noexcept;
  Hasher& operator=(Hasher&&) noexcept;
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void update(std::string_view data);
  void update(const void* data, std::size_t size);
  std::string hex_digest();
  // The digest as raw bytes (finalizes, like hex_digest).
  std::string raw_digest();
  // The same without an allocation; throws unless the algorithm's digest has N bytes.
  template <std::size_t N>
  DigestBytes<N> digest_bytes()
  {
    DigestBytes<N> digest;
    finish_into(digest.bytes.data(), N);
    return digest;
  }

private:
  void finish_into(unsigned char* out, std::size_t size);

  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

std::string hex_digest(HashAlgorithm algorithm, std::string_view data);

// A 64-bit fingerprint of one version of a file: its path and the stamp that says it did
// not change (size, mtime, ctime, inode). For "is this the file seen before" over tens of
// thousands of files, where a cryptographic hash of each stamp would cost more than the
// stat that gave it; never for content.
std::uint64_t stamp_fingerprint(std::string_view path, std::uint64_t size, std::int64_t mtime_ns, std::int64_t ctime_ns,
                                std::uint64_t inode) noexcept;
std::string hex_digest_file(HashAlgorithm algorithm, const std::filesystem::path& path);

// Digests every consumer of a repo file needs, computed in one read of the file.
struct FileDigests {
  std::uint64_t size = 0;
  std::string sha256;
  std::string git_blob_sha1; // sha1("blob <size>\0" + content): the Hub's oid for regular files
  std::string head = {};     // the first bytes of the content, when asked for (the Hub's upload sample)
  std::string md5 = {};      // hex, when asked for (an S3 single-PUT ETag)
  // An S3 ETag known to describe this content, in any form (multipart, or one S3 gave for
  // an upload of it); empty when none is known.
  std::string etag = {};
  // (part size, multipart ETag) for each part size asked for.
  std::vector<std::pair<std::uint64_t, std::string>> multipart_etags = {};
};

// What digest_file computes besides size, sha256 and git blob sha1: only what a backend
// compares with, so a Hub push never pays for an MD5.
struct DigestOptions {
  std::size_t head_size = 0;
  bool md5 = false;
  std::vector<std::uint64_t> etag_part_sizes = {}; // multipart ETags to compute
};
// Size, sha256, git blob sha1 and the first `head_size` bytes, in one read of the file.
FileDigests digest_file(const std::filesystem::path& path, std::size_t head_size = 0);
// The same, with the MD5 and multipart ETags asked for, still in one read.
FileDigests digest_file(const std::filesystem::path& path, const DigestOptions& options);
std::string git_blob_sha1(std::string_view content);

// S3 ETags. An object stored by one PUT has the hex MD5 of its bytes; one stored by a
// multipart upload in N parts of `part_size` bytes (the last one shorter) has the MD5 of
// the N part MD5s (raw, concatenated) followed by "-N". (Objects encrypted with SSE-KMS
// or SSE-C have ETags that are neither.)
bool is_md5_hex(std::string_view text) noexcept;
// N for a multipart ETag ("<32 hex>-N"), 0 for a plain MD5, nullopt for anything else.
std::optional<std::uint64_t> etag_part_count(std::string_view etag) noexcept;
std::string multipart_etag(std::string_view content, std::uint64_t part_size);
// The same over a stream: the MD5 of the current part, and those of the parts done.
class MultipartEtag {
public:
  explicit MultipartEtag(std::uint64_t part_size) : m_part_size(part_size) {}
  void update(const char* data, std::size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  // "<md5 of the part MD5s>-N" (finalizes).
  std::string finish();
  std::uint64_t part_size() const { return m_part_size; }

private:
  void end_part();
  std::uint64_t m_part_size;
  Hasher m_part{HashAlgorithm::md5};
  std::uint64_t m_in_part = 0;
  std::uint64_t m_parts = 0;
  std::string m_part_digests;
};
// The part sizes that may have made a multipart ETag of `parts` parts over `size` bytes:
// the one whole number of MiB (at least S3's 5 MiB minimum) that gives exactly that many
// parts, when only one does (`certain`); else those of `uploader_part_sizes` (each also as
// the AWS CLI and neuron-cache stretch it for files of more than 10,000 parts) that give
// that many parts.
struct PartSizeGuess {
  std::vector<std::uint64_t> sizes;
  bool certain = false;
};
PartSizeGuess guess_part_sizes(std::uint64_t size, std::uint64_t parts,
                               const std::vector<std::uint64_t>& uploader_part_sizes);

} // namespace hubcache::util
