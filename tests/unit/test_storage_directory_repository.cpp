#include <hubcache/error.hpp>
#include <hubcache/storage/directory_repository.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>
#include <hubcache/util/nofollow.hpp>
#include <hubcache/util/process.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fcntl.h>
#include <map>
#include <set>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace hubcache;
using namespace hubcache::util;
using namespace hubcache::storage;

namespace storage_directory_repository_test {

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

// An empty directory repo, created, in a temp folder of its own.
struct CreatedRepo {
  test_support::TempDir dir;
  DirectoryRepository repo{dir / "repo"};
  CreatedRepo() { repo.create({}); }
};

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

const std::string k_entry = "neuronxcc-2.0/MODULE_1+d41d8cd9";

CommitRequest entry_request(const std::string& entry, const std::string& neff)
{
  return add_bytes({{entry + "/model.neff", neff}, {entry + "/compile_flags.json", ""}, {entry + "/model.done", ""}});
}

std::size_t staging_folders(const std::filesystem::path& repo)
{
  std::error_code ec;
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& item :
       std::filesystem::directory_iterator(repo / ".neuron-cache" / "staging", ec)) {
    ++count;
  }
  return count;
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
  // Only the hidden folder: `ls` shows an empty compile cache.
  std::set<std::string> names;
  for (const auto& item : std::filesystem::directory_iterator(dir / "repo")) {
    names.insert(item.path().filename().string());
  }
  CHECK(names == std::set<std::string>{".neuron-cache"});
}

TEST_CASE("a directory holding something else is never taken over")
{
  test_support::TempDir dir;
  util::write_file_atomically(dir / "precious", "data");
  DirectoryRepository repo(dir.path());
  CHECK_THROWS_AS(repo.create({}), RepoAlreadyExists);
  CHECK_THROWS_AS(repo.create({.is_private = true, .exist_ok = true}), RepoAlreadyExists);
  CHECK(util::read_file(dir / "precious") == "data");
  CHECK(!std::filesystem::exists(dir / ".neuron-cache"));
  CHECK_THROWS_AS(repo.list_files(), RepoNotFound);
  // The object-store format of earlier builds is something else too.
  std::filesystem::create_directories(dir / "old" / "objects");
  std::filesystem::create_directories(dir / "old" / "commits");
  CHECK_THROWS_AS(DirectoryRepository(dir / "old").create({}), RepoAlreadyExists);
}

TEST_CASE("a plain compile cache is a repo as it is, and create adopts it unchanged")
{
  test_support::TempDir dir;
  std::filesystem::create_directories(dir / "cache" / k_entry);
  util::write_file_atomically(dir / "cache" / k_entry / "model.neff", "neff");
  util::write_file_atomically(dir / "cache" / "lock", "");
  DirectoryRepository repo(dir / "cache");
  CHECK(repo.exists());
  CHECK(paths_of(repo.list_files()) == std::set<std::string>{"lock", k_entry + "/model.neff"});
  CHECK(repo.create({.is_private = true, .exist_ok = true}) == repo.spec());
  CHECK(util::read_file(dir / "cache" / k_entry / "model.neff") == "neff");
}

