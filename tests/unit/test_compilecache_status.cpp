#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/status.hpp>
#include <hubcache/util/fs.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

using namespace hubcache;
namespace cc = hubcache::compilecache;
namespace stdfs = std::filesystem;

namespace compilecache_status_test {

namespace {

const std::string k_new = "neuronxcc-2.21.33363.0+82129205";
const std::string k_old = "neuronxcc-2.15.128.0+56dc5a86";

using test_support::write;

stdfs::path module(const stdfs::path& root, const std::string& version, const std::string& key)
{
  return root / version / ("MODULE_" + key + "+d41d8cd9");
}

void success(const stdfs::path& dir, std::size_t neff_size)
{
  write(dir / "model.hlo_module.pb", "hlo");
  write(dir / "model.neff", std::string(neff_size, 'n'));
  write(dir / "model.done", "");
}

} // namespace

TEST_SUITE_BEGIN("status");

TEST_CASE("status counts every state per version, sizes, and stale locks")
{
  test_support::TempDir root;
  success(module(root.path(), k_new, "1"), 100);
  success(module(root.path(), k_new, "2"), 200);
  write(module(root.path(), k_new, "3") / "model.log", "Failed compilation");
  write(module(root.path(), k_new, "4") / "model.hlo_module.pb", "hlo");
  write(module(root.path(), k_new, "4") / "model.hlo_module.pb.lock", "");
  write(module(root.path(), k_new, "5") / "model.hlo_module.pb", "hlo");
  write(root / k_new / "MODULE_0123456789abcdef0123" / "model.neuron", std::string(50, 'x'));
  write(root / k_new / "0_REGISTRY" / "0.4.6" / "a.json", "{}");
  success(module(root.path(), k_old, "6"), 1000);
  write(module(root.path(), k_old, "6") / "model.neff.tmp.nc.h.1.x", "tmp"); // unlisted, still counted
  write(root / "lock", "");

  auto scan = cc::scan(root.path());
  auto status = cc::cache_status(scan, cc::UsageRecords(), {true, "relatime"}, false);
  CHECK(status.total.entries == 8);
  REQUIRE(status.versions.size() == 2);
  const auto& old_version = status.versions[0];
  const auto& new_version = status.versions[1];
  CHECK(old_version.name == k_old);
  CHECK(old_version.compiler_version == "2.15.128.0+56dc5a86");
  CHECK(old_version.total.entries == 1);
  CHECK(old_version.total.bytes == 3 + 1000 + 3);
  CHECK(old_version.files == 4);
  CHECK(new_version.by_state.at("success").entries == 2);
  CHECK(new_version.by_state.at("success").bytes == 3 + 100 + 3 + 200);
  CHECK(new_version.by_state.at("failed").entries == 1);
  CHECK(new_version.by_state.at("locked").entries == 1);
  CHECK(new_version.by_state.at("incomplete").entries == 1);
  CHECK(new_version.by_state.at("exported-model").entries == 1);
  CHECK(new_version.by_state.at("registry").entries == 1);
  CHECK(status.by_state.at("success").entries == 3);
  CHECK(status.total.bytes == old_version.total.bytes + new_version.total.bytes);
  // The registry has no last use of its own; every other entry has one.
  std::size_t sources = 0;
  for (const auto& [source, count] : new_version.last_use_sources) {
    sources += count;
  }
  CHECK(sources == 6);
  REQUIRE(new_version.oldest_use.has_value());
  CHECK(*new_version.oldest_use <= *new_version.newest_use);
  REQUIRE(status.stale_locks.size() == 1);
  CHECK(status.stale_locks[0].path == k_new + "/MODULE_4+d41d8cd9/model.hlo_module.pb.lock");
  CHECK(status.live_locks.empty());
  CHECK(status.skipped == 1); // the temp file; the root lock and the entries are not "other"

  auto running = cc::cache_status(scan, cc::UsageRecords(), {true, "relatime"}, true);
  CHECK(running.stale_locks.empty());
  CHECK(running.live_locks.size() == 1);
}

TEST_CASE("entries in the repo: every file with the same size")
{
  test_support::TempDir root;
  success(module(root.path(), k_new, "1"), 10);
  success(module(root.path(), k_new, "2"), 10);
  success(module(root.path(), k_new, "3"), 10);
  auto scan = cc::scan(root.path());
  auto base1 = k_new + "/MODULE_1+d41d8cd9/";
  auto base2 = k_new + "/MODULE_2+d41d8cd9/";
  std::vector<storage::RepoFile> remote = {
    {base1 + "model.hlo_module.pb", 3, "", ""}, {base1 + "model.neff", 10, "", ""}, {base1 + "model.done", 0, "", ""},
    {base2 + "model.hlo_module.pb", 3, "", ""}, {base2 + "model.neff", 11, "", ""}, {base2 + "model.done", 0, "", ""},
  };
  auto present = cc::entries_in_repo(scan, remote);
  CHECK(present == std::set<std::string>{k_new + "/MODULE_1+d41d8cd9"});
  auto status = cc::cache_status(scan, cc::UsageRecords(), {false, "noatime"}, false);
  cc::add_repo_presence(status, present, scan);
  CHECK(status.versions.at(0).entries_in_repo == 1);
}

TEST_SUITE_END();

} // namespace compilecache_status_test
