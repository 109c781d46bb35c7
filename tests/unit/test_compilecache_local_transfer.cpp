#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/local_transfer.hpp>
#include <hubcache/compilecache/pull_lock.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/storage/directory_repository.hpp>
#include <hubcache/util/fs.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>

using namespace hubcache;
using namespace hubcache::storage;
namespace cc = hubcache::compilecache;
namespace stdfs = std::filesystem;

namespace compilecache_local_transfer_test {

namespace {

using test_support::write;

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

  // Another compile cache, which pulls from the repo.
  stdfs::path pulled = dir / "pulled";

  cc::TransferReport pull(bool dry_run, const cc::PullSteps& steps)
  {
    cc::LocalCache local(pulled, env, dry_run);
    cc::PullOptions options;
    options.dry_run = dry_run;
    return cc::pull_into(repo, local, options, steps);
  }

  std::optional<std::int64_t> last_use(const std::string& entry) const
  {
    return cc::UsageRecords(cc::UsageRecords::default_path(pulled, env)).last_use(entry);
  }
};

std::string entry_path(const std::string& key)
{
  return "neuronxcc-2.21.33363.0+82129205/MODULE_" + key + "+" + cc::flags_suffix(R"(["--model-type=transformer"])");
}

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

TEST_CASE("pull_into: asks before anything moves, names what it installs, and remembers its use once")
{
  Fixture fixture;
  make_entry(fixture.root, "1");
  make_entry(fixture.root, "2");
  fixture.push(false);
  std::size_t asked = 0;
  std::size_t asked_about = 0; // entries the last plan asked about installs
  std::size_t announced = 0;
  cc::PullSteps steps;
  steps.confirm = [&](const cc::PullPlan& plan) {
    ++asked;
    asked_about = plan.installs.size();
  };
  steps.planned = [&](std::vector<cc::TransferEntry>& entries) {
    announced += entries.size();
    for (auto& entry : entries) {
      entry.model = "org/model";
    }
  };

  // A dry run asks nothing, installs nothing and remembers nothing.
  auto dry = fixture.pull(true, steps);
  CHECK(asked == 0);
  CHECK(announced == 2);
  CHECK(dry.planned.size() == 2);
  CHECK(dry.transferred.empty());
  CHECK_FALSE(stdfs::exists(fixture.pulled));
  CHECK_FALSE(fixture.last_use(entry_path("1")));

  // Refused when asked: nothing moves.
  auto refusing = steps;
  refusing.confirm = [&](const cc::PullPlan&) { throw InvalidArgument("pull cancelled"); };
  CHECK_THROWS_AS(fixture.pull(false, refusing), InvalidArgument);
  CHECK_FALSE(stdfs::exists(fixture.pulled / entry_path("1")));

  auto report = fixture.pull(false, steps);
  CHECK(asked == 1);
  CHECK(asked_about == 2);
  CHECK(report.transferred == std::vector<std::string>{entry_path("1"), entry_path("2")});
  REQUIRE(report.entries.size() == 2);
  CHECK(report.entries[0].model == "org/model"); // the caller's names are kept
  CHECK(report.revision == fixture.repo.revision());
  CHECK(stdfs::exists(fixture.pulled / entry_path("2") / "model.done"));
  CHECK(fixture.last_use(entry_path("1")));

  // A caller that refuses the outcome leaves the remembered files as they were.
  make_entry(fixture.root, "3");
  fixture.push(false);
  auto objecting = steps;
  objecting.finished = [](const cc::TransferReport& finished) {
    CHECK(finished.transferred.size() == 1);
    throw InvalidArgument("not that one");
  };
  CHECK_THROWS_AS(fixture.pull(false, objecting), InvalidArgument);
  CHECK(stdfs::exists(fixture.pulled / entry_path("3") / "model.done"));
  CHECK_FALSE(fixture.last_use(entry_path("3")));
}

TEST_CASE("pull_into: a pull that waited for another plans again, against what the other installed")
{
  Fixture fixture;
  make_entry(fixture.root, "1");
  make_entry(fixture.root, "2");
  fixture.push(false);
  // The other pull: it holds the lock, and installs entry 1 while this one waits.
  auto other = std::make_unique<cc::PullLock>(fixture.pulled, [](const cc::PullLockHolder&) {});
  std::promise<void> waiting;
  std::size_t asked = 0;
  cc::PullSteps steps;
  steps.confirm = [&](const cc::PullPlan&) { ++asked; };
  steps.waiting = [&](const cc::PullLockHolder& holder) {
    CHECK(holder.this_host);
    waiting.set_value();
  };
  auto pulling = std::async(std::launch::async, [&] { return fixture.pull(false, steps); });
  REQUIRE(waiting.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  make_entry(fixture.pulled, "1");
  other.reset();

  auto report = pulling.get();
  CHECK(asked == 1); // about the first plan: the second only shrank
  CHECK(report.transferred == std::vector<std::string>{entry_path("2")});
  CHECK(report.present == std::vector<std::string>{entry_path("1")});
  REQUIRE(report.entries.size() == 1);
  CHECK(report.entries[0].path == entry_path("2"));
}

TEST_SUITE_END();

} // namespace compilecache_local_transfer_test
