#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/local_transfer.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/storage/directory_repository.hpp>
#include <hubcache/util/fs.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>

using namespace hubcache;
using namespace hubcache::storage;
namespace cc = hubcache::compilecache;
namespace stdfs = std::filesystem;

namespace {

void write(const stdfs::path& path, std::string_view content)
{
  stdfs::create_directories(path.parent_path());
  util::write_file_atomically(path, content);
}

// One complete module entry of the cache at `root`.
void make_entry(const stdfs::path& root, const std::string& key)
{
  std::string flags = R"(["--model-type=transformer"])";
  auto dir = root / ("neuronxcc-2.21.33363.0+82129205/MODULE_" + key + "+" + cc::flags_suffix(flags));
  write(dir / "compile_flags.json", flags);
  write(dir / "model.hlo_module.pb", "hlo " + key);
  write(dir / "model.neff", "neff " + key);
  write(dir / "model.done", "");
}

struct Fixture {
  test_support::TempDir dir;
  stdfs::path root = dir / "cache";
  DirectoryRepository repo{dir / "repo"};
  util::Environment env = util::Environment::from_map({{"XDG_CACHE_HOME", (dir / "xdg-cache").string()},
                                                       {"XDG_STATE_HOME", (dir / "xdg-state").string()},
                                                       {"HOME", (dir / "home").string()}});
  Fixture() { repo.create({}); }

  cc::TransferReport push(bool dry_run)
  {
    cc::LocalCache local(root, env, dry_run);
    auto scan = cc::scan(root, {}, &local.flags_memo());
    cc::PushSteps steps;
    steps.dry_run = dry_run;
    auto report = cc::push_scan(repo, local, std::move(scan), repo.revision(), steps);
    local.save();
    return report;
  }
};

} // namespace

TEST_SUITE_BEGIN("local_transfer");

TEST_CASE("push_scan: a dry run remembers nothing; a push is remembered, so the next one plans nothing")
{
  Fixture fixture;
  make_entry(fixture.root, "1");
  make_entry(fixture.root, "2");
  auto dry = fixture.push(true);
  CHECK(dry.planned.size() == 2);
  CHECK(dry.transferred.empty());
  CHECK_FALSE(dry.committed);
  CHECK_FALSE(stdfs::exists(fixture.dir / "xdg-cache")); // read-only: nothing written

  auto first = fixture.push(false);
  CHECK(first.committed);
  CHECK(first.transferred == first.planned);
  CHECK(first.files_transferred == 8);
  CHECK(first.files_hashed == 0); // an empty repo: nothing to compare
  REQUIRE(first.entries.size() == 2);
  CHECK(first.entries[0].files == 4);
  CHECK(stdfs::exists(fixture.dir / "xdg-cache"));

  // Nothing moved on either side: known from what the first push left, nothing hashed.
  auto again = fixture.push(false);
  CHECK_FALSE(again.committed);
  CHECK(again.planned.empty());
  CHECK(again.present.size() == 2);
  CHECK(again.files_hashed == 0);
  CHECK(again.revision == first.revision);

  // A new entry: only it is planned; the pushed ones are compared by their remembered digests.
  make_entry(fixture.root, "3");
  auto third = fixture.push(false);
  CHECK(third.transferred.size() == 1);
  CHECK(third.files_hashed == 0);
  CHECK(third.present.size() == 2);

  // Without what was remembered, every file the repo holds is hashed to be compared.
  stdfs::remove_all(fixture.dir / "xdg-cache");
  make_entry(fixture.root, "4");
  auto fourth = fixture.push(false);
  CHECK(fourth.transferred.size() == 1);
  CHECK(fourth.files_hashed == 12);
}

TEST_SUITE_END();