TEST_CASE_FIXTURE(CreatedRepo, "commit, list, stat, read and download in the compiler's own layout")
{
  auto initial = repo.revision();

  util::write_file_atomically(dir / "big.neff", std::string(2 * 1024 * 1024, 'n'));
  auto request = add_bytes({{k_entry + "/model.done", ""}, {k_entry + "/compile_flags.json", "[]"}},
                           "Synchronizing local compiler cache.");
  request.additions.push_back({k_entry + "/model.neff", FileSource::from_file(dir / "big.neff")});
  auto result = repo.commit(request);
  CHECK(result.created);
  CHECK(result.files_added == 3);
  CHECK(result.files.size() == 3);
  CHECK(result.revision != *initial);
  CHECK(repo.revision() == result.revision);
  // Plain files where the compiler looks for them.
  CHECK(util::read_file(dir / "repo" / k_entry / "model.neff") == util::read_file(dir / "big.neff"));
  CHECK(std::filesystem::is_regular_file(dir / "repo" / k_entry / "model.done"));

  auto files = repo.list_files();
  CHECK(files.size() == 3);
  CHECK(repo.list_files("neuronxcc-2.0/").size() == 3);
  CHECK(repo.list_files("neuronxcc-2").empty()); // a prefix is a folder, not a string prefix
  CHECK(repo.list_files("neuronxcc-9").empty());
  auto neff = repo.stat(k_entry + "/model.neff");
  REQUIRE(neff.has_value());
  CHECK(neff->size == 2 * 1024 * 1024);
  CHECK(neff->sha256 == hex_digest_file(HashAlgorithm::sha256, dir / "big.neff"));
  CHECK(!repo.stat("nope").has_value());
  CHECK(!repo.stat(".neuron-cache/repo.json").has_value());
  CHECK(repo.read_file(k_entry + "/compile_flags.json") == "[]");
  CHECK_THROWS_AS(repo.read_file("nope"), EntryNotFound);

  repo.download_file(k_entry + "/model.neff", dir / "out.neff");
  CHECK(util::read_file(dir / "out.neff") == util::read_file(dir / "big.neff"));
  CHECK(staging_folders(dir / "repo") == 0);
}

TEST_CASE_FIXTURE(CreatedRepo, "a file source in a shared directory reads <directory>/<path in repo>")
{
  std::filesystem::create_directories(dir / "cache" / k_entry);
  util::write_file_atomically(dir / "cache" / k_entry / "model.neff", "neff");
  util::write_file_atomically(dir / "cache" / k_entry / "model.done", "");
  util::write_file_atomically(dir / "elsewhere.json", "[]");
  auto shared = std::make_shared<const std::string>((dir / "cache").native());
  CommitRequest request;
  request.message = "test";
  request.additions.push_back({k_entry + "/model.neff", FileSource::in_directory(shared)});
  request.additions.push_back({k_entry + "/model.done", FileSource::in_directory(shared)});
  request.additions.push_back({k_entry + "/compile_flags.json", FileSource::from_file(dir / "elsewhere.json")});
  CHECK(request.additions[0].source.is_file());
  CHECK(request.additions[0].source.file_for(k_entry + "/model.neff")
        == (dir / "cache" / k_entry / "model.neff").native());
  // A directory given with its trailing '/' names the same files.
  auto slashed = FileSource::in_directory(std::make_shared<const std::string>(*shared + "/"));
  CHECK(slashed.file_for("a/b") == *shared + "/a/b");
  auto result = repo.commit(request);
  CHECK(result.files_added == 3);
  CHECK(repo.read_file(k_entry + "/model.neff") == "neff");
  CHECK(repo.read_file(k_entry + "/compile_flags.json") == "[]");
  // What a caller lent is given back: a whole path, or nothing for a shared directory.
  CHECK(request.additions[2].source.take() == (dir / "elsewhere.json").native());
  CHECK(request.additions[0].source.take().empty());
}

TEST_CASE_FIXTURE(CreatedRepo, "re-committing identical content changes nothing")
{
  auto first = repo.commit(add_bytes({{"a/x", "1"}}));
  auto again = repo.commit(add_bytes({{"a/x", "1"}}));
  CHECK(!again.created);
  CHECK(again.files_added == 0);
  CHECK(again.revision == first.revision);
}

// The sha256 of `path` as complete_digests gives it (empty when the repo cannot serve it).
std::string completed_sha256(Repository& repo, const std::string& path)
{
  RepoFile file{path, 0};
  std::vector<RepoFile*> files{&file};
  return repo.complete_digests(files).empty() ? file.sha256 : std::string();
}

