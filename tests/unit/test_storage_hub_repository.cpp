// The Hub backend end to end: HubRepository and HubApi against the real test Hub
// (neuron-cache-test-hub) started as a subprocess on 127.0.0.1, with tiny LFS and
// multipart thresholds so small files exercise every upload path, and its fault routes
// for dropped connections, bad bytes, error bursts and malformed answers.
#include "test_hub_server.hpp"
#include "test_support.hpp"

#include <hubcache/compilecache/sync.hpp>
#include <hubcache/error.hpp>
#include <hubcache/http/client.hpp>
#include <hubcache/hub/api.hpp>
#include <hubcache/storage/factory.hpp>
#include <hubcache/storage/hub_repository.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace hubcache;
using test_support::message_of;
using namespace hubcache::util;
using namespace hubcache::hub;
using namespace hubcache::storage;
using nlohmann::json;
using test_support::k_alice;
using test_support::k_bob;
using test_support::k_carol_read_only;
using test_support::TestHub;
namespace stdfs = std::filesystem;

namespace storage_hub_repository_test {

namespace {

std::string pattern(std::size_t size, unsigned seed)
{
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 3)) & 0xFF);
  }
  return bytes;
}

std::string text_of_size(std::size_t size, char fill)
{
  return std::string(size, fill);
}

