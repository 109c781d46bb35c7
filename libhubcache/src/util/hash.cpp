#include "hubcache/util/hash.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace hubcache::util {

namespace {

const EVP_MD* evp_for(HashAlgorithm algorithm)
{
  switch (algorithm) {
  case HashAlgorithm::md5: return EVP_md5();
  case HashAlgorithm::sha1: return EVP_sha1();
  case HashAlgorithm::sha256: return EVP_sha256();
  case HashAlgorithm::sha512: return EVP_sha512();
  }
  return EVP_sha256();
}

std::string to_hex(const unsigned char* bytes, unsigned length)
{
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(length * 2, '0');
  for (unsigned i = 0; i < length; ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 0xf];
  }
  return out;
}

} // namespace

struct Hasher::Impl {
  EVP_MD_CTX* context = nullptr;
  ~Impl() { EVP_MD_CTX_free(context); }
};

Hasher::Hasher(HashAlgorithm algorithm) : m_impl(std::make_unique<Impl>())
{
  m_impl->context = EVP_MD_CTX_new();
  if (m_impl->context == nullptr || EVP_DigestInit_ex(m_impl->context, evp_for(algorithm), nullptr) != 1) {
    throw Error("OpenSSL could not initialize a digest");
  }
}

Hasher::~Hasher() = default;
Hasher::Hasher(Hasher&&) noexcept = default;
Hasher& Hasher::operator=(Hasher&&) noexcept = default;

void Hasher::update(std::string_view data)
{
  update(data.data(), data.size());
}

void Hasher::update(const void* data, std::size_t size)
{
  EVP_DigestUpdate(m_impl->context, data, size);
}

std::string Hasher::hex_digest()
{
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  EVP_DigestFinal_ex(m_impl->context, digest, &length);
  return to_hex(digest, length);
}

std::string hex_digest(HashAlgorithm algorithm, std::string_view data)
{
  Hasher hasher(algorithm);
  hasher.update(data);
  return hasher.hex_digest();
}

std::string hex_digest_file(HashAlgorithm algorithm, const std::filesystem::path& path)
{
  Hasher hasher(algorithm);
  read_file_chunks(path, [&](const char* data, std::size_t size) { hasher.update(data, size); });
  return hasher.hex_digest();
}

namespace {

// From this size on, sha1 runs on a second core beside sha256, chunk by chunk: the pass
// then costs about one sha256 instead of sha256 + sha1.
constexpr std::uint64_t k_parallel_hash_threshold = 32ull << 20;
constexpr std::size_t k_parallel_hash_chunk = 4u << 20;

} // namespace

FileDigests digest_file(const std::filesystem::path& path, std::size_t head_size)
{
  // The git blob header needs the size up front; a file that changes while we read it
  // is caught by comparing the bytes read with that size.
  auto fd = open_regular_file(path);
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) {
    throw IoError("cannot read " + path.string() + ": " + std::strerror(errno));
  }
  auto expected_size = static_cast<std::uint64_t>(status.st_size);
  Hasher sha256(HashAlgorithm::sha256);
  Hasher sha1(HashAlgorithm::sha1);
  sha1.update("blob " + std::to_string(expected_size));
  sha1.update("\0", 1);
  std::string head;
  bool parallel = expected_size >= k_parallel_hash_threshold;
  auto read = read_chunks(
    fd, path,
    [&](const char* data, std::size_t size) {
      if (head.size() < head_size) {
        head.append(data, std::min(size, head_size - head.size()));
      }
      if (!parallel) {
        sha256.update(data, size);
        sha1.update(data, size);
        return;
      }
      // Both only read the chunk; it stays valid until this callback returns.
      auto other = std::async(std::launch::async, [&] { sha1.update(data, size); });
      sha256.update(data, size);
      other.get();
    },
    parallel ? k_parallel_hash_chunk : std::size_t{1} << 20);
  if (read != expected_size) {
    throw IoError(path.string() + " changed while it was being read");
  }
  return FileDigests{read, sha256.hex_digest(), sha1.hex_digest(), std::move(head)};
}

std::string git_blob_sha1(std::string_view content)
{
  Hasher sha1(HashAlgorithm::sha1);
  sha1.update("blob " + std::to_string(content.size()));
  sha1.update("\0", 1);
  sha1.update(content);
  return sha1.hex_digest();
}

} // namespace hubcache::util