TEST_CASE_FIXTURE(CreatedRepo, "the hash index never lies: a file changed behind its back is hashed again")
{
  repo.commit(add_bytes({{"a/x", "first"}}));
  CHECK(repo.stat("a/x")->sha256 == hex_digest(HashAlgorithm::sha256, "first"));
  // Same size, written in place: the stamp (mtime, ctime) moves, so the record is not used:
  // the listing leaves the digest out, and it is hashed again when asked for.
  util::write_file_atomically(dir / "repo" / "a" / "x", "other");
  CHECK(repo.stat("a/x")->sha256.empty());
  CHECK(repo.list_files()[0].sha256.empty());
  CHECK(completed_sha256(repo, "a/x") == hex_digest(HashAlgorithm::sha256, "other"));
  CHECK(repo.list_files()[0].sha256 == hex_digest(HashAlgorithm::sha256, "other")); // recorded
  // A corrupt index is only a cache: ignored.
  for (const auto& item : std::filesystem::directory_iterator(dir / "repo" / ".neuron-cache" / "index")) {
    util::write_file_atomically(item.path(), "neuron-cache-repo-index 1\ngarbage\n");
  }
  CHECK(repo.stat("a/x")->sha256.empty());
  CHECK(completed_sha256(repo, "a/x") == hex_digest(HashAlgorithm::sha256, "other"));
}

TEST_CASE_FIXTURE(CreatedRepo, "deleting files and folders")
{
  repo.commit(add_bytes({{"a/x", "1"}, {"a/y", "2"}, {"ab/z", "3"}, {"b", "4"}}));
  CommitRequest request;
  request.message = "delete";
  request.deletions = {{"a", true}, {"b", false}};
  auto result = repo.commit(request);
  CHECK(result.files_deleted == 3);
  CHECK(paths_of(repo.list_files()) == std::set<std::string>{"ab/z"});
  CHECK(staging_folders(dir / "repo") == 0);
}

TEST_CASE_FIXTURE(CreatedRepo, "the revision moves with any change to a file, even one that puts its mtime back")
{
  repo.commit(entry_request(k_entry, "NEFF-1"));
  auto before = repo.revision();
  CHECK(repo.revision() == before); // reading changes nothing
  auto neff = dir / "repo" / k_entry / "model.neff";
  struct ::stat old_status {};
  REQUIRE(::stat(neff.c_str(), &old_status) == 0);
  // Same size, rewritten in place, modification time restored: only ctime tells.
  {
    std::string bytes = "NEFF-2";
    FILE* out = std::fopen(neff.c_str(), "r+");
    REQUIRE(out != nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), out);
    std::fclose(out);
  }
  struct timespec times[2] = {old_status.st_atim, old_status.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, neff.c_str(), times, 0) == 0);
  CHECK(repo.revision() != before);
  // And the index does not vouch for the old content.
  auto listed = repo.list_files(k_entry);
  auto it =
    std::find_if(listed.begin(), listed.end(), [](const RepoFile& f) { return f.path.ends_with("model.neff"); });
  REQUIRE(it != listed.end());
  CHECK(it->sha256.empty());
  CHECK(completed_sha256(repo, k_entry + "/model.neff") == util::hex_digest(util::HashAlgorithm::sha256, "NEFF-2"));
}