std::vector<std::string> names_in(const stdfs::path& directory)
{
  std::vector<std::string> names;
  for (const auto& entry : stdfs::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

TEST_CASE("hub repository on the test Hub: create under the token's user, private by default, 409 without exist_ok")
{
  TestHub hub;
  auto repo = hub.repo("neuron-cache");
  CHECK_FALSE(repo->exists());
  CHECK(repo->create({.is_private = true, .exist_ok = false}) == "alice/neuron-cache");
  CHECK(repo->spec() == "alice/neuron-cache");
  CHECK(repo->exists());
  auto info = repo->api().repo_info("alice/neuron-cache");
  REQUIRE(info);
  CHECK(info->is_private);

  auto again = hub.repo("alice/neuron-cache");
  CHECK_THROWS_AS(again->create({.is_private = true, .exist_ok = false}), RepoAlreadyExists);
  CHECK(again->create({.is_private = true, .exist_ok = true}) == "alice/neuron-cache");

  auto open = hub.repo("open-cache");
  open->create({.is_private = false, .exist_ok = false});
  CHECK_FALSE(open->api().repo_info("alice/open-cache")->is_private);

  // Who may see what: the private repo is invisible to others and to anonymous callers.
  CHECK_FALSE(hub.repo("alice/neuron-cache", std::string(k_bob))->exists());
  CHECK_FALSE(hub.repo("alice/neuron-cache", std::nullopt)->exists());
  CHECK(hub.repo("alice/open-cache", std::nullopt)->exists());
  CHECK_THROWS_AS(hub.repo("alice/neuron-cache", std::string(k_bob))->revision(), RepoNotFound);
}

TEST_CASE("hub repository on the test Hub: bad credentials give typed errors with a next step and never the token")
{
  TestHub hub;
  auto message = message_of<TokenMissing>([&] { hub.repo("x", std::nullopt)->create({}); });
  CHECK(message.find("no Hugging Face token") != std::string::npos);

  std::string bad = "hf_this_token_is_not_known_123";
  message = message_of<AuthError>([&] { hub.repo("x", bad)->create({}); });
  CHECK(message.find(bad) == std::string::npos);
  message = message_of<AuthError>([&] { hub.repo("alice/x", bad)->create({}); });
  CHECK(message.find(bad) == std::string::npos);
  // exists() tells a bad token apart from a missing repo.
  message = message_of<AuthError>([&] { hub.repo("alice/x", bad)->exists(); });
  CHECK(message.find("token") != std::string::npos);
  CHECK(message.find(bad) == std::string::npos);

  message = message_of<AuthError>([&] { hub.repo("y", std::string(k_carol_read_only))->create({}); });
  CHECK(message.find("write access") != std::string::npos);
  CHECK(message.find(k_carol_read_only) == std::string::npos);

  hub.repo("shared")->create({.is_private = false, .exist_ok = false});
  CommitRequest request{"add", "", {{"a.txt", FileSource::from_bytes("x")}}, {}, std::nullopt};
  message = message_of<AuthError>([&] { hub.repo("alice/shared", std::string(k_bob))->commit(request); });
  CHECK(message.find("write access") != std::string::npos);
  CHECK(message.find(k_bob) == std::string::npos);
  message = message_of<TokenMissing>([&] { hub.repo("alice/shared", std::nullopt)->commit(request); });
  CHECK(message.find("no Hugging Face token") != std::string::npos);

  // A missing repo carries which repo and whether a token was sent; no program's words.
  try {
    hub.repo("alice/missing")->list_files();
    FAIL("expected RepoNotFound");
  } catch (const RepoNotFound& error) {
    CHECK(error.facts().repo == "alice/missing");
    CHECK(error.facts().token_sent);
    CHECK(std::string(error.hint()).find("neuron-cache") == std::string::npos);
  }
}

TEST_CASE("hub repository on the test Hub: check_writable asks for a token, the repo, then write access")
{
  TestHub hub;
  hub.repo("shared")->create({.is_private = false, .exist_ok = false});
  auto revision = hub.repo("alice/shared")->revision();
  CHECK_NOTHROW(hub.repo("alice/shared")->check_writable());
  auto message = message_of<AuthError>([&] { hub.repo("alice/shared", std::nullopt)->check_writable(); });
  CHECK(message.find("log in") != std::string::npos);
  message = message_of<AuthError>([&] { hub.repo("alice/shared", std::string(k_bob))->check_writable(); });
  CHECK(message.find("write access") != std::string::npos);
  CHECK(message.find(k_bob) == std::string::npos);
  message = message_of<AuthError>([&] { hub.repo("alice/shared", std::string(k_carol_read_only))->check_writable(); });
  CHECK(message.find("write access") != std::string::npos);
  CHECK_THROWS_AS(hub.repo("alice/missing")->check_writable(), RepoNotFound);
  // Nothing was changed by the probes.
  CHECK(hub.repo("alice/shared")->revision() == revision);
}

TEST_CASE(
  "hub repository on the test Hub: known digests are used as given and every addition comes back with its digests")
{
  TestHub hub;
  auto repo = hub.repo("digests");
  repo->create({});
  test_support::TempDir dir;
  std::string big(300, 'x'); // above the test Hub's 64-byte LFS threshold
  util::write_file_atomically(dir / "big.bin", big);
  util::write_file_atomically(dir / "small.txt", "small");
  auto known = digest_file(dir / "big.bin", 512);
  CommitRequest request{
    "digests",
    "",
    {{"a/big.bin", FileSource::from_file(dir / "big.bin"), std::make_shared<const FileDigests>(known)},
     {"a/small.txt", FileSource::from_file(dir / "small.txt")}},
    {},
    std::nullopt};
  auto result = repo->commit(request);
  REQUIRE(result.files.size() == 2);
  CHECK(result.files[0].sha256 == known.sha256);
  CHECK(result.files[0].git_blob_sha1 == known.git_blob_sha1);
  CHECK(result.files[1].sha256 == hex_digest(HashAlgorithm::sha256, "small"));
  CHECK(result.files[1].git_blob_sha1 == git_blob_sha1("small"));
  CHECK(repo->read_file("a/big.bin") == big);
  // A no-op commit still reports the digests.
  auto again = repo->commit(request);
  CHECK_FALSE(again.created);
  CHECK(again.files.size() == 2);
}

TEST_CASE("hub repository on the test Hub: regular, LFS and multipart files in one commit; listing, stat, download")
{
  TestHub hub;
  test_support::TempDir dir;
  auto repo = hub.repo("cache");
  repo->create({});

  auto small = text_of_size(40, 's');                     // regular (below the 64-byte LFS threshold)
  auto basic = pattern(90, 1);                            // LFS, basic PUT
  auto multi = pattern(250, 2);                           // LFS, 3 parts of 100 bytes
  auto empty = std::string();                             // always regular
  util::write_file_atomically(dir / "multi.neff", multi); // streamed from a file
  util::write_file_atomically(dir / "basic.neff", basic);
  hub.reset_stats();
  CommitRequest request;
  request.message = "Synchronizing local compiler cache.";
  request.additions = {{"neuronxcc-2.0/MODULE_1/model.neff", FileSource::from_file(dir / "multi.neff")},
                       {"neuronxcc-2.0/MODULE_1/compile_flags.json", FileSource::from_bytes(small)},
                       {"neuronxcc-2.0/MODULE_2/model.neff", FileSource::from_file(dir / "basic.neff")},
                       {"neuronxcc-2.0/MODULE_2/model.done", FileSource::from_bytes(empty)},
                       {"0_REGISTRY/0.0.1/llama/x.json", FileSource::from_bytes("{\"a\":1}")}};
  auto result = repo->commit(request);
  CHECK(result.created);
  CHECK(result.files_added == 5);
  CHECK(result.revision.size() == 40);
  CHECK(repo->revision() == result.revision);
  auto stats = hub.stats()["by_route"];
  CHECK(stats.value("commit", 0) == 1);
  CHECK(stats.value("lfs_batch", 0) == 1);
  CHECK(stats.value("lfs_upload", 0) == 1);
  CHECK(stats.value("lfs_part", 0) == 3);
  CHECK(stats.value("lfs_complete", 0) == 1);

  // Listing: 5 files over several pages (page size 3), with the right identities.
  hub.reset_stats();
  auto files = repo->list_files();
  CHECK(hub.route_count("tree") >= 2);
  std::map<std::string, RepoFile> by_path;
  for (const auto& file : files) {
    by_path[file.path] = file;
  }
  REQUIRE(by_path.count("neuronxcc-2.0/MODULE_1/model.neff") == 1);
  CHECK(by_path.size() >= 5);
  CHECK(by_path["neuronxcc-2.0/MODULE_1/model.neff"].sha256 == hex_digest(HashAlgorithm::sha256, multi));
  CHECK(by_path["neuronxcc-2.0/MODULE_1/model.neff"].size == 250);
  CHECK(by_path["neuronxcc-2.0/MODULE_1/compile_flags.json"].git_blob_sha1 == git_blob_sha1(small));
  CHECK(by_path["neuronxcc-2.0/MODULE_1/compile_flags.json"].sha256.empty());
  CHECK(by_path["neuronxcc-2.0/MODULE_2/model.done"].size == 0);
  auto module2 = repo->list_files("neuronxcc-2.0/MODULE_2/");
  REQUIRE(module2.size() == 2);
  CHECK(module2[0].path == "neuronxcc-2.0/MODULE_2/model.done");
  CHECK(repo->list_files("nothing/here").empty());

  auto stat = repo->stat("neuronxcc-2.0/MODULE_2/model.neff");
  REQUIRE(stat);
  CHECK(stat->sha256 == hex_digest(HashAlgorithm::sha256, basic));
  CHECK_FALSE(repo->stat("neuronxcc-2.0/MODULE_2/missing.neff"));
  CHECK_FALSE(repo->stat("neuronxcc-2.0")); // a folder is not a file

  // Downloads: LFS through the 302 to the CDN route, regular directly; verified.
  repo->download_file("neuronxcc-2.0/MODULE_1/model.neff", dir / "got-multi");
  CHECK(util::read_file(dir / "got-multi") == multi);
  repo->download_file("neuronxcc-2.0/MODULE_2/model.neff", dir / "got-basic");
  CHECK(util::read_file(dir / "got-basic") == basic);
  repo->download_file("neuronxcc-2.0/MODULE_2/model.done", dir / "got-empty");
  CHECK(util::read_file(dir / "got-empty").empty());
  CHECK(repo->read_file("neuronxcc-2.0/MODULE_1/compile_flags.json") == small);
  CHECK_THROWS_AS(repo->read_file("neuronxcc-2.0/nothing.json"), EntryNotFound);
  CHECK_THROWS_AS(repo->download_file("../outside", dir / "x"), InvalidArgument);

  // The same content again: nothing to upload, no commit.
  hub.reset_stats();
  auto again = repo->commit(request);
  CHECK_FALSE(again.created);
  CHECK(again.revision == result.revision);
  CHECK(hub.route_count("commit") == 0);
  CHECK(hub.route_count("lfs_batch") == 0);

  // One changed file: only it travels.
  request.additions = {{"neuronxcc-2.0/MODULE_1/compile_flags.json", FileSource::from_bytes("changed")},
                       {"neuronxcc-2.0/MODULE_2/model.neff", FileSource::from_file(dir / "basic.neff")}};
  auto changed = repo->commit(request);
  CHECK(changed.files_added == 1);
  CHECK(repo->read_file("neuronxcc-2.0/MODULE_1/compile_flags.json") == "changed");
}

TEST_CASE("hub repository on the test Hub: commit progress rises byte by byte during one big upload, never back")
{
  // 4 MiB at 40 Mbit/s per connection take most of a second: progress counted per
  // finished file or part would only ever show 0 and the part boundaries.
  for (std::uint64_t chunk : {std::uint64_t{1} << 30, std::uint64_t{1} << 20}) {
    CAPTURE(chunk);
    TestHub hub({"--multipart-chunk-size", std::to_string(chunk), "--bandwidth-mbps", "40"});
    test_support::TempDir dir;
    auto repo = hub.repo("cache");
    repo->create({});
    auto big = pattern(std::size_t{4} << 20, 7);
    util::write_file_atomically(dir / "big.neff", big);
    std::mutex mutex;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
    CommitRequest request;
    request.message = "Synchronizing local compiler cache.";
    request.additions = {{"neuronxcc-2.0/MODULE_1/model.neff", FileSource::from_file(dir / "big.neff")}};
    auto result = repo->commit(request, [&](std::uint64_t done, std::uint64_t total) {
      std::lock_guard lock(mutex);
      seen.emplace_back(done, total);
    });
    CHECK(result.files_added == 1);
    REQUIRE(seen.size() >= 3);
    std::size_t between_parts = 0;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      CHECK(seen[i].second == big.size());
      CHECK(seen[i].first <= big.size());
      if (i > 0) {
        CHECK(seen[i].first >= seen[i - 1].first);
      }
      if (seen[i].first > 0 && seen[i].first < big.size() && seen[i].first % (std::uint64_t{1} << 20) != 0) {
        ++between_parts;
      }
    }
    CHECK(seen.back().first == big.size());
    CHECK(between_parts >= 2);
  }
}

TEST_CASE("hub repository on the test Hub: deletions of files and folders; missing paths are no-ops")
{
  TestHub hub;
  auto repo = hub.repo("cache");
  repo->create({});
  CommitRequest add;
  add.message = "add";
  add.additions = {{"a/1.json", FileSource::from_bytes("1")},
                   {"a/b/2.neff", FileSource::from_bytes(pattern(100, 3))},
                   {"c/3.json", FileSource::from_bytes("3")}};
  repo->commit(add);
  CommitRequest remove;
  remove.message = "remove";
  remove.deletions = {{"a", true}, {"c/3.json", false}, {"c/missing.json", false}, {"nowhere", true}};
  auto result = repo->commit(remove);
  CHECK(result.created);
  CHECK(result.files_deleted == 3);
  for (const auto& file : repo->list_files()) {
    CHECK_MESSAGE((!file.path.starts_with("a/") && !file.path.starts_with("c/")), file.path);
  }
  auto nothing = repo->commit(remove);
  CHECK_FALSE(nothing.created);
}

TEST_CASE("hub repository on the test Hub: a big download, streamed past the page cache, resumes and verifies")
{
  // Parts of 4 MiB: a 10 MB object is a few parts, not a hundred thousand.
  TestHub hub({"--multipart-chunk-size", std::to_string(4 << 20)});
  test_support::TempDir dir;
  auto repo = hub.repo("cache");
  repo->create({});
  // Several write blocks and an unaligned tail; the drops land mid-block.
  auto huge = pattern(util::StreamWriter::k_direct_threshold + 2 * util::StreamWriter::k_block_size + 4321, 9);
  repo->commit({"huge", "", {{"m/huge.neff", FileSource::from_bytes(huge)}}, {}, std::nullopt});
  hub.reset_stats();
  hub.fault({{"match", "/_lfs/cdn/"},
             {"method", "GET"},
             {"count", 2},
             {"action", "drop_after_bytes"},
             {"bytes", util::StreamWriter::k_block_size + 777}});
  repo->download_file("m/huge.neff", dir / "huge.neff");
  CHECK(hub.route_count("lfs_cdn") == 3);
  CHECK(util::read_file(dir / "huge.neff", huge.size()) == huge);
  hub.fault({{"match", "/_lfs/cdn/"}, {"method", "GET"}, {"count", 1}, {"action", "corrupt_body"}});
  CHECK_THROWS_AS(repo->download_file("m/huge.neff", dir / "again.neff"), IntegrityError);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"huge.neff"});
}

