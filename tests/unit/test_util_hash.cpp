#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

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

TEST_CASE("reading a missing file is an IoError")
{
  CHECK_THROWS_AS(digest_file("/nonexistent/neuron-cache"), hubcache::Error);
}

TEST_SUITE_END();
