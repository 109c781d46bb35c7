#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace hubcache::util {

enum class HashAlgorithm { md5, sha1, sha256, sha512 };

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

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

std::string hex_digest(HashAlgorithm algorithm, std::string_view data);
std::string hex_digest_file(HashAlgorithm algorithm, const std::filesystem::path& path);

// Digests every consumer of a repo file needs, computed in one read of the file.
struct FileDigests {
  std::uint64_t size = 0;
  std::string sha256;
  std::string git_blob_sha1; // sha1("blob <size>\0" + content): the Hub's oid for regular files
  std::string head = {};     // the first bytes of the content, when asked for (the Hub's upload sample)
};
// Size, sha256, git blob sha1 and the first `head_size` bytes, in one read of the file.
FileDigests digest_file(const std::filesystem::path& path, std::size_t head_size = 0);
std::string git_blob_sha1(std::string_view content);

} // namespace hubcache::util