TEST_CASE("hub repository on the test Hub: dropped, truncated, corrupt and mis-sized downloads")
{
  TestHub hub;
  test_support::TempDir dir;
  auto repo = hub.repo("cache");
  repo->create({});
  auto big = pattern(5000, 4);
  auto regular = text_of_size(60, 'r');
  CommitRequest add{"add",
                    "",
                    {{"m/model.neff", FileSource::from_bytes(big)}, {"m/flags.txt", FileSource::from_bytes(regular)}},
                    {},
                    std::nullopt};
  repo->commit(add);

  SUBCASE("a connection dropped mid-download resumes with Range")
  {
    hub.reset_stats();
    hub.fault(
      {{"match", "/_lfs/cdn/"}, {"method", "GET"}, {"count", 2}, {"action", "drop_after_bytes"}, {"bytes", 1500}});
    repo->download_file("m/model.neff", dir / "model.neff");
    CHECK(util::read_file(dir / "model.neff") == big);
    CHECK(hub.route_count("lfs_cdn") == 3);
    hub.fault({{"match", "flags.txt"}, {"method", "GET"}, {"count", 1}, {"action", "truncate_body"}});
    CHECK(repo->read_file("m/flags.txt") == regular);
  }
  SUBCASE("corrupt bytes are rejected and nothing is installed")
  {
    hub.fault({{"match", "/_lfs/cdn/"}, {"method", "GET"}, {"count", 1}, {"action", "corrupt_body"}});
    CHECK_THROWS_AS(repo->download_file("m/model.neff", dir / "model.neff"), IntegrityError);
    CHECK(names_in(dir.path()).empty());
    hub.fault({{"match", "flags.txt"}, {"method", "GET"}, {"count", 1}, {"action", "corrupt_body"}});
    CHECK_THROWS_AS(repo->download_file("m/flags.txt", dir / "flags.txt"), IntegrityError);
    CHECK(names_in(dir.path()).empty());
  }
  SUBCASE("a size that does not match the advertised one is rejected")
  {
    hub.fault({{"match", "model.neff"}, {"method", "GET"}, {"count", 1}, {"action", "wrong_size"}, {"size", 4000}});
    auto message = message_of<IntegrityError>([&] { repo->download_file("m/model.neff", dir / "model.neff"); });
    CHECK(message.find("nothing was installed") != std::string::npos);
    CHECK(names_in(dir.path()).empty());
    hub.fault({{"match", "model.neff"}, {"method", "GET"}, {"count", 1}, {"action", "wrong_size"}, {"size", 6000}});
    CHECK_THROWS_AS(repo->download_file("m/model.neff", dir / "model.neff"), Error);
    CHECK(names_in(dir.path()).empty());
  }
  SUBCASE("an existing destination is left intact when a download fails")
  {
    util::write_file_atomically(dir / "model.neff", "previous");
    hub.fault({{"match", "/_lfs/cdn/"}, {"method", "GET"}, {"count", 1}, {"action", "corrupt_body"}});
    CHECK_THROWS_AS(repo->download_file("m/model.neff", dir / "model.neff"), IntegrityError);
    CHECK(util::read_file(dir / "model.neff") == "previous");
    CHECK(names_in(dir.path()) == std::vector<std::string>{"model.neff"});
  }
}

