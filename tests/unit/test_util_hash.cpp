#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>

using namespace hubcache;
using namespace hubcache::util;

TEST_SUITE_BEGIN("hubcache::hash");

TEST_CASE("known digests")
{
  CHECK(hex_digest(HashAlgorithm::md5, "") == "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(hex_digest(HashAlgorithm::sha256, "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex_digest(HashAlgorithm::sha1, "abc") == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(hex_digest(HashAlgorithm::sha512, "").substr(0, 20) == "cf83e1357eefb8bdf154");
  // The flags suffix of a compile-cache entry for `--model-type=transformer --auto-cast=none`.
  CHECK(hex_digest(HashAlgorithm::md5, "--model-type=transformer --auto-cast=none").substr(0, 8) == "2c2d707e");
}

TEST_CASE("DigestBytes: a digest as its bytes, round-tripping its lowercase hex")
{
  auto hex = hex_digest(HashAlgorithm::sha256, "abc");
  auto digest = Sha256Bytes::from_hex(hex);
  REQUIRE(digest.has_value());
  CHECK(digest->hex() == hex);
  CHECK(digest->bytes[0] == 0xba);
  CHECK(digest->bytes[31] == 0xad);
  // The hasher gives the same bytes without the hex.
  Hasher hasher(HashAlgorithm::sha256);
  hasher.update("abc");
  CHECK(hasher.digest_bytes<32>() == *digest);
  Hasher sha1(HashAlgorithm::sha1);
  sha1.update("abc");
  CHECK(sha1.digest_bytes<20>().hex() == hex_digest(HashAlgorithm::sha1, "abc"));
  // A hasher asked for another length refuses instead of truncating.
  Hasher md5(HashAlgorithm::md5);
  CHECK_THROWS_AS(md5.digest_bytes<32>(), Error);
  // Only 2N lowercase hex digits: anything else from a file or a server is not a digest.
  CHECK_FALSE(Sha256Bytes::from_hex(hex.substr(1)).has_value());
  CHECK_FALSE(Sha256Bytes::from_hex(hex + "0").has_value());
  std::string upper = hex;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  CHECK_FALSE(Sha256Bytes::from_hex(upper).has_value());
  std::string odd = hex;
  odd[10] = 'g';
  CHECK_FALSE(Sha256Bytes::from_hex(odd).has_value());
  CHECK_FALSE(Sha1Bytes::from_hex(hex).has_value());
  CHECK(Sha1Bytes::from_hex(std::string(40, '0'))->hex() == std::string(40, '0'));
  // Ordered like their hex, so sorted digests can be searched.
  CHECK(*Sha1Bytes::from_hex("00" + std::string(38, 'f')) < *Sha1Bytes::from_hex("01" + std::string(38, '0')));
}

TEST_CASE("git blob sha1 matches git hash-object")
{
  CHECK(git_blob_sha1("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a");
  CHECK(git_blob_sha1("") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

TEST_CASE("digest_file computes size, sha256 and git sha1 in one pass")
{
  test_support::TempDir dir;
  auto file = dir / "f";
  std::string content(3 * 1024 * 1024 + 17, 'x');
  util::write_file_atomically(file, content);
  auto digests = digest_file(file);
  CHECK(digests.size == content.size());
  CHECK(digests.sha256 == hex_digest(HashAlgorithm::sha256, content));
  CHECK(digests.git_blob_sha1 == git_blob_sha1(content));
}

// Vectors from python3: hashlib.md5(b"".join(hashlib.md5(part).digest() for part in parts)).hexdigest() + "-N".
TEST_CASE("S3 ETags: single-part MD5 and multipart md5-of-md5s")
{
  CHECK(multipart_etag("abc", 1) == "4054c6f7787ecb7b323323155b0c0583-3");
  CHECK(multipart_etag("abc", 2) == "d833159094d1d7ad96ffcc78414e3682-2");
  CHECK(multipart_etag("abc", 3) == "af5da9f45af7a300e3aded972f8ff687-1");
  CHECK(multipart_etag("abc", 1024) == "af5da9f45af7a300e3aded972f8ff687-1");

  test_support::TempDir dir;
  auto file = dir / "model.neff";
  constexpr std::uint64_t mib = 1 << 20;
  std::string content(12 * mib + 17, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) {
    content[i] = static_cast<char>((i * 7 + 3) & 0xff);
  }
  util::write_file_atomically(file, content);
  auto digests = digest_file(file, DigestOptions{0, true, {5 * mib, 8 * mib, 16 * mib}});
  CHECK(digests.md5 == "9d15926cdb80570cb03be93ecaf85514");
  REQUIRE(digests.multipart_etags.size() == 3);
  CHECK(digests.multipart_etags[0]
        == std::pair<std::uint64_t, std::string>{5 * mib, "b50ef73da7d846bba5d4b5a872f4fd9d-3"});
  CHECK(digests.multipart_etags[1].second == "f02e3c970b75118c98e67a1bef83b6f3-2");
  CHECK(digests.multipart_etags[2].second == "fa1ecb709ee4d95d31df952fec205e0f-1");
  CHECK(multipart_etag(content, 5 * mib) == "b50ef73da7d846bba5d4b5a872f4fd9d-3");
  // The other digests are those of the plain pass, and a Hub pass computes no MD5.
  auto plain = digest_file(file);
  CHECK(digests.sha256 == plain.sha256);
  CHECK(digests.git_blob_sha1 == plain.git_blob_sha1);
  CHECK(plain.md5.empty());
  CHECK(plain.multipart_etags.empty());

  // Above the threshold where the hashes share the work between threads: the same values.
  std::string big(40 * mib + 3, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>((i * 13 + i / 4099) & 0xff);
  }
  util::write_file_atomically(dir / "big", big);
  auto parallel = digest_file(dir / "big", DigestOptions{0, true, {8 * mib}});
  CHECK(parallel.md5 == hex_digest(HashAlgorithm::md5, big));
  CHECK(parallel.multipart_etags.at(0).second == multipart_etag(big, 8 * mib));
  CHECK(parallel.sha256 == hex_digest(HashAlgorithm::sha256, big));
}

TEST_CASE("S3 ETags: forms, and the part sizes that may have made a multipart one")
{
  CHECK(etag_part_count("9d15926cdb80570cb03be93ecaf85514") == 0);
  CHECK(etag_part_count("b50ef73da7d846bba5d4b5a872f4fd9d-3") == 3);
  CHECK(etag_part_count("b50ef73da7d846bba5d4b5a872f4fd9d-10000") == 10000);
  for (const char* odd : {"", "9D15926CDB80570CB03BE93ECAF85514", "b50ef73da7d846bba5d4b5a872f4fd9d-",
                          "b50ef73da7d846bba5d4b5a872f4fd9d-0", "b50ef73da7d846bba5d4b5a872f4fd9d-03",
                          "b50ef73da7d846bba5d4b5a872f4fd9d-x", "abc-3"}) {
    CAPTURE(odd);
    CHECK(!etag_part_count(odd));
  }
  constexpr std::uint64_t mib = 1 << 20;
  // 26 MiB in 6 parts: only 5 MiB gives 6 (4 MiB is under S3's minimum, 6 MiB gives 5).
  auto guess = guess_part_sizes(26 * mib, 6, {});
  CHECK(guess.certain);
  CHECK(guess.sizes == std::vector<std::uint64_t>{5 * mib});
  // 12 MiB + 17 bytes in 3 parts: 5 and 6 MiB both do.
  guess = guess_part_sizes(12 * mib + 17, 3, {16 * mib, 8 * mib});
  CHECK(guess.certain);
  CHECK(guess.sizes == std::vector<std::uint64_t>{5 * mib, 6 * mib});
  // 100 MiB in 13 parts: the AWS CLI's 8 MiB, found without being named.
  guess = guess_part_sizes(100 * mib, 13, {});
  CHECK(guess.certain);
  CHECK(guess.sizes == std::vector<std::uint64_t>{8 * mib});
  // 1 GiB in 2 parts: any of 512..1023 MiB; only the uploaders' sizes are tried, and a
  // mismatch proves nothing.
  guess = guess_part_sizes(1024 * mib, 2, {16 * mib, 8 * mib, 600 * mib});
  CHECK(!guess.certain);
  CHECK(guess.sizes == std::vector<std::uint64_t>{600 * mib});
  // More parts than S3 allows: nothing to try.
  CHECK(guess_part_sizes(100 * mib, 18'446'744'073'709'551'615ull, {8 * mib}).sizes.empty());
  CHECK(guess_part_sizes(100 * mib, 10001, {}).sizes.empty());
  // One part: the whole file, whatever the part size.
  guess = guess_part_sizes(3 * mib, 1, {});
  CHECK(guess.certain);
  CHECK(guess.sizes == std::vector<std::uint64_t>{3 * mib});
  // Past 10,000 parts neuron-cache stretches its part size, the AWS CLI doubles its own.
  auto huge = 200'000 * mib;
  guess = guess_part_sizes(huge, 10000, {16 * mib});
  CHECK(std::find(guess.sizes.begin(), guess.sizes.end(), (huge + 9999) / 10000) != guess.sizes.end());
  guess = guess_part_sizes(huge, 6250, {8 * mib});
  CHECK(std::find(guess.sizes.begin(), guess.sizes.end(), 32 * mib) != guess.sizes.end());
}

TEST_CASE("reading a missing file is an IoError")
{
  CHECK_THROWS_AS(digest_file("/nonexistent/neuron-cache"), hubcache::Error);
}

TEST_SUITE_END();
