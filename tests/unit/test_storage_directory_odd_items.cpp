// A directory repo in the presence of what a cache repo cannot serve (issue 30, findings
// 4-6): one odd item costs only itself, a listing reads no file, a copy is checked
// against its listing.
#include <hubcache/error.hpp>
#include <hubcache/storage/directory_repository.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace hubcache;
using namespace hubcache::storage;
namespace stdfs = std::filesystem;

namespace storage_directory_odd_items_test {

namespace {

const std::string k_entry = "neuronxcc-2.0/MODULE_1+d41d8cd9";

// A repo holding one entry, committed (its digests in the index) or written by hand (as
// a compiler writes it: nothing indexed).
struct EntryRepo {
  test_support::TempDir dir;
  stdfs::path root = dir / "repo";
  DirectoryRepository repo{root};
  explicit EntryRepo(bool committed = true)
  {
    repo.create({});
    if (committed) {
      CommitRequest request;
      request.message = "test";
      for (const char* name : {"model.neff", "compile_flags.json", "model.done"}) {
        request.additions.push_back({k_entry + "/" + name, FileSource::from_bytes(std::string("bytes of ") + name)});
      }
      repo.commit(request);
    } else {
      stdfs::create_directories(root / k_entry);
      for (const char* name : {"model.neff", "compile_flags.json", "model.done"}) {
        util::write_file_atomically(root / k_entry / name, std::string("bytes of ") + name);
      }
    }
  }
  std::set<std::string> listed()
  {
    std::set<std::string> paths;
    for (const auto& file : repo.list_files()) {
      paths.insert(file.path);
    }
    return paths;
  }
  // The listing's model.neff.
  RepoFile listed_neff()
  {
    for (auto& file : repo.list_files(k_entry)) {
      if (file.path.ends_with("model.neff")) {
        return file;
      }
    }
    FAIL("no model.neff listed");
    return {};
  }
  // path -> reason of every item noted since the last call.
  std::map<std::string, std::string> skipped()
  {
    std::map<std::string, std::string> items;
    for (auto& item : repo.take_skipped()) {
      items.emplace(std::move(item.path), std::move(item.reason));
    }
    return items;
  }
};

const std::set<std::string> k_entry_files = {k_entry + "/compile_flags.json", k_entry + "/model.done",
                                             k_entry + "/model.neff"};

std::string sha256_of(std::string_view bytes)
{
  return util::hex_digest(util::HashAlgorithm::sha256, bytes);
}

} // namespace

TEST_SUITE_BEGIN("hubcache::storage::DirectoryRepository odd items");

TEST_CASE_FIXTURE(EntryRepo, "each odd item is skipped with its reason; the rest of the repo is listed and read")
{
  auto folder = root / k_entry;
  REQUIRE(::mkfifo((folder / "pipe").c_str(), 0644) == 0);
  stdfs::create_symlink("/etc/passwd", folder / "leak");
  stdfs::create_symlink(folder / "gone", folder / "dangling");
  util::write_file_atomically(folder / "back\\slash", "x");
  util::write_file_atomically(folder / "bell\aname", "x");
  stdfs::create_directories(root / "neuronxcc-2.0" / ".git");
  util::write_file_atomically(root / "neuronxcc-2.0" / ".git" / "HEAD", "ref");
  // A folder 17 levels deep: the walk goes 15 levels down (a file there is 16 deep, as
  // deep as a repo path may go), the 16th is skipped.
  stdfs::path deep = root / "neuronxcc-2.0";
  std::string deep_path = "neuronxcc-2.0";
  std::string shallow_file;
  std::string too_deep;
  for (int level = 2; level <= 17; ++level) {
    deep /= "d";
    deep_path += "/d";
    if (level == 15) {
      stdfs::create_directories(deep);
      util::write_file_atomically(deep / "file", "15");
      shallow_file = deep_path + "/file";
    }
    if (level == 16) {
      too_deep = deep_path;
    }
  }
  stdfs::create_directories(deep);
  util::write_file_atomically(deep / "file", "deep");
  stdfs::create_symlink(root / "neuronxcc-2.0", folder / "loop"); // a link to a folder inside

  auto expected = k_entry_files;
  expected.insert(shallow_file);
  CHECK(listed() == expected);
  auto items = skipped();
  CHECK(items.size() == 8);
  CHECK(items[k_entry + "/pipe"] == "is a FIFO");
  CHECK(items[k_entry + "/leak"] == "is a symbolic link leading outside the repo");
  CHECK(items[k_entry + "/dangling"] == "is a dangling symbolic link");
  CHECK(items[k_entry + "/back\\slash"] == "has a name that cannot be a repo path");
  CHECK(items[k_entry + "/bell\aname"] == "has a name that cannot be a repo path");
  CHECK(items["neuronxcc-2.0/.git"] == "has a name that cannot be a repo path");
  CHECK(items[too_deep] == "nests directories deeper than 16 levels");
  CHECK(items[k_entry + "/loop"] == "is a symbolic link to a directory (never followed)");
  // Every command keeps working: reads, downloads, commits, the revision.
  CHECK(repo.read_file(k_entry + "/model.neff") == "bytes of model.neff");
  repo.download_file(k_entry + "/model.neff", dir / "out");
  CHECK(util::read_file(dir / "out") == "bytes of model.neff");
  auto revision = repo.revision();
  CHECK(revision.has_value());
  CommitRequest request;
  request.message = "more";
  request.additions.push_back({"neuronxcc-2.0/MODULE_2+d41d8cd9/model.neff", FileSource::from_bytes("two")});
  CHECK(repo.commit(request).files_added == 1);
  CHECK(repo.revision() != revision);
  // The registry's one-level listings leave the odd folders out too.
  auto folders = repo.list_folders("neuronxcc-2.0");
  CHECK(std::set<std::string>(folders.begin(), folders.end())
        == std::set<std::string>{"MODULE_1+d41d8cd9", "MODULE_2+d41d8cd9", "d"});
}

TEST_CASE_FIXTURE(EntryRepo, "an alias link to a file inside the repo is served as that file")
{
  // optimum's registry: <model_type>/<org>/<model>/<hash>.json -> ../../../<digest>/<hash>.json
  auto registry = root / "neuronxcc-2.0" / "0_REGISTRY" / "0.4.5";
  stdfs::create_directories(registry / "abc");
  stdfs::create_directories(registry / "llama" / "org" / "tiny");
  util::write_file_atomically(registry / "abc" / "h.json", R"({"model_id": "org/tiny"})");
  stdfs::create_symlink("../../../abc/h.json", registry / "llama" / "org" / "tiny" / "h.json");
  // Absolute, as os.symlink(config_path, ...) writes it.
  stdfs::create_directories(registry / "llama" / "org" / "other");
  stdfs::create_symlink(registry / "abc" / "h.json", registry / "llama" / "org" / "other" / "h.json");

  auto alias = "neuronxcc-2.0/0_REGISTRY/0.4.5/llama/org/tiny/h.json";
  auto absolute = "neuronxcc-2.0/0_REGISTRY/0.4.5/llama/org/other/h.json";
  auto files = repo.list_files("neuronxcc-2.0/0_REGISTRY");
  REQUIRE(files.size() == 3);
  for (const auto& file : files) {
    CHECK(file.size == 24);
  }
  CHECK(skipped().empty());
  CHECK(repo.read_file(alias) == R"({"model_id": "org/tiny"})");
  CHECK(repo.read_file(absolute) == R"({"model_id": "org/tiny"})");
  CHECK(repo.stat(alias)->size == 24);
  repo.download_file(alias, dir / "alias.json");
  CHECK(util::read_file(dir / "alias.json") == R"({"model_id": "org/tiny"})");
  RepoFile listed{alias, 24};
  std::vector<RepoFile*> asked{&listed};
  CHECK(repo.complete_digests(asked).empty());
  CHECK(listed.sha256 == sha256_of(R"({"model_id": "org/tiny"})"));
  // A link into the repo's private folder is not served.
  stdfs::create_symlink(root / ".neuron-cache" / "repo.json", registry / "abc" / "marker.json");
  CHECK(repo.list_files("neuronxcc-2.0/0_REGISTRY").size() == 3);
  CHECK(skipped().size() == 1);
  CHECK_THROWS_AS(repo.read_file("neuronxcc-2.0/0_REGISTRY/0.4.5/abc/marker.json"), IntegrityError);
  // A file pushed to an alias's path replaces the link, never the file it leads to.
  CommitRequest request;
  request.message = "replace";
  request.additions.push_back({alias, FileSource::from_bytes("{}")});
  repo.commit(request);
  CHECK(!stdfs::is_symlink(registry / "llama" / "org" / "tiny" / "h.json"));
  CHECK(repo.read_file(alias) == "{}");
  CHECK(util::read_file(registry / "abc" / "h.json") == R"({"model_id": "org/tiny"})");
}

TEST_CASE_FIXTURE(EntryRepo, "a FIFO where a file is pushed is replaced, never opened")
{
  std::filesystem::remove(root / k_entry / "model.neff");
  REQUIRE(::mkfifo((root / k_entry / "model.neff").c_str(), 0644) == 0);
  CommitRequest request;
  request.message = "fix";
  request.additions.push_back({k_entry + "/model.neff", FileSource::from_bytes("neff")});
  CHECK(repo.commit(request).files_added == 1);
  CHECK(repo.read_file(k_entry + "/model.neff") == "neff");
}

TEST_CASE_FIXTURE(EntryRepo, "a sparse terabyte is never read: the listing is immediate, reads and digests refuse it")
{
  auto huge = root / k_entry / "huge.neff";
  {
    util::Fd fd(::open(huge.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    REQUIRE(fd);
    REQUIRE(::ftruncate(fd.get(), std::int64_t{1} << 40) == 0);
  }
  auto started = std::chrono::steady_clock::now();
  CHECK(listed() == k_entry_files);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  auto items = skipped();
  CHECK(items[k_entry + "/huge.neff"].find("more than the 68719476736") != std::string::npos);
  CHECK_THROWS_AS(repo.read_file(k_entry + "/huge.neff"), IntegrityError);
  CHECK_THROWS_AS(repo.download_file(k_entry + "/huge.neff", dir / "out"), IntegrityError);
  RepoFile listed_huge{k_entry + "/huge.neff", std::uint64_t{1} << 40};
  std::vector<RepoFile*> asked{&listed_huge};
  CHECK(repo.complete_digests(asked) == std::vector<std::string>{k_entry + "/huge.neff"});
  CHECK(listed_huge.sha256.empty());
  skipped(); // noted once more by complete_digests

  // Under a larger bound it is still a sparse file, not compiler output.
  repo.max_file_size = std::uint64_t{4} << 40;
  CHECK(listed() == k_entry_files);
  CHECK(skipped()[k_entry + "/huge.neff"].find("is a sparse file") != std::string::npos);
  // And a real file above the bound is skipped the same way.
  repo.max_file_size = 19;
  CHECK(listed() == std::set<std::string>{k_entry + "/model.done", k_entry + "/model.neff"});
  CHECK(skipped()[k_entry + "/compile_flags.json"].starts_with("is 27 bytes, more than the 19"));
}

TEST_CASE("a listing states sizes and only what the index knows; digests are computed on demand")
{
  EntryRepo fixture(false); // written as a compiler writes: nothing indexed
  auto files = fixture.repo.list_files();
  REQUIRE(files.size() == 3);
  std::vector<RepoFile*> asked;
  for (auto& file : files) {
    CHECK(file.sha256.empty());
    CHECK(file.size == std::string("bytes of ").size() + stdfs::path(file.path).filename().string().size());
    asked.push_back(&file);
  }
  CHECK(fixture.repo.complete_digests(asked).empty());
  for (const auto& file : files) {
    CHECK(file.sha256 == sha256_of("bytes of " + stdfs::path(file.path).filename().string()));
  }
  // Hashed once: the next listing knows them.
  for (const auto& file : fixture.repo.list_files()) {
    CHECK(!file.sha256.empty());
  }
  // A file gone since the listing cannot be served: said so, not hashed.
  std::filesystem::remove(fixture.root / k_entry / "model.done");
  RepoFile gone{k_entry + "/model.done", 19};
  std::vector<RepoFile*> again{&gone};
  CHECK(fixture.repo.complete_digests(again) == std::vector<std::string>{k_entry + "/model.done"});
}

TEST_CASE("a copy is checked against its listing; the digest returned is the one of the bytes written")
{
  SUBCASE("the listing knew the digest: other bytes of the same size are refused")
  {
    EntryRepo fixture(true);
    auto neff = fixture.listed_neff();
    REQUIRE(!neff.sha256.empty());
    util::write_file_atomically(fixture.root / k_entry / "model.neff", "BYTES OF MODEL.NEFF");
    CHECK_THROWS_WITH_AS(fixture.repo.download_listed(neff, fixture.dir / "out"),
                         doctest::Contains("changed since it was listed"), IntegrityError);
    CHECK(!stdfs::exists(fixture.dir / "out"));
  }
  SUBCASE("the listing gave a size only: another size is refused, the same size gives its own digest")
  {
    EntryRepo fixture(false);
    auto neff = fixture.listed_neff();
    REQUIRE(neff.sha256.empty());
    util::write_file_atomically(fixture.root / k_entry / "model.neff", "longer bytes of model.neff");
    CHECK_THROWS_WITH_AS(fixture.repo.download_listed(neff, fixture.dir / "out"),
                         doctest::Contains("changed since it was listed"), IntegrityError);
    CHECK(!stdfs::exists(fixture.dir / "out"));
    util::write_file_atomically(fixture.root / k_entry / "model.neff", "BYTES OF MODEL.NEFF");
    auto written = fixture.repo.download_listed(neff, fixture.dir / "out");
    CHECK(written.sha256 == sha256_of("BYTES OF MODEL.NEFF"));
    CHECK(util::read_file(fixture.dir / "out") == "BYTES OF MODEL.NEFF");
  }
}

TEST_CASE("as another user: a mode-000 file and a root-only lost+found are skipped, the rest served")
{
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to run a child as another user");
    return;
  }
  EntryRepo fixture(true);
  util::write_file_atomically(fixture.root / k_entry / "secret", "x");
  ::chmod((fixture.root / k_entry / "secret").c_str(), 0);
  stdfs::create_directories(fixture.root / "lost+found");
  ::chmod((fixture.root / "lost+found").c_str(), 0700);
  ::chmod(fixture.dir.path().c_str(), 0755);
  // Root reads a mode-000 file: served. Another user cannot: skipped with a warning.
  CHECK(fixture.listed().count(k_entry + "/secret") == 1);
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    int code = 0;
    try {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
        ::_exit(90);
      }
      DirectoryRepository repo(fixture.root);
      std::string report;
      for (const auto& file : repo.list_files()) {
        report += "file " + file.path + "\n";
      }
      for (const auto& item : repo.take_skipped()) {
        report += "skip " + item.path + ": " + item.reason + "\n";
      }
      (void)!::write(pipe_fds[1], report.data(), report.size());
    } catch (const std::exception& error) {
      std::string text = std::string("error ") + error.what() + "\n";
      (void)!::write(pipe_fds[1], text.data(), text.size());
      code = 1;
    }
    ::_exit(code);
  }
  ::close(pipe_fds[1]);
  std::string report;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) {
    report.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CAPTURE(report);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(report.find("file " + k_entry + "/model.neff\n") != std::string::npos);
  CHECK(report.find("skip " + k_entry + "/secret: is not readable by this user\n") != std::string::npos);
  CHECK(report.find("skip lost+found: cannot be read: Permission denied\n") != std::string::npos);
}

TEST_CASE("create adopts a compile cache with a lost+found and odd items, and says what it will not serve")
{
  test_support::TempDir dir;
  auto root = dir / "cache";
  stdfs::create_directories(root / k_entry);
  stdfs::create_directories(root / "lost+found");
  util::write_file_atomically(root / k_entry / "model.neff", "neff");
  util::write_file_atomically(root / k_entry / "model.done", "");
  REQUIRE(::mkfifo((root / k_entry / "pipe").c_str(), 0644) == 0);
  DirectoryRepository repo(root);
  CHECK(repo.exists()); // an unmarked compile cache is a repo as it is
  repo.create({});
  auto skipped = repo.take_skipped();
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].path == k_entry + "/pipe");
  CHECK(repo.list_files().size() == 2);
}

TEST_SUITE_END();

} // namespace storage_directory_odd_items_test