TEST_CASE(
  "hub repository on the test Hub: error bursts are retried, persistent ones reported; malformed JSON is an error")
{
  TestHub hub;
  auto repo = hub.repo("cache");
  repo->create({});
  repo->commit({"add", "", {{"a.json", FileSource::from_bytes("{}")}}, {}, std::nullopt});

  hub.reset_stats();
  hub.fault(
    {{"match", "/api/models/alice/cache"}, {"method", "GET"}, {"count", 2}, {"action", "status"}, {"status", 500}});
  hub.fault(
    {{"match", "/tree/"}, {"method", "GET"}, {"count", 2}, {"action", "status"}, {"status", 503}, {"retry_after", 1}});
  CHECK(repo->revision().has_value());
  CHECK(repo->list_files().size() == 2); // a.json and the .gitattributes every new repo has
  CHECK(hub.route_count("model_info") == 3);
  CHECK(hub.route_count("tree") == 3);

  hub.fault(
    {{"match", "/tree/"}, {"method", "GET"}, {"count", 3}, {"action", "status"}, {"status", 429}, {"retry_after", 2}});
  CHECK(repo->list_files().size() == 2);

  hub.fault({{"match", "/tree/"}, {"method", "GET"}, {"count", 50}, {"action", "status"}, {"status", 503}});
  auto message = message_of<RemoteError>([&] { repo->list_files(); });
  CHECK(message.find("503") != std::string::npos);
  hub.control("DELETE", "/_test/faults");

  hub.fault({{"match", "/tree/"}, {"method", "GET"}, {"count", 1}, {"action", "malformed_json"}});
  message = message_of<RemoteError>([&] { repo->list_files(); });
  CHECK(message.find("invalid JSON") != std::string::npos);
  hub.fault({{"match", "/api/models/alice/cache"}, {"method", "GET"}, {"count", 1}, {"action", "malformed_json"}});
  CHECK_THROWS_AS(repo->revision(), RemoteError);
  hub.fault({{"match", "whoami"}, {"method", "GET"}, {"count", 1}, {"action", "malformed_json"}});
  CHECK_THROWS_AS(hub.repo("other")->create({}), RemoteError);
  hub.fault({{"match", "preupload"}, {"method", "POST"}, {"count", 1}, {"action", "malformed_json"}});
  CHECK_THROWS_AS(repo->commit({"x", "", {{"b.json", FileSource::from_bytes("1")}}, {}, std::nullopt}), RemoteError);
  CHECK_FALSE(repo->stat("b.json"));
}

