#include "hubcache/util/hash.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace hubcache::util {

namespace {

// Fetched once per process: with OpenSSL 3 the legacy EVP_md5() & co. look the
// implementation up again on every init (a lock and a table search per hash, and a scan
// hashes thousands of small flags files). Kept until exit, on purpose.
const EVP_MD* fetched(const char* name, const EVP_MD* legacy)
{
  const EVP_MD* md = EVP_MD_fetch(nullptr, name, nullptr);
  return md != nullptr ? md : legacy;
}

const EVP_MD* evp_for(HashAlgorithm algorithm)
{
  // Indexed by HashAlgorithm.
  static const std::array<const EVP_MD*, 4> digests = {fetched("MD5", EVP_md5()), fetched("SHA1", EVP_sha1()),
                                                       fetched("SHA256", EVP_sha256()),
                                                       fetched("SHA512", EVP_sha512())};
  return digests.at(static_cast<std::size_t>(algorithm));
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

std::string Hasher::raw_digest()
{
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  EVP_DigestFinal_ex(m_impl->context, digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

void Hasher::finish_into(unsigned char* out, std::size_t size)
{
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  EVP_DigestFinal_ex(m_impl->context, digest, &length);
  if (length != size) {
    throw Error("a digest of " + std::to_string(length) + " bytes was asked for as " + std::to_string(size));
  }
  std::memcpy(out, digest, size);
}

std::uint64_t stamp_fingerprint(std::string_view path, std::uint64_t size, std::int64_t mtime_ns, std::int64_t ctime_ns,
                                std::uint64_t inode) noexcept
{
  // FNV-1a over the path, then each number folded in with splitmix64's finalizer.
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : path) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  }
  auto fold = [&](std::uint64_t value) {
    std::uint64_t x = hash ^ value;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    hash = x ^ (x >> 31);
  };
  fold(size);
  fold(static_cast<std::uint64_t>(mtime_ns));
  fold(static_cast<std::uint64_t>(ctime_ns));
  fold(inode);
  return hash;
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

void MultipartEtag::update(const char* data, std::size_t size)
{
  while (size > 0) {
    auto take = static_cast<std::size_t>(std::min<std::uint64_t>(size, m_part_size - m_in_part));
    m_part.update(data, take);
    m_in_part += take;
    data += take;
    size -= take;
    if (m_in_part == m_part_size) {
      end_part();
    }
  }
}

std::string MultipartEtag::finish()
{
  if (m_in_part > 0 || m_parts == 0) {
    end_part();
  }
  return hex_digest(HashAlgorithm::md5, m_part_digests) + "-" + std::to_string(m_parts);
}

void MultipartEtag::end_part()
{
  m_part_digests += m_part.raw_digest();
  m_part = Hasher(HashAlgorithm::md5);
  m_in_part = 0;
  ++m_parts;
}

FileDigests digest_file(const std::filesystem::path& path, std::size_t head_size)
{
  return digest_file(path, DigestOptions{head_size});
}

FileDigests digest_file(const std::filesystem::path& path, const DigestOptions& options)
{
  // The git blob header needs the size up front; a file that changes while we read it
  // is caught by comparing the bytes read with that size.
  auto fd = open_regular_file(path);
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) {
    throw IoError("cannot read " + path.string() + ": " + std::strerror(errno));
  }
  auto expected_size = static_cast<std::uint64_t>(status.st_size);
  auto head_size = options.head_size;
  Hasher sha256(HashAlgorithm::sha256);
  Hasher sha1(HashAlgorithm::sha1);
  sha1.update("blob " + std::to_string(expected_size));
  sha1.update("\0", 1);
  std::optional<Hasher> md5;
  if (options.md5) {
    md5.emplace(HashAlgorithm::md5);
  }
  std::vector<MultipartEtag> etags;
  for (auto part_size : options.etag_part_sizes) {
    if (part_size > 0) {
      etags.emplace_back(part_size);
    }
  }
  bool s3 = md5 || !etags.empty();
  auto s3_update = [&](const char* data, std::size_t size) {
    if (md5) {
      md5->update(data, size);
    }
    for (auto& etag : etags) {
      etag.update(data, size);
    }
  };
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
        s3_update(data, size);
        return;
      }
      // Each only reads the chunk; it stays valid until this callback returns.
      auto other = std::async(std::launch::async, [&] { sha1.update(data, size); });
      std::future<void> third;
      if (s3) {
        third = std::async(std::launch::async, [&] { s3_update(data, size); });
      }
      sha256.update(data, size);
      other.get();
      if (third.valid()) {
        third.get();
      }
    },
    parallel ? k_parallel_hash_chunk : std::size_t{1} << 20);
  if (read != expected_size) {
    throw IoError(path.string() + " changed while it was being read");
  }
  FileDigests digests{read, sha256.hex_digest(), sha1.hex_digest(), std::move(head)};
  if (md5) {
    digests.md5 = md5->hex_digest();
  }
  for (auto& etag : etags) {
    digests.multipart_etags.emplace_back(etag.part_size(), etag.finish());
  }
  return digests;
}

