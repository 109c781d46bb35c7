// Big files in a Hub commit: when Xet may carry them, they are hashed in the same read as
// their chunks (the Xet spec's upload flow), not read once more before the plan; whatever
// needs their digest earlier (the repo's copy to compare with, an LFS upload) hashes them
// then. Against the real test Hub with --xet.
#include "test_hub_server.hpp"
#include "test_support.hpp"

#include <hubcache/error.hpp>
#include <hubcache/storage/hub_repository.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <random>

using namespace hubcache;
using namespace hubcache::storage;
using test_support::k_alice;
using test_support::TestHub;
namespace stdfs = std::filesystem;

namespace storage_hub_big_files_test {

namespace {

// Just above the size from which a file waits for the Xet pass (16 MiB).
constexpr std::size_t k_big = (16u << 20) + 4321;
const std::string k_path = "neuronxcc-2.0/MODULE_1/model.neff";

std::string random_bytes(std::size_t size, unsigned seed)
{
  std::mt19937_64 random(seed);
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i + 8 <= size; i += 8) {
    auto word = random();
    std::memcpy(bytes.data() + i, &word, 8);
  }
  return bytes;
}

// The test Hub with Xet, and LFS uploads in parts big enough for a 16 MiB file.
TestHub xet_hub()
{
  return TestHub({"--xet", "--multipart-chunk-size", "8000000"});
}

CommitRequest one_file(const stdfs::path& file)
{
  CommitRequest request;
  request.message = "Synchronizing local compiler cache.";
  request.additions.push_back({k_path, FileSource::from_file(file)});
  return request;
}

const RepoFile& committed(const CommitResult& result)
{
  REQUIRE(result.files.size() == 1);
  return result.files.front();
}

// The repo's copy of the file, downloaded and compared byte for byte.
void check_holds(HubRepository& repo, const std::string& bytes, const stdfs::path& scratch)
{
  repo.download_file(k_path, scratch / "back");
  CHECK(util::read_file(scratch / "back", bytes.size() + 1) == bytes);
  auto listed = repo.stat(k_path);
  REQUIRE(listed);
  CHECK(listed->sha256 == util::hex_digest(util::HashAlgorithm::sha256, bytes));
}

} // namespace

TEST_CASE("hub commit of a big file through Xet: hashed in the pass that packs it, its sha256 committed")
{
  auto hub = xet_hub();
  test_support::TempDir dir;
  auto repo = hub.repo("alice/big");
  repo->create({});
  const auto bytes = random_bytes(k_big, 1);
  util::write_file_atomically(dir / "model.neff", bytes);
  hub.reset_stats();

  auto result = repo->commit(one_file(dir / "model.neff"));
  CHECK(result.files_added == 1);
  const auto& file = committed(result);
  CHECK(file.sha256 == util::hex_digest(util::HashAlgorithm::sha256, bytes));
  // Not read before the plan: the one digest the packing pass does not compute is unknown.
  CHECK(file.git_blob_sha1.empty());
  CHECK(hub.route_count("xet_token") == 1);
  CHECK(hub.route_count("cas_shard") == 1);
  CHECK(hub.route_count("cas_xorb") >= 1);
  CHECK(hub.route_count("lfs_batch") == 0);
  CHECK(result.xet_new_bytes >= k_big);
  check_holds(*repo, bytes, dir.path());

  SUBCASE("the same bytes at the same path again: compared with the repo's copy, nothing sent")
  {
    hub.reset_stats();
    auto again = repo->commit(one_file(dir / "model.neff"));
    CHECK_FALSE(again.created);
    CHECK(committed(again).sha256 == file.sha256);
    CHECK(hub.route_count("commit") == 0);
    CHECK(hub.route_count("cas_xorb") == 0);
  }
  SUBCASE("other bytes at that path: packed and committed in their place")
  {
    const auto other = random_bytes(k_big + 1000, 2);
    util::write_file_atomically(dir / "model.neff", other);
    hub.reset_stats();
    auto changed = repo->commit(one_file(dir / "model.neff"));
    CHECK(changed.files_added == 1);
    CHECK(committed(changed).sha256 == util::hex_digest(util::HashAlgorithm::sha256, other));
    CHECK(hub.route_count("cas_shard") == 1);
    check_holds(*repo, other, dir.path());
  }
}

TEST_CASE("hub commit of a big file that grows after the plan: a clear error, no commit naming it")
{
  auto hub = xet_hub();
  test_support::TempDir dir;
  auto repo = hub.repo("alice/moving");
  repo->create({});
  const auto before = hub.commit_count("alice/moving");
  util::write_file_atomically(dir / "model.neff", random_bytes(k_big, 4));
  auto request = one_file(dir / "model.neff");
  // The commit asks for each file's unit once its sizes are known and before anything is
  // sent: the file grows there, as a compiler still writing it would make it.
  bool grown = false;
  request.unit_of = [&](std::string_view path) {
    if (!grown) {
      grown = true;
      std::ofstream(dir / "model.neff", std::ios::app) << "more bytes";
    }
    return CommitUnit{std::string(path), 0};
  };
  try {
    repo->commit(request);
    FAIL("the commit of a file that changed went through");
  } catch (const IntegrityError& error) {
    CHECK(std::string(error.what()).find("changed while it was being pushed") != std::string::npos);
  }
  CHECK(grown);
  CHECK(hub.commit_count("alice/moving") == before);
  CHECK_FALSE(repo->stat(k_path));
}

TEST_CASE("hub commit of a big file without Xet, or with Xet offered by the LFS batch: hashed before it is asked")
{
  auto hub = xet_hub();
  test_support::TempDir dir;
  const auto bytes = random_bytes(k_big, 3);
  util::write_file_atomically(dir / "model.neff", bytes);
  const auto sha256 = util::hex_digest(util::HashAlgorithm::sha256, bytes);
  const auto git_blob_sha1 = util::git_blob_sha1(bytes);

  SUBCASE("HF_HUB_DISABLE_XET=1: an LFS upload named by the sha256")
  {
    HubRepository repo("alice/lfs", hub::HubConfig::from_environment(
                                      hub.environment(k_alice, {{"HF_HUB_DISABLE_XET", "1"}}), std::nullopt));
    repo.create({});
    hub.reset_stats();
    auto result = repo.commit(one_file(dir / "model.neff"));
    CHECK(committed(result).sha256 == sha256);
    CHECK(committed(result).git_blob_sha1 == git_blob_sha1);
    CHECK(hub.route_count("lfs_batch") == 1);
    CHECK(hub.route_count("cas_xorb") == 0);
    check_holds(repo, bytes, dir.path());
  }
  SUBCASE("no write token asked directly: the batch names the object, then Xet carries it")
  {
    auto repo = hub.repo("alice/batch");
    repo->create({});
    hub.fault({{"match", "/xet-write-token/"}, {"action", "status"}, {"status", 404}, {"count", 1000}});
    hub.reset_stats();
    auto result = repo->commit(one_file(dir / "model.neff"));
    CHECK(committed(result).sha256 == sha256);
    CHECK(hub.route_count("lfs_batch") == 1);
    CHECK(hub.route_count("cas_shard") == 1);
    CHECK(hub.route_count("lfs_upload") == 0);
    hub.control("DELETE", "/_test/faults");
    check_holds(*repo, bytes, dir.path());
  }
}

} // namespace storage_hub_big_files_test