TEST_CASE("hub repository on the test Hub: unsafe and odd listed paths are skipped and reported, never used")
{
  TestHub hub;
  test_support::TempDir dir;
  auto repo = hub.repo("cache");
  repo->create({});
  repo->commit({"add", "", {{"ok/a.json", FileSource::from_bytes("{}")}}, {}, std::nullopt});
  for (const char* evil :
       {"../evil", "/etc/passwd-copy", ".git/config", "ok/../../x", "ok/back\\slash", "ok/tab\there"}) {
    CAPTURE(evil);
    auto other = hub.repo("cache-" + std::to_string(std::hash<std::string>{}(evil) % 100000));
    other->create({});
    other->commit({"add", "", {{"ok/a.json", FileSource::from_bytes("{}")}}, {}, std::nullopt});
    hub.control("POST", "/_test/inject-tree-entry", {{"repo", other->spec()}, {"path", evil}, {"content", "pwned"}});
    auto files = other->list_files();
    CHECK(std::count_if(files.begin(), files.end(), [](const RepoFile& f) { return f.path == "ok/a.json"; }) == 1);
    CHECK(std::none_of(files.begin(), files.end(), [&](const RepoFile& f) { return f.path == evil; }));
    CHECK(other->take_skipped_paths() == std::vector<std::string>{evil}); // the file, not its folders
    CHECK(other->take_skipped_paths().empty());
    CHECK_THROWS_AS(other->download_file(evil, dir / "x"), InvalidArgument);
  }
  CHECK(names_in(dir.path()).empty());
  CHECK(repo->list_files("ok").size() == 1);
}