TEST_CASE_FIXTURE(CreatedRepo, "invalid paths are refused before anything is written")
{
  auto before = repo.revision();
  for (const char* bad : {"../escape", "/abs", "a/../b", ".git/config", "a//b", "a/./b", "", ".neuron-cache/x"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(repo.commit(add_bytes({{"ok", "1"}, {bad, "x"}})), InvalidArgument);
  }
  CHECK(repo.revision() == before);
  CHECK(repo.list_files().empty());
}

TEST_CASE_FIXTURE(CreatedRepo, "a parent revision that moved is a conflict")
{
  auto base = repo.revision();
  repo.commit(add_bytes({{"a", "1"}}));
  auto request = add_bytes({{"b", "2"}});
  request.parent_revision = base;
  CHECK_THROWS_AS(repo.commit(request), ConflictError);
  CHECK(!repo.stat("b").has_value());
}

TEST_CASE_FIXTURE(CreatedRepo, "a non-regular file inside the repo costs only itself: skipped, named, never read")
{
  repo.commit(entry_request(k_entry, "neff"));
  auto before = repo.revision();
  REQUIRE(::mkfifo((dir / "repo" / k_entry / "model.hlo_module.pb").c_str(), 0644) == 0);
  CHECK(paths_of(repo.list_files()).size() == 3); // the entry's three files, not the FIFO
  auto skipped = repo.take_skipped();
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].path == k_entry + "/model.hlo_module.pb");
  CHECK(skipped[0].reason == "is a FIFO");
  CHECK(repo.take_skipped().empty());
  CHECK_THROWS_WITH_AS(repo.read_file(k_entry + "/model.hlo_module.pb"), doctest::Contains("is a FIFO"),
                       IntegrityError);
  CHECK_THROWS_AS(repo.download_file(k_entry + "/model.hlo_module.pb", dir / "out"), IntegrityError);
  CHECK(!std::filesystem::exists(dir / "out"));
  CHECK(repo.revision() == before); // what the repo serves did not change
  std::filesystem::remove(dir / "repo" / k_entry / "model.hlo_module.pb");
  std::filesystem::create_symlink("/etc/passwd", dir / "repo" / k_entry / "leak");
  CHECK(repo.list_files().size() == 3);
  skipped = repo.take_skipped();
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].reason == "is a symbolic link leading outside the repo");
  CHECK_THROWS_AS(repo.read_file(k_entry + "/leak"), IntegrityError);
  CHECK_THROWS_AS(repo.download_file(k_entry + "/leak", dir / "out"), IntegrityError);
  CHECK(!std::filesystem::exists(dir / "out"));
  std::filesystem::remove(dir / "repo" / k_entry / "leak");
  CHECK(repo.revision() == before);
}

TEST_CASE_FIXTURE(CreatedRepo, "a big version folder is walked on several threads with the same listing and revision")
{
  std::vector<std::pair<std::string, std::string>> files;
  std::set<std::string> expected;
  for (int i = 0; i < 600; ++i) {
    auto entry = "neuronxcc-2.0/MODULE_" + std::to_string(1000 + i) + "+d41d8cd9";
    for (const char* name : {"model.neff", "model.done"}) {
      files.emplace_back(entry + "/" + name, std::to_string(i));
      expected.insert(entry + "/" + name);
    }
  }
  repo.commit(add_bytes(files));
  auto listed = repo.list_files();
  CHECK(paths_of(listed) == expected);
  CHECK(
    std::is_sorted(listed.begin(), listed.end(), [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; }));
  CHECK(repo.list_files("neuronxcc-2.0").size() == 1200);
  auto revision = repo.revision();
  CHECK(repo.revision() == revision);
  std::filesystem::remove(dir / "repo" / "neuronxcc-2.0" / "MODULE_1599+d41d8cd9" / "model.done");
  CHECK(repo.revision() != revision);
  // A symlinked folder deep in the big one is skipped, not followed, whichever thread meets it.
  std::filesystem::create_directory_symlink(dir.path(),
                                            dir / "repo" / "neuronxcc-2.0" / "MODULE_1300+d41d8cd9" / "sub");
  CHECK(repo.list_files().size() == 1199);
  auto skipped = repo.take_skipped();
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].path == "neuronxcc-2.0/MODULE_1300+d41d8cd9/sub");
}

TEST_CASE_FIXTURE(
  CreatedRepo, "a partial entry is completed file by file, model.done last; a different file replaces the present one")
{
  // What a compiler left: inputs, no neff, no done.
  std::filesystem::create_directories(dir / "repo" / k_entry);
  util::write_file_atomically(dir / "repo" / k_entry / "compile_flags.json", "");
  auto result = repo.commit(entry_request(k_entry, "neff-a"));
  CHECK(result.files_added == 2); // the flags file was already there, identical
  CHECK(util::read_file(dir / "repo" / k_entry / "model.neff") == "neff-a");
  // model.done is newer than model.neff: published after it.
  CHECK(std::filesystem::last_write_time(dir / "repo" / k_entry / "model.done")
        >= std::filesystem::last_write_time(dir / "repo" / k_entry / "model.neff"));

  // A recompiled neff for the same, now complete, entry: one rename replaces it.
  auto second = repo.commit(entry_request(k_entry, "neff-b"));
  CHECK(second.created);
  CHECK(second.files_added == 1);
  CHECK(util::read_file(dir / "repo" / k_entry / "model.neff") == "neff-b");
  // The result says what the repo holds.
  for (const auto& file : second.files) {
    if (file.path.ends_with("model.neff")) {
      CHECK(file.sha256 == hex_digest(HashAlgorithm::sha256, "neff-b"));
    }
  }
}

