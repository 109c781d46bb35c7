#include <hubcache/storage/directory_repository.hpp>
#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <set>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace hubcache;
using namespace hubcache::util;
using namespace hubcache::storage;

namespace {

CommitRequest add_bytes(std::vector<std::pair<std::string, std::string>> files, std::string message = "test")
{
  CommitRequest request;
  request.message = std::move(message);
  for (auto& [path, content] : files) {
    request.additions.push_back({path, FileSource::from_bytes(content)});
  }
  return request;
}

std::set<std::string> paths_of(const std::vector<RepoFile>& files)
{
  std::set<std::string> paths;
  for (const auto& file : files) {
    paths.insert(file.path);
  }
  return paths;
}

// Runs `body` in a child process and returns its exit status.
template <typename Body>
pid_t spawn(Body&& body)
{
  pid_t pid = ::fork();
  if (pid == 0) {
    int code = 0;
    try {
      code = body();
    } catch (...) {
      code = 99;
    }
    ::_exit(code);
  }
  return pid;
}

int wait_exit_code(pid_t pid)
{
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

TEST_SUITE_BEGIN("hubcache::storage::DirectoryRepository");

TEST_CASE("create, exists, and refusing to create twice")
{
  test_support::TempDir dir;
  DirectoryRepository repo(dir / "repo");
  CHECK(!repo.exists());
  CHECK_THROWS_AS(repo.revision(), RepoNotFound);
  CHECK(repo.create({}) == "file://" + (dir / "repo").string());
  CHECK(repo.exists());
  CHECK(repo.revision().has_value());
  CHECK(repo.revision()->size() == 40);
  CHECK_THROWS_AS(repo.create({}), RepoAlreadyExists);
  CHECK_NOTHROW(repo.create({.is_private = true, .exist_ok = true}));
  CHECK(repo.list_files().empty());
}

TEST_CASE("a non-empty directory that is not a repo is never taken over")
{
  test_support::TempDir dir;
  util::write_file_atomically(dir / "precious", "data");
  DirectoryRepository repo(dir.path());
  CHECK_THROWS_AS(repo.create({}), RepoAlreadyExists);
  CHECK_THROWS_AS(repo.create({.is_private = true, .exist_ok = true}), RepoAlreadyExists);
  CHECK(util::read_file(dir / "precious") == "data");
  CHECK_THROWS_AS(repo.list_files(), RepoNotFound);
}

TEST_CASE("commit, list, stat, read and download")
{
  test_support::TempDir dir;
  DirectoryRepository repo(dir / "repo");
  repo.create({});
  auto initial = repo.revision();

  util::write_file_atomically(dir / "big.neff", std::string(2 * 1024 * 1024, 'n'));
  auto request = add_bytes({{"neuronxcc-2.0/MODULE_1+d41d8cd9/model.done", ""},
                            {"neuronxcc-2.0/MODULE_1+d41d8cd9/compile_flags.json", "[]"}},
                           "Synchronizing local compiler cache.");
  request.additions.push_back({"neuronxcc-2.0/MODULE_1+d41d8cd9/model.neff", FileSource::from_file(dir / "big.neff")});
  auto result = repo.commit(request);
  CHECK(result.created);
  CHECK(result.files_added == 3);
  CHECK(result.revision != *initial);
  CHECK(repo.revision() == result.revision);

  auto files = repo.list_files();
  CHECK(files.size() == 3);
  CHECK(repo.list_files("neuronxcc-2.0/").size() == 3);
  CHECK(repo.list_files("neuronxcc-2").empty()); // a prefix is a folder, not a string prefix
  auto neff = repo.stat("neuronxcc-2.0/MODULE_1+d41d8cd9/model.neff");
  REQUIRE(neff.has_value());
  CHECK(neff->size == 2 * 1024 * 1024);
  CHECK(neff->sha256 == hex_digest_file(HashAlgorithm::sha256, dir / "big.neff"));
  CHECK(!repo.stat("nope").has_value());
  CHECK(repo.read_file("neuronxcc-2.0/MODULE_1+d41d8cd9/compile_flags.json") == "[]");
  CHECK_THROWS_AS(repo.read_file("nope"), EntryNotFound);

  repo.download_file("neuronxcc-2.0/MODULE_1+d41d8cd9/model.neff", dir / "out.neff");
  CHECK(util::read_file(dir / "out.neff") == util::read_file(dir / "big.neff"));
}

TEST_CASE("re-committing identical content makes no commit")
{
  test_support::TempDir dir;
  DirectoryRepository repo(dir / "repo");
  repo.create({});
  auto first = repo.commit(add_bytes({{"a/x", "1"}}));
  auto again = repo.commit(add_bytes({{"a/x", "1"}}));
  CHECK(!again.created);
  CHECK(again.revision == first.revision);
}

TEST_CASE("deleting files and folders")
{
  test_support::TempDir dir;
  DirectoryRepository repo(dir / "repo");
  repo.create({});
  repo.commit(add_bytes({{"a/x", "1"}, {"a/y", "2"}, {"ab/z", "3"}, {"b", "4"}}));
  CommitRequest request;
  request.message = "delete";
  request.deletions = {{"a", true}, {"b", false}};
  auto result = repo.commit(request);
  CHECK(result.files_deleted == 3);
  CHECK(paths_of(repo.list_files()) == std::set<std::string>{"ab/z"});
}

TEST_CASE("invalid paths are refused before anything is written")
{
  test_support::TempDir dir;
  DirectoryRepository repo(dir / "repo");
  repo.create({});
  auto before = repo.revision();
  for (const char* bad : {"../escape", "/abs", "a/../b", ".git/config", "a//b", "a/./b", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(repo.commit(add_bytes({{"ok", "1"}, {bad, "x"}})), InvalidArgument);
  }
  CHECK(repo.revision() == before);
  CHECK(repo.list_files().empty());
}

TEST_CASE("a parent revision that moved is a conflict")
{
  test_support::TempDir dir;
  DirectoryRepository repo(dir / "repo");
  repo.create({});
  auto base = repo.revision();
  repo.commit(add_bytes({{"a", "1"}}));
  auto request = add_bytes({{"b", "2"}});
  request.parent_revision = base;
  CHECK_THROWS_AS(repo.commit(request), ConflictError);
  CHECK(!repo.stat("b").has_value());
}

TEST_CASE("corrupted objects are detected, never installed")
{
  test_support::TempDir dir;
  DirectoryRepository repo(dir / "repo");
  repo.create({});
  repo.commit(add_bytes({{"f", "original content"}}));
  auto sha = repo.stat("f")->sha256;
  auto object = dir / "repo" / "objects" / sha.substr(0, 2) / sha;
  std::filesystem::permissions(object, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  util::write_file_atomically(object, "tampered content");
  CHECK_THROWS_AS(repo.read_file("f"), IntegrityError);
  CHECK_THROWS_AS(repo.download_file("f", dir / "out"), IntegrityError);
  CHECK(!std::filesystem::exists(dir / "out"));
  CHECK(std::filesystem::is_empty(dir.path() / "repo" / ".." / "repo" / "commits") == false);
}

TEST_CASE("a writer killed mid-commit leaves nothing visible")
{
  test_support::TempDir dir;
  {
    DirectoryRepository repo(dir / "repo");
    repo.create({});
    repo.commit(add_bytes({{"kept", "1"}}));
  }
  DirectoryRepository reader(dir / "repo");
  auto before = reader.revision();

  pid_t child = spawn([&] {
    DirectoryRepository writer(dir / "repo");
    writer.before_publish_hook = [] { ::kill(::getpid(), SIGKILL); };
    writer.commit(add_bytes({{"MODULE_1/model.neff", std::string(100000, 'n')}, {"MODULE_1/model.done", ""}}));
    return 0;
  });
  CHECK(wait_exit_code(child) == 128 + SIGKILL);

  CHECK(reader.revision() == before);
  CHECK(paths_of(reader.list_files()) == std::set<std::string>{"kept"});
  // The next writer is not blocked by the dead one.
  auto result = reader.commit(add_bytes({{"after", "2"}}));
  CHECK(result.created);
  CHECK(paths_of(reader.list_files()) == std::set<std::string>{"after", "kept"});
}

TEST_CASE("concurrent committers all land")
{
  test_support::TempDir dir;
  DirectoryRepository(dir / "repo").create({});
  constexpr int writers = 6;
  constexpr int commits_each = 8;
  std::vector<pid_t> children;
  for (int w = 0; w < writers; ++w) {
    children.push_back(spawn([&, w] {
      DirectoryRepository repo(dir / "repo");
      for (int c = 0; c < commits_each; ++c) {
        auto name = "w" + std::to_string(w) + "/c" + std::to_string(c);
        repo.commit(add_bytes({{name, name}}, "commit " + name));
      }
      return 0;
    }));
  }
  for (auto child : children) {
    CHECK(wait_exit_code(child) == 0);
  }
  DirectoryRepository repo(dir / "repo");
  auto files = repo.list_files();
  CHECK(files.size() == writers * commits_each);
  for (const auto& file : files) {
    CHECK(repo.read_file(file.path) == file.path);
  }
}

TEST_CASE("a reader during commits sees whole commits, never a mix")
{
  test_support::TempDir dir;
  DirectoryRepository(dir / "repo").create({});
  // Each commit adds one entry made of three files; a reader must never see an entry
  // with fewer than three.
  pid_t writer = spawn([&] {
    DirectoryRepository repo(dir / "repo");
    for (int i = 0; i < 60; ++i) {
      auto entry = "MODULE_" + std::to_string(i) + "/";
      repo.commit(add_bytes({{entry + "model.neff", std::string(20000, 'n')},
                             {entry + "compile_flags.json", "[]"},
                             {entry + "model.done", ""}}));
    }
    return 0;
  });
  DirectoryRepository reader(dir / "repo");
  int observations = 0;
  bool mixed = false;
  for (;;) {
    std::map<std::string, int> per_entry;
    for (const auto& file : reader.list_files()) {
      per_entry[file.path.substr(0, file.path.find('/'))]++;
    }
    for (const auto& [entry, count] : per_entry) {
      mixed = mixed || count != 3;
    }
    ++observations;
    int status = 0;
    if (::waitpid(writer, &status, WNOHANG) == writer) {
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
      break;
    }
  }
  CHECK(!mixed);
  CHECK(observations > 1);
  CHECK(reader.list_files().size() == 180);
}

TEST_CASE("manifest round trip")
{
  DirectoryRepository::Manifest manifest;
  manifest["a b/c"] = {std::string(64, 'a'), 12};
  manifest["z"] = {std::string(64, 'b'), 0};
  CHECK(parse_manifest(serialize_manifest(manifest)).size() == 2);
  CHECK(parse_manifest(serialize_manifest(manifest)).at("a b/c").size == 12);
  CHECK_THROWS_AS(parse_manifest("garbage"), IntegrityError);
}

TEST_SUITE_END();

TEST_CASE("stale temp files of dead writers are swept, young ones kept")
{
  test_support::TempDir dir;
  DirectoryRepository repo(dir / "repo");
  repo.create({});
  auto old_temp = util::unique_temp_path(dir / "repo" / "objects" / "incoming");
  auto young_temp = util::unique_temp_path(dir / "repo" / "commits" / "00000000000000000002");
  util::write_file_atomically(old_temp, "junk");
  util::write_file_atomically(young_temp, "junk");
  std::filesystem::last_write_time(old_temp, std::filesystem::file_time_type::clock::now() - std::chrono::hours(48));
  CHECK(repo.sweep_stale_temp_files() == 1);
  CHECK(!std::filesystem::exists(old_temp));
  CHECK(std::filesystem::exists(young_temp));
  CHECK(repo.revision().has_value()); // the young temp is not mistaken for a commit
}