TEST_CASE(
  "hub repository on the test Hub: a commit conflict re-plans on the new head; with a parent revision it is reported")
{
  TestHub hub;
  auto repo = hub.repo("cache");
  repo->create({});
  auto first = repo->commit({"one", "", {{"one.json", FileSource::from_bytes("1")}}, {}, std::nullopt});

  // Someone commits between our plan and our commit: simulated by a 412 on the first POST.
  hub.fault({{"match", "/commit/"}, {"method", "POST"}, {"count", 1}, {"action", "status"}, {"status", 412}});
  auto commits_before = hub.commit_count("alice/cache");
  auto second = repo->commit({"two", "", {{"two.json", FileSource::from_bytes("2")}}, {}, std::nullopt});
  CHECK(second.created);
  CHECK(hub.commit_count("alice/cache") == commits_before + 1);

  // The caller's parent is stale: ConflictError, nothing committed.
  CommitRequest stale{"three", "", {{"three.json", FileSource::from_bytes("3")}}, {}, first.revision};
  CHECK_THROWS_AS(repo->commit(stale), ConflictError);
  CHECK_FALSE(repo->stat("three.json"));

  // Real concurrent writers: every commit lands, each on top of the other.
  std::vector<std::thread> writers;
  std::vector<std::string> errors(4);
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back([&, i] {
      try {
        auto own = hub.repo("alice/cache");
        own->commit(
          {"w" + std::to_string(i),
           "",
           {{"w/" + std::to_string(i) + ".neff", FileSource::from_bytes(pattern(120, static_cast<unsigned>(i)))}},
           {},
           std::nullopt});
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(i)] = error.what();
      }
    });
  }
  for (auto& writer : writers) {
    writer.join();
  }
  for (const auto& error : errors) {
    CHECK_MESSAGE(error.empty(), error);
  }
  CHECK(repo->list_files("w").size() == 4);

  // Conflicts that never end give up after 6 attempts.
  hub.fault({{"match", "/commit/"}, {"method", "POST"}, {"count", 6}, {"action", "status"}, {"status", 409}});
  auto message = message_of<ConflictError>([&] {
    repo->commit({"x", "", {{"x.json", FileSource::from_bytes("x")}}, {}, std::nullopt});
  });
  CHECK(message.find("6 attempts") != std::string::npos);
}