std::string git_blob_sha1(std::string_view content)
{
  Hasher sha1(HashAlgorithm::sha1);
  sha1.update("blob " + std::to_string(content.size()));
  sha1.update("\0", 1);
  sha1.update(content);
  return sha1.hex_digest();
}

bool is_md5_hex(std::string_view text) noexcept
{
  return text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::optional<std::uint64_t> etag_part_count(std::string_view etag) noexcept
{
  if (is_md5_hex(etag)) {
    return 0;
  }
  if (etag.size() < 34 || etag[32] != '-' || !is_md5_hex(etag.substr(0, 32))) {
    return std::nullopt;
  }
  auto digits = etag.substr(33);
  std::uint64_t parts = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), parts);
  if (error != std::errc() || end != digits.data() + digits.size() || parts == 0 || digits.front() == '0') {
    return std::nullopt;
  }
  return parts;
}

std::string multipart_etag(std::string_view content, std::uint64_t part_size)
{
  MultipartEtag etag(part_size);
  etag.update(content.data(), content.size());
  return etag.finish();
}

namespace {

constexpr std::uint64_t k_mib = std::uint64_t{1} << 20;
constexpr std::uint64_t k_min_part = 5 * k_mib; // S3's minimum for every part but the last
constexpr std::uint64_t k_max_parts = 10000;
// Trying a part size costs one more MD5 over the file: a few at most.
constexpr std::size_t k_max_part_sizes = 3;

std::uint64_t parts_of(std::uint64_t size, std::uint64_t part_size)
{
  return size == 0 ? 1 : (size + part_size - 1) / part_size;
}

} // namespace

PartSizeGuess guess_part_sizes(std::uint64_t size, std::uint64_t parts,
                               const std::vector<std::uint64_t>& uploader_part_sizes)
{
  PartSizeGuess guess;
  if (parts == 0 || size == 0 || parts > k_max_parts) {
    return guess; // S3 takes at most 10,000 parts: another tag in that form proves nothing
  }
  if (parts == 1) {
    // One part: its bounds are the whole file, whatever the part size was.
    guess.sizes.push_back(std::max<std::uint64_t>(size, 1));
    guess.certain = true;
    return guess;
  }
  auto add = [&](std::uint64_t part_size) {
    if (part_size > 0 && parts_of(size, part_size) == parts
        && std::find(guess.sizes.begin(), guess.sizes.end(), part_size) == guess.sizes.end()) {
      guess.sizes.push_back(part_size);
    }
  };
  // Every whole number of MiB that gives `parts` parts: S/N <= p < S/(N-1).
  auto lowest = std::max(k_min_part / k_mib, (size + parts * k_mib - 1) / (parts * k_mib));
  auto highest = (size + (parts - 1) * k_mib - 1) / ((parts - 1) * k_mib) - 1;
  std::vector<std::uint64_t> whole;
  for (auto mib = lowest; mib <= highest && whole.size() <= k_max_part_sizes; ++mib) {
    whole.push_back(mib * k_mib);
  }
  std::vector<std::uint64_t> tools;
  for (auto part_size : uploader_part_sizes) {
    if (part_size == 0) {
      continue;
    }
    tools.push_back(part_size);
    // neuron-cache stretches its part size to fit S3's 10,000 parts; the AWS CLI doubles it.
    tools.push_back(std::max(part_size, (size + k_max_parts - 1) / k_max_parts));
    auto doubled = part_size;
    while (parts_of(size, doubled) > k_max_parts) {
      doubled *= 2;
    }
    tools.push_back(doubled);
  }
  for (auto part_size : tools) {
    add(part_size);
  }
  // Certain when every plausible part size is tried: each whole number of MiB that fits
  // (what uploaders use), and the uploaders' own. None fitting means an odd part size.
  guess.certain = !whole.empty() && whole.size() <= k_max_part_sizes;
  if (guess.certain) {
    for (auto part_size : whole) {
      add(part_size);
    }
  }
  if (guess.sizes.size() > 2 * k_max_part_sizes) {
    guess.sizes.resize(2 * k_max_part_sizes);
    guess.certain = false;
  }
  return guess;
}

} // namespace hubcache::util