TEST_CASE_FIXTURE(CreatedRepo, "registry files are published after the entries they describe")
{
  auto request = add_bytes({{"neuronxcc-2.0/0_REGISTRY/0.4/arch/e.json", "{}"}});
  auto entry = entry_request(k_entry, "neff");
  request.additions.insert(request.additions.end(), entry.additions.begin(), entry.additions.end());
  bool entry_seen_first = false;
  repo.before_publish_hook = [&](const std::string& published) {
    entry_seen_first = published == k_entry && !std::filesystem::exists(dir / "repo" / "neuronxcc-2.0" / "0_REGISTRY");
  };
  repo.commit(request);
  CHECK(entry_seen_first);
  CHECK(std::filesystem::exists(dir / "repo" / "neuronxcc-2.0" / "0_REGISTRY" / "0.4" / "arch" / "e.json"));
}

TEST_CASE_FIXTURE(CreatedRepo, "an interrupt between two entries publishes the first whole and nothing after it")
{
  const std::string second = "neuronxcc-2.0/MODULE_2+d41d8cd9";
  auto request = add_bytes({{"neuronxcc-2.0/0_REGISTRY/0.4/arch/e.json", "{}"}});
  for (const auto& entry : {k_entry, second}) {
    auto more = entry_request(entry, "neff of " + entry);
    request.additions.insert(request.additions.end(), more.additions.begin(), more.additions.end());
  }
  InterruptScope interrupts;
  repo.before_publish_hook = [](const std::string&) { request_interrupt(SIGINT); };
  try {
    repo.commit(request);
    FAIL("the commit went on after the interrupt");
  } catch (const CommitInterrupted& stopped) {
    CHECK(stopped.signal() == SIGINT);
    auto left = std::set<std::string>(stopped.remaining_paths().begin(), stopped.remaining_paths().end());
    CHECK(left
          == std::set<std::string>{"neuronxcc-2.0/0_REGISTRY/0.4/arch/e.json", second + "/model.neff",
                                   second + "/compile_flags.json", second + "/model.done"});
  }
  reset_interrupt();
  CHECK(paths_of(repo.list_files())
        == std::set<std::string>{k_entry + "/model.neff", k_entry + "/compile_flags.json", k_entry + "/model.done"});
  CHECK(staging_folders(dir / "repo") == 0);
  // The same request again finishes it.
  repo.before_publish_hook = nullptr;
  repo.commit(request);
  CHECK(paths_of(repo.list_files()).size() == 7);
}

TEST_CASE_FIXTURE(CreatedRepo, "an interrupt while staging publishes nothing and removes the staging")
{
  auto request = entry_request(k_entry, "neff");
  InterruptScope interrupts;
  request_interrupt(SIGTERM);
  CHECK_THROWS_AS(repo.commit(request), CommitInterrupted);
  reset_interrupt();
  CHECK(repo.list_files().empty());
  CHECK(staging_folders(dir / "repo") == 0);
}