TEST_CASE("hub repository on the test Hub: connections dropped mid-upload and mid-commit are recovered without "
          "duplicate commits")
{
  TestHub hub;
  test_support::TempDir dir;
  auto repo = hub.repo("cache");
  repo->create({});
  auto multi = pattern(300, 9);
  auto basic = pattern(80, 8);
  util::write_file_atomically(dir / "multi.neff", multi);
  hub.fault(
    {{"match", "/_lfs/multipart/"}, {"method", "PUT"}, {"count", 2}, {"action", "drop_after_bytes"}, {"bytes", 30}});
  hub.fault(
    {{"match", "/_lfs/upload/"}, {"method", "PUT"}, {"count", 1}, {"action", "drop_after_bytes"}, {"bytes", 10}});
  hub.fault({{"match", "/commit/"}, {"method", "POST"}, {"count", 1}, {"action", "drop_after_bytes"}, {"bytes", 50}});
  auto before = hub.commit_count("alice/cache");
  auto result = repo->commit({"upload",
                              "",
                              {{"m/multi.neff", FileSource::from_file(dir / "multi.neff")},
                               {"m/basic.neff", FileSource::from_bytes(basic)},
                               {"m/flags.json", FileSource::from_bytes("{\"x\":1}")}},
                              {},
                              std::nullopt});
  CHECK(result.created);
  CHECK(hub.commit_count("alice/cache") == before + 1);
  CHECK(repo->read_file("m/multi.neff") == multi);
  CHECK(repo->read_file("m/basic.neff") == basic);

  // A commit whose answer is lost after it landed: the re-plan finds everything there.
  hub.control("DELETE", "/_test/faults");
  hub.fault({{"match", "/commit/"}, {"method", "POST"}, {"count", 1}, {"action", "status"}, {"status", 500}});
  before = hub.commit_count("alice/cache");
  result = repo->commit({"more", "", {{"m/more.json", FileSource::from_bytes("more")}}, {}, std::nullopt});
  CHECK(result.created);
  CHECK(hub.commit_count("alice/cache") == before + 1);
}

TEST_CASE("hub repository on the test Hub: offline mode never touches the network")
{
  TestHub hub;
  auto config =
    HubConfig::from_environment(hub.environment(std::string(k_alice), {{"HF_HUB_OFFLINE", "1"}}), std::nullopt);
  HubRepository repo("alice/cache", config);
  hub.reset_stats();
  CHECK_THROWS_AS(repo.exists(), HubOfflineError);
  CHECK_THROWS_AS(repo.create({}), HubOfflineError);
  CHECK_THROWS_AS(repo.list_files(), HubOfflineError);
  CHECK_THROWS_AS(repo.commit({"x", "", {{"a", FileSource::from_bytes("a")}}, {}, std::nullopt}), HubOfflineError);
  CHECK(hub.stats()["total"] == 0);
}

