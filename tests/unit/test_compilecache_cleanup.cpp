#include <hubcache/compilecache/cleanup.hpp>
#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

using namespace hubcache;
namespace cc = hubcache::compilecache;
namespace stdfs = std::filesystem;

namespace compilecache_cleanup_test {

namespace {

const std::string k_new = "neuronxcc-2.21.33363.0+82129205";
const std::string k_mid = "neuronxcc-2.20.0.0+aaaaaaaa";
const std::string k_old = "neuronxcc-2.15.128.0+56dc5a86";
constexpr std::int64_t k_day = 86400;

using test_support::write;

std::string module_path(const std::string& version, const std::string& key)
{
  return version + "/MODULE_" + key + "+d41d8cd9";
}

// Sets every time below `path` (and its own) to `when`.
void set_age(const stdfs::path& path, std::int64_t when)
{
  struct timespec times[2] = {{static_cast<time_t>(when), 0}, {static_cast<time_t>(when), 0}};
  if (stdfs::is_directory(path)) {
    for (const auto& item : stdfs::recursive_directory_iterator(path)) {
      REQUIRE(::utimensat(AT_FDCWD, item.path().c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
    }
  }
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

struct Cache {
  test_support::TempDir root;
  std::int64_t now = cc::unix_now();

  stdfs::path success(const std::string& version, const std::string& key, std::size_t neff, std::int64_t days_ago)
  {
    auto dir = root / module_path(version, key);
    write(dir / "model.hlo_module.pb", "hlo");
    write(dir / "model.neff", std::string(neff, 'n'));
    write(dir / "model.done", "");
    set_age(dir, now - days_ago * k_day);
    return dir;
  }
  stdfs::path failed(const std::string& version, const std::string& key, std::int64_t days_ago)
  {
    auto dir = root / module_path(version, key);
    write(dir / "model.hlo_module.pb", "hlo");
    write(dir / "model.log", "Failed compilation");
    set_age(dir, now - days_ago * k_day);
    return dir;
  }
  stdfs::path incomplete(const std::string& version, const std::string& key, std::int64_t days_ago)
  {
    auto dir = root / module_path(version, key);
    write(dir / "model.hlo_module.pb", "hlo");
    set_age(dir, now - days_ago * k_day);
    return dir;
  }
  stdfs::path locked(const std::string& version, const std::string& key, std::int64_t days_ago)
  {
    auto dir = incomplete(version, key, days_ago);
    write(dir / "model.hlo_module.pb.lock", "");
    set_age(dir, now - days_ago * k_day);
    return dir;
  }
  cc::CleanupOptions options() const
  {
    cc::CleanupOptions options;
    options.now = now;
    options.use_atime = true;
    return options;
  }
};

std::map<std::string, std::string> reasons(const cc::CleanupPlan& plan)
{
  std::map<std::string, std::string> out;
  for (const auto& removal : plan.removals) {
    out[removal.path] = removal.reason;
  }
  return out;
}

} // namespace

TEST_SUITE_BEGIN("cleanup");

TEST_CASE("ages and sizes")
{
  CHECK(cc::parse_age("30d") == 30 * k_day);
  CHECK(cc::parse_age("12h") == 12 * 3600);
  CHECK(cc::parse_age("90m") == 90 * 60);
  CHECK(cc::parse_age("45s") == 45);
  CHECK(cc::parse_age("2w") == 14 * k_day);
  CHECK(cc::parse_age("0s") == 0);
  for (const auto* bad : {"", "30", "d", "-1d", "1.5d", "30 d", "30D", "30days", "99999999999999999999d", "40000w"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(cc::parse_age(bad), InvalidArgument);
  }
  CHECK(cc::parse_size("100G") == 100'000'000'000ull);
  CHECK(cc::parse_size("100GB") == 100'000'000'000ull);
  CHECK(cc::parse_size("100GiB") == 100ull << 30);
  CHECK(cc::parse_size("1.5T") == 1'500'000'000'000ull);
  CHECK(cc::parse_size("500M") == 500'000'000ull);
  CHECK(cc::parse_size("4096") == 4096);
  CHECK(cc::parse_size("0") == 0);
  CHECK(cc::parse_size("2Ki") == 2048);
  for (const auto* bad : {"", "G", "-1G", "1.5", "1..5G", "10X", "10 G", ".5G", "99999999999999999999", "20000P"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(cc::parse_size(bad), InvalidArgument);
  }
  CHECK(cc::format_age(30 * k_day) == "30d");
  CHECK(cc::format_age(14 * k_day) == "2w");
  CHECK(cc::format_age(12 * 3600) == "12h");
  CHECK(cc::format_age(5) == "5s");
}

TEST_CASE("the SDK's size and time-to-live come from NEURON_CC_FLAGS")
{
  auto policy = cc::sdk_eviction_policy(util::Environment::from_map({}));
  CHECK(policy.max_size == 100ull << 30);
  CHECK(policy.ttl == 30 * k_day);
  CHECK(policy.size_source == "default");
  policy = cc::sdk_eviction_policy(util::Environment::from_map(
    {{"NEURON_CC_FLAGS", "--model-type=transformer --cache_size=16777216 --cache_ttl 60"}}));
  CHECK(policy.max_size == 16777216);
  CHECK(policy.ttl == 60 * k_day);
  CHECK(policy.size_source == "NEURON_CC_FLAGS");
  CHECK(policy.ttl_source == "NEURON_CC_FLAGS");
  for (const auto* bad : {"--cache_size=16M", "--cache_ttl=-1", "--cache_ttl=1.5", "--cache_size='unterminated"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(cc::sdk_eviction_policy(util::Environment::from_map({{"NEURON_CC_FLAGS", bad}})), InvalidArgument);
  }
}

TEST_CASE("the installed compiler's version from neuronx-cc --version")
{
  CHECK(cc::parse_compiler_version_output("NeuronX Compiler version 2.21.33363.0+82129205\n\nPython version 3.10.12\n")
        == "2.21.33363.0+82129205");
  CHECK(cc::parse_compiler_version_output("Python version 3.10.12\nNeuronX Compiler version 2.14.213.0+013d129b\n")
        == "2.14.213.0+013d129b");
  CHECK(cc::parse_compiler_version_output("neuronx-cc 2.15.128.0\n") == "2.15.128.0");
  CHECK_FALSE(cc::parse_compiler_version_output("no version here\n").has_value());
  CHECK_FALSE(cc::parse_compiler_version_output("").has_value());
}

TEST_CASE("default cleanup: failed entries and stale locks, nothing else")
{
  Cache cache;
  cache.success(k_new, "1", 10, 400);
  auto failed = cache.failed(k_new, "2", 1);
  auto locked = cache.locked(k_new, "3", 5);
  cache.incomplete(k_new, "4", 400);
  auto scan = cc::scan(cache.root.path());
  auto plan = cc::plan_cleanup(scan, cc::UsageRecords(), cache.options());
  CHECK(reasons(plan)
        == std::map<std::string, std::string>{{module_path(k_new, "2"), "failed"},
                                              {module_path(k_new, "3") + "/model.hlo_module.pb.lock", "stale-lock"}});
  auto report = cc::apply_cleanup(scan, plan);
  CHECK(report.errors.empty());
  CHECK(report.removed.size() == 2);
  CHECK_FALSE(stdfs::exists(failed));
  CHECK_FALSE(stdfs::exists(locked / "model.hlo_module.pb.lock"));
  CHECK(stdfs::exists(locked / "model.hlo_module.pb")); // the entry stays
  // No trash left behind.
  for (const auto& item : stdfs::directory_iterator(cache.root / k_new)) {
    CHECK_FALSE(util::is_temp_name(item.path().filename().string()));
  }
}

TEST_CASE("a running compiler or a young lock holds its entry and its lock")
{
  Cache cache;
  cache.locked(k_new, "3", 0);
  cache.incomplete(k_new, "4", 400);
  auto scan = cc::scan(cache.root.path());
  auto options = cache.options();
  options.compiler_running = true;
  options.incomplete = true;
  options.older_than = 0;
  options.max_size = 0;
  options.ttl = 0;
  auto plan = cc::plan_cleanup(scan, cc::UsageRecords(), options);
  CHECK(plan.removals.empty());
  REQUIRE(plan.kept.size() == 2);
  CHECK(plan.kept[0].reason == cc::SkipReason::lock_held);
  CHECK(plan.kept[1].reason == cc::SkipReason::compiler_running);
  CHECK_THROWS_AS(cc::plan_cleanup(scan, cc::UsageRecords(),
                                   [&] {
                                     auto wipe = cache.options();
                                     wipe.wipe = true;
                                     wipe.compiler_running = true;
                                     return wipe;
                                   }()),
                  IoError);

  options = cache.options();
  options.stale_lock_age = 3600; // the lock is seconds old: another host's compiler may hold it
  plan = cc::plan_cleanup(scan, cc::UsageRecords(), options);
  CHECK(plan.removals.empty());
  CHECK(plan.kept.size() == 1);
}

TEST_CASE("--all, --old-versions, --older-than, --max-size with TTL select exactly")
{
  Cache cache;
  cache.success(k_new, "10", 1000, 100); // oldest use
  cache.success(k_new, "11", 1000, 50);
  cache.success(k_new, "12", 1000, 40);
  cache.success(k_new, "13", 1000, 1); // within the TTL
  cache.incomplete(k_new, "14", 2);
  cache.locked(k_new, "15", 400); // stale lock, entry never removed whole
  write(cache.root / k_new / "0_REGISTRY" / "0.4.6" / "x.json", "{}");
  set_age(cache.root / k_new / "0_REGISTRY", cache.now - 900 * k_day);
  cache.success(k_mid, "20", 500, 10);
  cache.success(k_old, "30", 500, 10);
  auto scan = cc::scan(cache.root.path());
  const auto lock15 = module_path(k_new, "15") + "/model.hlo_module.pb.lock";

  SUBCASE("--all")
  {
    auto options = cache.options();
    options.incomplete = true;
    CHECK(reasons(cc::plan_cleanup(scan, cc::UsageRecords(), options))
          == std::map<std::string, std::string>{{module_path(k_new, "14"), "incomplete"}, {lock15, "stale-lock"}});
  }
  SUBCASE("--old-versions keeps the matching versions")
  {
    auto options = cache.options();
    options.old_versions = true;
    options.keep_versions = {"2.21", "2.20.0.0+aaaaaaaa"};
    auto plan = cc::plan_cleanup(scan, cc::UsageRecords(), options);
    CHECK(reasons(plan) == std::map<std::string, std::string>{{k_old, "old-version"}, {lock15, "stale-lock"}});
    CHECK(plan.removals[1].entries == 1);
    options.keep_versions = {"2.15.128.0"};
    plan = cc::plan_cleanup(scan, cc::UsageRecords(), options);
    CHECK(
      reasons(plan)
      == std::map<std::string, std::string>{{k_new, "old-version"}, {k_mid, "old-version"}, {lock15, "stale-lock"}});
    // Without removing stale locks, a version with a lock is kept whole.
    options.stale_locks = false;
    plan = cc::plan_cleanup(scan, cc::UsageRecords(), options);
    CHECK(reasons(plan) == std::map<std::string, std::string>{{k_mid, "old-version"}});
    CHECK(plan.kept.at(0).path == k_new);
  }
  SUBCASE("--older-than")
  {
    auto options = cache.options();
    options.older_than = 45 * k_day;
    CHECK(reasons(cc::plan_cleanup(scan, cc::UsageRecords(), options))
          == std::map<std::string, std::string>{{module_path(k_new, "10"), "older-than"},
                                                {module_path(k_new, "11"), "older-than"},
                                                {lock15, "stale-lock"}});
    // A recorded use is newer than the files' times.
    cc::UsageRecords records;
    records.record(module_path(k_new, "10"), cache.now - k_day);
    CHECK(reasons(cc::plan_cleanup(scan, records, options))
          == std::map<std::string, std::string>{{module_path(k_new, "11"), "older-than"}, {lock15, "stale-lock"}});
  }
  SUBCASE("--max-size: least recently used first, never within the TTL")
  {
    auto options = cache.options();
    auto total = cc::plan_cleanup(scan, cc::UsageRecords(), options).size_before;
    options.max_size = total - 1500; // two entries of ~1006 bytes must go
    options.ttl = 30 * k_day;
    auto plan = cc::plan_cleanup(scan, cc::UsageRecords(), options);
    CHECK(reasons(plan)
          == std::map<std::string, std::string>{
            {module_path(k_new, "10"), "max-size"}, {module_path(k_new, "11"), "max-size"}, {lock15, "stale-lock"}});
    CHECK_FALSE(plan.above_max_size);
    options.max_size = 0;
    plan = cc::plan_cleanup(scan, cc::UsageRecords(), options);
    // Everything older than the TTL goes, oldest first; entries used within it, the locked
    // one and the registry stay.
    CHECK(reasons(plan).size() == 4);
    CHECK(plan.above_max_size);
    std::vector<std::string> order;
    for (const auto& removal : plan.removals) {
      if (removal.reason == "max-size") {
        order.push_back(removal.path);
      }
    }
    CHECK(order
          == std::vector<std::string>{module_path(k_new, "10"), module_path(k_new, "11"), module_path(k_new, "12")});
    options.ttl = 5 * k_day;
    plan = cc::plan_cleanup(scan, cc::UsageRecords(), options);
    order.clear();
    for (const auto& removal : plan.removals) {
      if (removal.reason == "max-size") {
        order.push_back(removal.path);
      }
    }
    CHECK(order
          == std::vector<std::string>{module_path(k_new, "10"), module_path(k_new, "11"), module_path(k_new, "12"),
                                      module_path(k_old, "30"), module_path(k_mid, "20")}); // same age: by path
  }
  SUBCASE("--wipe: everything but the root lock, and only in a root that is a compile cache alone")
  {
    write(cache.root / "lock", "");
    write(cache.root / "stray.txt", "x");
    auto options = cache.options();
    options.wipe = true;
    CHECK_THROWS_WITH_AS(cc::plan_cleanup(scan, cc::UsageRecords(), options),
                         doctest::Contains("it holds 'stray.txt', which is not part of a compile cache"), IoError);
    stdfs::remove(cache.root / "stray.txt");
    auto plan = cc::plan_cleanup(scan, cc::UsageRecords(), options);
    CHECK(
      reasons(plan)
      == std::map<std::string, std::string>{{k_new, "wipe"}, {k_mid, "wipe"}, {k_old, "wipe"}, {lock15, "stale-lock"}});
    auto report = cc::apply_cleanup(scan, plan);
    CHECK(report.errors.empty());
    std::vector<std::string> left;
    for (const auto& item : stdfs::directory_iterator(cache.root.path())) {
      left.push_back(item.path().filename().string());
    }
    CHECK(left == std::vector<std::string>{"lock"});
  }
}

TEST_CASE("--wipe refuses /, system directories, a home and what holds it, through links too")
{
  Cache cache;
  cache.success(k_new, "1", 10, 1);
  auto wipe = [&](const stdfs::path& root, std::optional<stdfs::path> home) {
    auto scan = cc::scan(cache.root.path());
    scan.root = root;
    auto options = cache.options();
    options.wipe = true;
    options.home = std::move(home);
    return cc::plan_cleanup(scan, cc::UsageRecords(), options);
  };
  CHECK_THROWS_WITH_AS(wipe("/", std::nullopt), doctest::Contains("refusing to wipe /: it is a system directory"),
                       IoError);
  test_support::TempDir links;
  stdfs::create_directory_symlink("/etc", links / "etc-link");
  CHECK_THROWS_WITH_AS(wipe(links / "etc-link", std::nullopt), doctest::Contains("it is /etc, a system directory"),
                       IoError);
  // A home (even one that holds only a compile cache's names), and every folder above it.
  auto home = cache.root / k_new;
  CHECK_THROWS_WITH_AS(wipe(cache.root / k_new, home), doctest::Contains("is or holds the home directory"), IoError);
  CHECK_THROWS_WITH_AS(wipe(cache.root.path(), home), doctest::Contains("is or holds the home directory"), IoError);
  stdfs::create_directory_symlink(cache.root.path(), links / "cache-link");
  CHECK_THROWS_WITH_AS(wipe(links / "cache-link", home), doctest::Contains("is or holds the home directory"), IoError);
  // The same cache with an unrelated home is a compile cache and nothing else.
  CHECK_NOTHROW(wipe(cache.root.path(), links.path()));
}

TEST_CASE("removal puts back an entry a compiler locked, and never follows symlinks")
{
  Cache cache;
  auto entry = cache.success(k_new, "1", 10, 1);
  write(entry / "model.hlo_module.pb.lock", "");
  CHECK(cc::remove_safely(entry, 1) == cc::RemoveOutcome::taken);
  CHECK(stdfs::exists(entry / "model.neff"));
  CHECK(cc::remove_safely(cache.root / "missing", 1) == cc::RemoveOutcome::vanished);

  test_support::TempDir outside;
  write(outside / "precious.neff", "keep me");
  auto linked = cache.success(k_new, "2", 10, 1);
  stdfs::remove(linked / "model.neff");
  stdfs::create_symlink(outside / "precious.neff", linked / "model.neff");
  stdfs::create_directory_symlink(outside.path(), cache.root / k_new / "MODULE_3+d41d8cd9");
  CHECK(cc::remove_safely(linked, 1) == cc::RemoveOutcome::removed);
  CHECK(cc::remove_safely(cache.root / k_new / "MODULE_3+d41d8cd9", 1) == cc::RemoveOutcome::removed);
  CHECK(util::read_file(outside / "precious.neff") == "keep me");
}

TEST_CASE("leftovers of dead processes are swept, live ones kept")
{
  Cache cache;
  cache.success(k_new, "1", 10, 1);
  auto dead_owner = test_support::temp_owner_of(999999999);
  auto dead = cache.root / k_new / (".MODULE_9+d41d8cd9.tmp.nc." + dead_owner + "abc");
  auto live = cache.root / k_new / (".MODULE_8+d41d8cd9.tmp.nc." + test_support::temp_owner_of(::getpid()) + "abc");
  auto elsewhere = cache.root / (".neuronxcc-1.tmp.nc.otherhost.12.abc");
  write(dead / "model.neff", "x");
  write(live / "model.neff", "x");
  write(elsewhere / "f", "x");
  auto scan = cc::scan(cache.root.path());
  auto plan = cc::plan_cleanup(scan, cc::UsageRecords(), cache.options());
  CHECK(
    reasons(plan)
    == std::map<std::string, std::string>{{k_new + "/.MODULE_9+d41d8cd9.tmp.nc." + dead_owner + "abc", "leftover"}});
}

TEST_SUITE_END();

} // namespace compilecache_cleanup_test