TEST_CASE("a writer killed mid-commit leaves nothing visible, and its staging goes with the next run")
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
    writer.before_publish_hook = [](const std::string&) { ::kill(::getpid(), SIGKILL); };
    writer.commit(entry_request(k_entry, std::string(100000, 'n')));
    return 0;
  });
  CHECK(wait_exit_code(child) == 128 + SIGKILL);

  CHECK(reader.revision() == before);
  CHECK(paths_of(reader.list_files()) == std::set<std::string>{"kept"});
  CHECK(staging_folders(dir / "repo") == 1);
  // The next writer is not blocked by the dead one, and removes what it left.
  auto result = reader.commit(add_bytes({{"after", "2"}}));
  CHECK(result.created);
  CHECK(paths_of(reader.list_files()) == std::set<std::string>{"after", "kept"});
  CHECK(staging_folders(dir / "repo") == 0);
}

TEST_CASE_FIXTURE(CreatedRepo, "staging of other hosts goes only once older than the age limit; live writers' stays")
{
  auto staging = dir / "repo" / ".neuron-cache" / "staging";
  auto young = staging / "w.tmp.nc.otherhost.123.abcdefghij";
  auto old = staging / "w.tmp.nc.otherhost.124.abcdefghij";
  auto alive = staging / ("w.tmp.nc." + test_support::temp_owner_of(::getpid()) + "abcdefghij");
  // A live writer of another container on this node: same host name, its own pid namespace.
  auto container = staging / ("w.tmp.nc." + util::host_name() + ".1.0123456789ab-7-abcdefghij");
  // Not of our writer-folder form: never ours to remove, however old.
  auto foreign = staging / "precious";
  for (const auto& path : {young, old, alive, container, foreign}) {
    std::filesystem::create_directories(path / "s0");
  }
  for (const auto& path : {old, foreign}) {
    std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now() - std::chrono::hours(48));
  }
  CHECK(repo.sweep_stale_staging() == 1);
  CHECK(std::filesystem::exists(young));
  CHECK(!std::filesystem::exists(old));
  CHECK(std::filesystem::exists(alive));
  CHECK(std::filesystem::exists(container));
  CHECK(std::filesystem::exists(foreign));
}

TEST_CASE_FIXTURE(CreatedRepo,
                  "a link planted in the private folder never turns a push into removals or writes outside")
{
  // An old, dead-looking writer folder and a file in the link's target: what a sweep that
  // followed the link would delete.
  auto outside = dir / "outside";
  auto old_writer = outside / "w.tmp.nc.otherhost.1.abcdefghij";
  std::filesystem::create_directories(old_writer);
  util::write_file_atomically(outside / "precious", "keep me");
  std::filesystem::last_write_time(old_writer, std::filesystem::file_time_type::clock::now() - std::chrono::hours(48));
  auto staging = dir / "repo" / ".neuron-cache" / "staging";
  std::filesystem::remove_all(staging);
  std::filesystem::create_directory_symlink(outside, staging);

  CHECK_THROWS_WITH_AS(repo.commit(entry_request(k_entry, "neff")),
                       doctest::Contains(".neuron-cache/staging is a symbolic link"), LinkOnTheWay);
  CHECK_THROWS_AS(repo.check_writable(), LinkOnTheWay);
  CHECK_THROWS_AS(repo.sweep_stale_staging(), LinkOnTheWay);
  CHECK(std::filesystem::exists(old_writer));
  CHECK(util::read_file(outside / "precious") == "keep me");
  CHECK(!std::filesystem::exists(dir / "repo" / k_entry));

  // The index as a link: pushes work, and write nothing into its target.
  std::filesystem::remove(staging);
  auto index = dir / "repo" / ".neuron-cache" / "index";
  std::filesystem::remove_all(index);
  auto index_target = dir / "index-target";
  std::filesystem::create_directories(index_target);
  std::filesystem::create_directory_symlink(index_target, index);
  CHECK(repo.commit(entry_request(k_entry, "neff")).created);
  CHECK(paths_of(repo.list_files()).size() == 3);
  CHECK(std::filesystem::is_empty(index_target));
}