TEST_CASE("hub repository on the test Hub: download_hub_file_text reads one file of any model repo")
{
  TestHub hub;
  auto repo = hub.repo("models");
  repo->create({.is_private = false, .exist_ok = false});
  repo->commit({"add", "", {{"config.json", FileSource::from_bytes("{\"model_type\":\"llama\"}")}}, {}, std::nullopt});
  auto anonymous = hub.environment(std::nullopt);
  CHECK(download_hub_file_text(anonymous, std::nullopt, "alice/models", "config.json") == "{\"model_type\":\"llama\"}");
  CHECK_THROWS_AS(download_hub_file_text(anonymous, std::nullopt, "alice/models", "missing.json"), EntryNotFound);
  CHECK_THROWS_AS(download_hub_file_text(anonymous, std::nullopt, "alice/models", "config.json", "nobranch"),
                  RevisionNotFound);
  CHECK_THROWS_AS(download_hub_file_text(anonymous, std::nullopt, "alice/nothing", "config.json"), Error);
  CHECK_THROWS_AS(
    download_hub_file_text(hub.environment(std::string(k_bob)), std::nullopt, "alice/nothing", "config.json"),
    RepoNotFound);
  // open_repository picks this backend for Hub specs.
  auto opened = open_repository(parse_repo_spec("alice/models"), hub.environment(std::string(k_alice)), {});
  CHECK(opened->read_file("config.json") == "{\"model_type\":\"llama\"}");
}

TEST_CASE("Hub pull: a file rewritten after the listing is refused against the tree's sha256 and blob oid")
{
  TestHub hub;
  test_support::TempDir dir;
  auto repo = hub.repo("alice/listing-race");
  repo->create({});
  std::string flags = R"(["--model-type=transformer"])";
  auto entry = "neuronxcc-2.21.33363.0+82129205/MODULE_1+" + compilecache::flags_suffix(flags);
  CommitRequest request;
  request.message = "entry";
  request.additions.push_back({entry + "/compile_flags.json", FileSource::from_bytes(flags)});
  request.additions.push_back({entry + "/model.hlo_module.pb", FileSource::from_bytes("hlo")});
  request.additions.push_back({entry + "/model.neff", FileSource::from_bytes(pattern(300, 1))}); // LFS
  request.additions.push_back({entry + "/model.done", FileSource::from_bytes("")});
  repo->commit(request);

  for (const char* rewritten : {"model.neff", "model.hlo_module.pb"}) {
    CAPTURE(rewritten);
    compilecache::DigestCache digests;
    auto root = dir / (std::string("cache-") + rewritten);
    auto plan = compilecache::plan_pull(*repo, root, digests, {});
    REQUIRE(plan.installs.size() == 1);
    // Same size, other bytes, committed between the listing and the downloads: the Hub's
    // resolve answer describes the new bytes, the listing the old ones.
    CommitRequest rewrite;
    rewrite.message = "rewrite";
    auto path = entry + "/" + rewritten;
    auto old = repo->read_file(path);
    rewrite.additions.push_back({path, FileSource::from_bytes(std::string(old.size(), 'Z'))});
    repo->commit(rewrite);
    auto report = compilecache::apply_pull(*repo, root, std::move(plan), digests, {});
    CHECK(report.transferred.empty());
    REQUIRE(report.errors.size() == 1);
    CHECK(report.errors[0].detail.find("does not match the listing") != std::string::npos);
    CHECK_FALSE(stdfs::exists(root / entry));
  }
  // Listed afresh, the same files pull, and what is remembered is what was written.
  compilecache::DigestCache digests;
  auto report = compilecache::pull(*repo, dir / "cache", digests, {});
  CHECK(report.transferred == std::vector<std::string>{entry});
  auto neff = dir / "cache" / entry / "model.neff";
  auto known = digests.known(entry + "/model.neff", compilecache::stamp_of(neff));
  REQUIRE(known);
  CHECK(known->sha256 == hex_digest(HashAlgorithm::sha256, util::read_file(neff)));
}

} // namespace storage_hub_repository_test
