#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/usage.hpp>
#include <hubcache/util/fs.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>

using namespace hubcache;
namespace cc = hubcache::compilecache;
namespace stdfs = std::filesystem;

namespace compilecache_usage_test {

namespace {

const std::string k_entry = "neuronxcc-2.21.33363.0+82129205/MODULE_1+d41d8cd9";
const std::string k_other = "neuronxcc-2.21.33363.0+82129205/MODULE_2+d41d8cd9";

using test_support::write;

void set_times(const stdfs::path& path, std::int64_t atime, std::int64_t mtime)
{
  struct timespec times[2] = {{static_cast<time_t>(atime), 0}, {static_cast<time_t>(mtime), 0}};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

} // namespace

TEST_SUITE_BEGIN("usage");

TEST_CASE("records: the later time wins, save and reload, forget and retain")
{
  test_support::TempDir dir;
  auto file = dir / "state" / "usage.tsv";
  {
    cc::UsageRecords records(file);
    CHECK(records.size() == 0);
    records.record(k_entry, 1000);
    records.record(k_entry, 900);
    records.record(k_other, 2000);
    records.record("not/an/entry/path", 5);
    records.record("../escape", 5);
    CHECK(records.last_use(k_entry) == 1000);
    CHECK(records.size() == 2);
    CHECK(records.save());
  }
  cc::UsageRecords again(file);
  CHECK(again.last_use(k_entry) == 1000);
  CHECK(again.last_use(k_other) == 2000);
  CHECK(again.rejected() == 0);
  again.retain({k_other});
  CHECK_FALSE(again.last_use(k_entry).has_value());
  CHECK(again.save());
  CHECK_FALSE(cc::UsageRecords(file).last_use(k_entry).has_value());
}

TEST_CASE("records: save merges what another process wrote meanwhile")
{
  test_support::TempDir dir;
  auto file = dir / "usage.tsv";
  cc::UsageRecords first(file);
  cc::UsageRecords second(file);
  first.record(k_entry, 100);
  CHECK(first.save());
  second.record(k_other, 200);
  second.record(k_entry, 50);
  CHECK(second.save());
  cc::UsageRecords merged(file);
  CHECK(merged.last_use(k_entry) == 100);
  CHECK(merged.last_use(k_other) == 200);
}

TEST_CASE("records file is untrusted input")
{
  test_support::TempDir dir;
  auto file = dir / "usage.tsv";
  auto now = cc::unix_now();
  std::string text = "neuron-cache-usage 1\n";
  text += "100\t" + k_entry + "\n";
  text += std::to_string(now + 10 * 24 * 3600) + "\t" + k_other + "\n"; // far future: would protect forever
  text += "-5\t" + k_other + "\n";
  text += "12x\t" + k_other + "\n";
  text += "100\tneuronxcc-1/../../etc\n";
  text += "100\t/abs/path\n";
  text += "100\tneuronxcc-1/MODULE_1/deeper\n";
  text += "100\tneuronxcc-1/MODULE_\x01\n";
  text += "no tab at all\n";
  write(file, text);
  cc::UsageRecords records(file);
  CHECK(records.size() == 1);
  CHECK(records.last_use(k_entry) == 100);
  CHECK(records.rejected() == 8);

  write(file, "something else\n100\t" + k_entry + "\n");
  CHECK(cc::UsageRecords(file).size() == 0);

  // Never through a symlink, never a directory.
  write(dir / "real.tsv", "neuron-cache-usage 1\n100\t" + k_entry + "\n");
  stdfs::remove(file);
  stdfs::create_symlink(dir / "real.tsv", file);
  CHECK(cc::UsageRecords(file).size() == 0);
  stdfs::remove(file);
  stdfs::create_directories(file);
  CHECK(cc::UsageRecords(file).size() == 0);
  stdfs::remove(file);

  // Bounded size: a huge file is not read at all.
  {
    util::AtomicFile big(file);
    big.write("neuron-cache-usage 1\n100\t" + k_entry + "\n");
    std::string filler(1 << 20, '#');
    for (std::uint64_t written = 0; written <= cc::k_usage_file_limit; written += filler.size()) {
      big.write(filler);
    }
    big.commit();
  }
  CHECK(cc::UsageRecords(file).size() == 0);
}

TEST_CASE("records live under XDG_STATE_HOME, else ~/.local/state, one file per root")
{
  auto xdg = cc::UsageRecords::default_path(
    "/var/tmp/neuron-compile-cache", util::Environment::from_map({{"XDG_STATE_HOME", "/state"}, {"HOME", "/home/me"}}));
  CHECK(xdg.parent_path() == "/state/neuron-cache");
  CHECK(xdg.filename().string().starts_with("usage-"));
  auto home = cc::UsageRecords::default_path("/var/tmp/neuron-compile-cache",
                                             util::Environment::from_map({{"HOME", "/home/me"}}));
  CHECK(home.parent_path() == "/home/me/.local/state/neuron-cache");
  CHECK(home.filename() == xdg.filename());
  auto other = cc::UsageRecords::default_path("/other/cache", util::Environment::from_map({{"HOME", "/home/me"}}));
  CHECK(other.filename() != home.filename());
}

TEST_CASE("last use: the newest of record, access time (when the mount keeps it), modification time")
{
  test_support::TempDir root;
  auto entry_dir = root / k_entry;
  write(entry_dir / "compile_flags.json", "");
  write(entry_dir / "model.hlo_module.pb", "hlo");
  write(entry_dir / "model.neff", "neff");
  write(entry_dir / "model.done", "");
  for (const auto& name : {"compile_flags.json", "model.hlo_module.pb", "model.neff", "model.done"}) {
    set_times(entry_dir / name, 1'000'000, 1'000'000);
  }
  set_times(entry_dir, 1'000'000, 1'000'000);
  // Reading the flags file (as every scan does) is not a use.
  set_times(entry_dir / "compile_flags.json", 9'000'000, 1'000'000);
  set_times(entry_dir / "model.neff", 2'000'000, 1'000'000);

  auto scan = cc::scan(root.path());
  REQUIRE(scan.entries.size() == 1);
  const auto& entry = scan.entries.front();
  cc::UsageRecords none;
  auto use = cc::last_use(entry, none, true);
  CHECK(use.seconds == 2'000'000);
  CHECK(use.source == cc::UseSource::access_time);
  use = cc::last_use(entry, none, false);
  CHECK(use.seconds == 1'000'000);
  CHECK(use.source == cc::UseSource::modification_time);
  cc::UsageRecords records;
  records.record(k_entry, 3'000'000);
  use = cc::last_use(entry, records, true);
  CHECK(use.seconds == 3'000'000);
  CHECK(cc::to_string(use.source) == "record");

  // What only the access time shows is recorded; entries that are gone are forgotten.
  cc::UsageRecords seen;
  seen.record(k_other, 5);
  cc::record_scan(seen, scan, true);
  CHECK(seen.last_use(k_entry) == 2'000'000);
  CHECK_FALSE(seen.last_use(k_other).has_value());
}

TEST_CASE("iso times")
{
  CHECK(cc::iso_time(0) == "1970-01-01T00:00:00Z");
  CHECK(cc::iso_time(1'700'000'000) == "2023-11-14T22:13:20Z");
}

TEST_SUITE_END();

} // namespace compilecache_usage_test