TEST_CASE_FIXTURE(CreatedRepo, "a link inside the repo's tree is never written or removed through")
{
  auto outside = dir / "outside";
  std::filesystem::create_directories(outside / "MODULE_7+d41d8cd9");
  util::write_file_atomically(outside / "MODULE_7+d41d8cd9" / "model.neff", "keep me");
  std::filesystem::create_directory_symlink(outside, dir / "repo" / "neuronxcc-2.0");

  CHECK_THROWS_WITH_AS(repo.commit(entry_request(k_entry, "neff")), doctest::Contains("neuronxcc-2.0"), LinkOnTheWay);
  CHECK_THROWS_WITH(repo.commit(add_bytes({{"neuronxcc-2.0/0_REGISTRY/x.json", "{}"}})),
                    doctest::Contains("below a symbolic link"));
  CommitRequest removal;
  removal.message = "remove";
  removal.deletions.push_back({"neuronxcc-2.0/MODULE_7+d41d8cd9", true});
  CHECK_THROWS_AS(repo.commit(removal), LinkOnTheWay);
  CHECK(std::filesystem::directory_iterator(outside)->path().filename() == "MODULE_7+d41d8cd9");
  CHECK(util::read_file(outside / "MODULE_7+d41d8cd9" / "model.neff") == "keep me");
  CHECK(staging_folders(dir / "repo") == 0);
}

TEST_CASE("concurrent writers all land; writers of the same entry end with one good copy")
{
  test_support::TempDir dir;
  DirectoryRepository(dir / "repo").create({});
  constexpr int writers = 6;
  constexpr int entries_each = 8;
  std::vector<pid_t> children;
  for (int w = 0; w < writers; ++w) {
    children.push_back(spawn([&, w] {
      DirectoryRepository repo(dir / "repo");
      for (int c = 0; c < entries_each; ++c) {
        auto own = "neuronxcc-2.0/MODULE_" + std::to_string(100 + w * entries_each + c) + "+d41d8cd9";
        repo.commit(entry_request(own, own));
        // Every writer also writes the shared entries, each with its own neff.
        auto shared = "neuronxcc-2.0/MODULE_" + std::to_string(c) + "+d41d8cd9";
        repo.commit(entry_request(shared, "neff of writer " + std::to_string(w) + std::string(5000, 'x')));
      }
      return 0;
    }));
  }
  for (auto child : children) {
    CHECK(wait_exit_code(child) == 0);
  }
  DirectoryRepository repo(dir / "repo");
  auto files = repo.list_files();
  CHECK(files.size() == 3 * (writers * entries_each + entries_each));
  for (int c = 0; c < entries_each; ++c) {
    auto shared = dir / "repo" / ("neuronxcc-2.0/MODULE_" + std::to_string(c) + "+d41d8cd9");
    auto neff = util::read_file(shared / "model.neff");
    CHECK(neff.starts_with("neff of writer "));
    CHECK(neff.size() == std::string("neff of writer 0").size() + 5000);
    CHECK(std::filesystem::exists(shared / "model.done"));
  }
  CHECK(staging_folders(dir / "repo") == 0);
}

TEST_CASE("a reader during commits never sees a partial entry")
{
  test_support::TempDir dir;
  DirectoryRepository(dir / "repo").create({});
  pid_t writer = spawn([&] {
    DirectoryRepository repo(dir / "repo");
    for (int i = 0; i < 60; ++i) {
      repo.commit(entry_request("neuronxcc-2.0/MODULE_" + std::to_string(i) + "+d41d8cd9", std::string(20000, 'n')));
    }
    return 0;
  });
  DirectoryRepository reader(dir / "repo");
  int observations = 0;
  bool partial = false;
  for (;;) {
    std::map<std::string, int> per_entry;
    for (const auto& file : reader.list_files()) {
      per_entry[file.path.substr(0, file.path.rfind('/'))]++;
    }
    for (const auto& [entry, count] : per_entry) {
      partial = partial || count != 3;
    }
    ++observations;
    int status = 0;
    if (::waitpid(writer, &status, WNOHANG) == writer) {
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
      break;
    }
  }
  CHECK(!partial);
  CHECK(observations > 1);
  CHECK(reader.list_files().size() == 180);
}

TEST_SUITE_END();

} // namespace storage_directory_repository_test
