#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sys/stat.h>

using namespace hubcache;
using namespace hubcache::util;
namespace cc = hubcache::compilecache;
namespace stdfs = std::filesystem;

namespace compilecache_compile_cache_test {

namespace {

const std::string k_version = "neuronxcc-2.15.128.0+56dc5a86";
const std::string k_json_flags = R"(["--model-type=transformer", "--auto-cast=none", "--execute-repetition=1"])";

using test_support::write;

// A generation C entry, complete, named after its flags.
stdfs::path make_entry_c(const stdfs::path& root, const std::string& key, const std::string& flags = k_json_flags)
{
  auto dir = root / k_version / ("MODULE_" + key + "+" + cc::flags_suffix(flags));
  write(dir / "compile_flags.json", flags);
  write(dir / "model.hlo_module.pb", "hlo");
  write(dir / "model.neff", "neff bytes");
  write(dir / "model.done", "");
  return dir;
}

const cc::Entry* find_entry(const cc::Scan& scan, std::string_view suffix)
{
  for (const auto& entry : scan.entries) {
    if (entry.path.ends_with(suffix)) {
      return &entry;
    }
  }
  return nullptr;
}

const cc::Skipped* find_skip(const cc::Scan& scan, std::string_view path_part)
{
  for (const auto& item : scan.skipped) {
    if (item.path.find(path_part) != std::string::npos) {
      return &item;
    }
  }
  return nullptr;
}

std::vector<std::string> file_names(const cc::Entry& entry)
{
  std::vector<std::string> names;
  for (const auto& file : entry.files) {
    names.push_back(file.path.substr(entry.path.size() + 1));
  }
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

TEST_SUITE_BEGIN("compile_cache");

TEST_CASE("cache root: option > NEURON_CC_FLAGS > NEURON_COMPILE_CACHE_URL > default")
{
  auto env = Environment::from_map({{"NEURON_CC_FLAGS", "--model-type=transformer --cache_dir=/flags/cache -O1"},
                                    {"NEURON_COMPILE_CACHE_URL", "/env/cache"}});
  auto root = cc::resolve_cache_root(std::string("/option/cache"), env);
  CHECK(root.path == "/option/cache");
  CHECK(root.source == cc::RootSource::option);
  root = cc::resolve_cache_root(std::nullopt, env);
  CHECK(root.path == "/flags/cache");
  CHECK(root.source == cc::RootSource::cc_flags);

  env = Environment::from_map(
    {{"NEURON_CC_FLAGS", "--model-type=transformer"}, {"NEURON_COMPILE_CACHE_URL", "file:///env/cache"}});
  root = cc::resolve_cache_root(std::nullopt, env);
  CHECK(root.path == "/env/cache");
  CHECK(root.source == cc::RootSource::environment);

  root = cc::resolve_cache_root(std::nullopt, Environment::from_map({}));
  CHECK(root.path == "/var/tmp/neuron-compile-cache");
  CHECK(root.source == cc::RootSource::default_path);

  CHECK_THROWS_AS(
    cc::resolve_cache_root(std::nullopt, Environment::from_map({{"NEURON_COMPILE_CACHE_URL", "s3://bucket/p"}})),
    NotSupported);
  CHECK_THROWS_AS(cc::resolve_cache_root(std::string("s3://bucket"), Environment::from_map({})), NotSupported);
  CHECK_THROWS_AS(
    cc::resolve_cache_root(std::nullopt, Environment::from_map({{"NEURON_CC_FLAGS", "--cache_dir=s3://b/x"}})),
    NotSupported);
}

TEST_CASE("S3 compile caches are located like local ones, and refused where only a local cache works")
{
  auto located = cc::locate_cache(std::nullopt,
                                  Environment::from_map({{"NEURON_COMPILE_CACHE_URL", "s3://bucket/sagemaker/cache"}}));
  REQUIRE(located.store_url);
  CHECK(*located.store_url == "s3://bucket/sagemaker/cache");
  CHECK(located.source == cc::RootSource::environment);
  CHECK(located.display() == "s3://bucket/sagemaker/cache");
  CHECK_THROWS_AS(located.local(), NotSupported);

  // The same order as for local caches: the option first, then NEURON_CC_FLAGS.
  auto env = Environment::from_map(
    {{"NEURON_CC_FLAGS", "--cache_dir=s3://flags/x"}, {"NEURON_COMPILE_CACHE_URL", "s3://env/y"}});
  CHECK(*cc::locate_cache(std::nullopt, env).store_url == "s3://flags/x");
  CHECK(cc::locate_cache(std::nullopt, env).source == cc::RootSource::cc_flags);
  auto local = cc::locate_cache(std::string("/data/cache"), env);
  CHECK_FALSE(local.store_url);
  CHECK(local.local().path == "/data/cache");
  CHECK(local.display() == "/data/cache");
}

TEST_CASE("A Storage Bucket as the compile cache is a store to copy to and from, not a local directory")
{
  auto located = cc::locate_cache(std::string("hf://buckets/org/cache/team"), Environment::from_map({}));
  REQUIRE(located.store_url);
  CHECK(*located.store_url == "hf://buckets/org/cache/team");
  CHECK(located.display() == "hf://buckets/org/cache/team");
  CHECK_THROWS_WITH_AS(located.local(), doctest::Contains("is a Storage Bucket"), NotSupported);
}

TEST_CASE("NEURON_CC_FLAGS: both forms, quoting, last one wins")
{
  CHECK(cc::cache_dir_from_cc_flags("--cache_dir=/a") == "/a");
  CHECK(cc::cache_dir_from_cc_flags("--retry_failed_compilation --cache_dir /b -O1") == "/b");
  CHECK(cc::cache_dir_from_cc_flags("--cache_dir='/with space/c'") == "/with space/c");
  CHECK(cc::cache_dir_from_cc_flags("--cache_dir \"/q/d\" --x") == "/q/d");
  CHECK(cc::cache_dir_from_cc_flags("--cache_dir=/one --cache_dir=/two") == "/two");
  CHECK(cc::cache_dir_from_cc_flags("--cache_dir=/path.with.dots/x-y") == "/path.with.dots/x-y");
  CHECK_FALSE(cc::cache_dir_from_cc_flags("--model-type=transformer").has_value());
  CHECK_FALSE(cc::cache_dir_from_cc_flags("--cache_dir").has_value());
  CHECK_FALSE(cc::cache_dir_from_cc_flags("--cache_dirx=/a").has_value());
  CHECK_FALSE(cc::cache_dir_from_cc_flags("").has_value());
}

TEST_CASE("flags suffix matches the published examples")
{
  CHECK(cc::flags_suffix("") == "d41d8cd9");
  CHECK(cc::flags_suffix("--model-type=transformer --auto-cast=none") == "2c2d707e");
  CHECK(cc::flags_suffix(R"(["--model-type=transformer", "--auto-cast=none"])") == "d7cde3b5");
  CHECK(cc::flags_suffix(k_json_flags) == "39f12043");
}

TEST_CASE("module names")
{
  auto name = cc::parse_module_name("MODULE_16518787498567201059+d41d8cd9");
  REQUIRE(name);
  CHECK(name->key == "16518787498567201059");
  CHECK(name->flags_suffix == "d41d8cd9");
  name = cc::parse_module_name("MODULE_3803eb6e840f2711d601");
  REQUIRE(name);
  CHECK_FALSE(name->flags_suffix.has_value());
  CHECK_FALSE(cc::parse_module_name("MODULE_").has_value());
  CHECK_FALSE(cc::parse_module_name("MODULE_12+abc").has_value());
  CHECK_FALSE(cc::parse_module_name("MODULE_XYZ+d41d8cd9").has_value());
  CHECK_FALSE(cc::parse_module_name("module_12+d41d8cd9").has_value());
}

TEST_CASE("classification of every state and generation")
{
  using Files = std::vector<cc::EntryFileInfo>;
  auto a = cc::classify_module_files(Files{{"compile_flags.txt", 41}, {"model.hlo.pb", 3}, {"model.neff", 9}});
  CHECK(a.state == cc::EntryState::success);
  CHECK(a.generation == cc::Generation::a);
  auto b = cc::classify_module_files(Files{{"compile_flags.txt", 41}, {"model.hlo_module.pb", 3}, {"model.neff", 9}});
  CHECK(b.state == cc::EntryState::success);
  CHECK(b.generation == cc::Generation::b);
  auto c = cc::classify_module_files(
    Files{{"compile_flags.json", 48}, {"model.done", 0}, {"model.hlo_module.pb", 3}, {"model.neff", 9}});
  CHECK(c.state == cc::EntryState::success);
  CHECK(c.generation == cc::Generation::c);

  auto failed =
    cc::classify_module_files(Files{{"compile_flags.json", 48}, {"model.hlo_module.pb", 3}, {"model.log", 9}});
  CHECK(failed.state == cc::EntryState::failed);
  auto locked = cc::classify_module_files(
    Files{{"compile_flags.json", 48}, {"model.hlo_module.pb", 3}, {"model.hlo_module.pb.lock", 0}});
  CHECK(locked.state == cc::EntryState::locked);
  // A lock wins even over a complete entry: the compiler may still be writing it.
  locked = cc::classify_module_files(Files{{"compile_flags.json", 48},
                                           {"model.done", 0},
                                           {"model.hlo_module.pb", 3},
                                           {"model.neff", 9},
                                           {"model.hlo_module.pb.lock", 0}});
  CHECK(locked.state == cc::EntryState::locked);

  auto todo = cc::classify_module_files(Files{{"compile_flags.json", 48}, {"model.hlo_module.pb", 3}});
  CHECK(todo.state == cc::EntryState::incomplete);
  CHECK(todo.why.finding == cc::Finding::file_missing);
  CHECK(todo.why.subject == "model.neff");
  auto no_done =
    cc::classify_module_files(Files{{"compile_flags.json", 48}, {"model.hlo_module.pb", 3}, {"model.neff", 9}});
  CHECK(no_done.state == cc::EntryState::incomplete);
  CHECK(no_done.why.finding == cc::Finding::unfinished);
  auto empty_neff = cc::classify_module_files(
    Files{{"compile_flags.json", 48}, {"model.done", 0}, {"model.hlo_module.pb", 3}, {"model.neff", 0}});
  CHECK(empty_neff.state == cc::EntryState::incomplete);
  CHECK(empty_neff.why.finding == cc::Finding::neff_empty);
  auto no_hlo = cc::classify_module_files(Files{{"compile_flags.json", 48}, {"model.done", 0}, {"model.neff", 9}});
  CHECK(no_hlo.state == cc::EntryState::incomplete);
  CHECK(no_hlo.why.finding == cc::Finding::file_missing);
  CHECK(no_hlo.why.subject == "model.hlo_module.pb");
  auto no_hlo_a = cc::classify_module_files(Files{{"compile_flags.txt", 41}, {"model.neff", 9}});
  CHECK(no_hlo_a.state == cc::EntryState::incomplete);
  auto anonymous = cc::classify_module_files(Files{{"model.hlo_module.pb", 3}, {"model.neff", 9}});
  CHECK(anonymous.state == cc::EntryState::incomplete);
  // No flags file but a done marker: generation C compiled without flags.
  auto no_flags = cc::classify_module_files(Files{{"model.done", 0}, {"model.hlo_module.pb", 3}, {"model.neff", 9}});
  CHECK(no_flags.state == cc::EntryState::success);
  CHECK(no_flags.generation == cc::Generation::c);
}

TEST_CASE("flags suffix check")
{
  auto name = *cc::parse_module_name("MODULE_1+39f12043");
  CHECK_FALSE(cc::check_flags_suffix(name, k_json_flags));
  auto differs = cc::check_flags_suffix(name, k_json_flags + " ");
  CHECK(differs.finding == cc::Finding::suffix_differs);
  CHECK(differs.subject.size() == 8); // the flags file's md5 prefix
  CHECK(cc::check_flags_suffix(name, std::nullopt).finding == cc::Finding::suffix_needs_flags);
  auto empty = *cc::parse_module_name("MODULE_1+d41d8cd9");
  CHECK_FALSE(cc::check_flags_suffix(empty, std::nullopt));
  CHECK_FALSE(cc::check_flags_suffix(empty, std::string()));
  CHECK_FALSE(cc::check_flags_suffix(*cc::parse_module_name("MODULE_1"), std::string("x")));
}

TEST_CASE("scan classifies a tree and reports what it skips")
{
  test_support::TempDir root;
  make_entry_c(root.path(), "111");
  auto failed = root / k_version / "MODULE_222+d41d8cd9";
  write(failed / "model.log", "Failed compilation");
  write(failed / "model.hlo_module.pb", "hlo");
  auto locked = make_entry_c(root.path(), "333");
  write(locked / "model.hlo_module.pb.lock", "");
  auto truncated = make_entry_c(root.path(), "444");
  stdfs::remove(truncated / "model.done");
  auto mismatch = root / k_version / "MODULE_555+00000000";
  write(mismatch / "compile_flags.json", k_json_flags);
  write(mismatch / "model.hlo_module.pb", "hlo");
  write(mismatch / "model.neff", "neff");
  write(mismatch / "model.done", "");
  auto gen_a = root / "neuronxcc-2.12.54.0+f631c2365" / ("MODULE_666+" + cc::flags_suffix("--a --b"));
  write(gen_a / "compile_flags.txt", "--a --b");
  write(gen_a / "model.hlo.pb", "hlo");
  write(gen_a / "model.neff", "neff");
  write(root / k_version / "MODULE_0123456789abcdef0123" / "config.json", "{}");
  write(root / k_version / "MODULE_0123456789abcdef0123" / "sub" / "model.neuron", "traced");
  write(root / k_version / "0_REGISTRY" / "0.4.6" / "abc" / "e.json", "{}");
  write(root / "lock", "");
  write(root / k_version / "notes.txt", "?");
  write(root / "stray-dir" / "x", "?");
  write(make_entry_c(root.path(), "777") / "model.neff.tmp.nc.host.1.abc", "partial");

  auto scan = cc::scan(root.path());
  auto* ok = find_entry(scan, "MODULE_111+39f12043");
  REQUIRE(ok);
  CHECK(ok->state == cc::EntryState::success);
  CHECK(ok->generation == cc::Generation::c);
  CHECK(ok->compiler_version == "2.15.128.0+56dc5a86");
  CHECK(file_names(*ok)
        == std::vector<std::string>{"compile_flags.json", "model.done", "model.hlo_module.pb", "model.neff"});
  CHECK(find_entry(scan, "MODULE_222+d41d8cd9")->state == cc::EntryState::failed);
  CHECK(find_entry(scan, "MODULE_333+39f12043")->state == cc::EntryState::locked);
  CHECK(find_entry(scan, "MODULE_444+39f12043")->state == cc::EntryState::incomplete);
  CHECK(find_entry(scan, "MODULE_555+00000000")->state == cc::EntryState::flags_mismatch);
  CHECK(find_entry(scan, "MODULE_666+" + cc::flags_suffix("--a --b"))->generation == cc::Generation::a);
  auto* traced = find_entry(scan, "MODULE_0123456789abcdef0123");
  REQUIRE(traced);
  CHECK(traced->kind == cc::EntryKind::exported_model);
  CHECK(file_names(*traced) == std::vector<std::string>{"config.json", "sub/model.neuron"});
  auto* registry = find_entry(scan, "0_REGISTRY");
  REQUIRE(registry);
  CHECK(registry->kind == cc::EntryKind::registry);
  // Temp files are left out of an otherwise complete entry.
  auto* with_temp = find_entry(scan, "MODULE_777+39f12043");
  CHECK(with_temp->state == cc::EntryState::success);
  CHECK(file_names(*with_temp).size() == 4);
  CHECK(find_skip(scan, "MODULE_777")->reason == cc::SkipReason::temp_file);

  CHECK(find_skip(scan, "MODULE_222")->reason == cc::SkipReason::failed);
  CHECK(find_skip(scan, "MODULE_333")->reason == cc::SkipReason::locked);
  CHECK(find_skip(scan, "MODULE_444")->reason == cc::SkipReason::incomplete);
  CHECK(find_skip(scan, "MODULE_555")->reason == cc::SkipReason::flags_mismatch);
  REQUIRE(find_skip(scan, "lock"));
  CHECK(scan.skipped.front().path == "lock");
  CHECK(scan.skipped.front().reason == cc::SkipReason::lock_file);
  CHECK(find_skip(scan, "notes.txt")->reason == cc::SkipReason::unrecognized);
  CHECK(find_skip(scan, "stray-dir")->reason == cc::SkipReason::unrecognized);
}

TEST_CASE("symlinks: followed inside the root, rejected when they leave it")
{
  test_support::TempDir root;
  test_support::TempDir outside;
  write(outside / "model.neff", "outside neff");
  auto entry = make_entry_c(root.path(), "1");
  stdfs::remove(entry / "model.neff");
  stdfs::create_symlink(outside / "model.neff", entry / "model.neff");
  auto inside = make_entry_c(root.path(), "2");
  write(root / k_version / "0_REGISTRY" / "0.4.6" / "digest" / "h.json", "{\"a\":1}");
  stdfs::create_directories(root / k_version / "0_REGISTRY" / "0.4.6" / "llama" / "org" / "model");
  stdfs::create_symlink(root / k_version / "0_REGISTRY" / "0.4.6" / "digest" / "h.json",
                        root / k_version / "0_REGISTRY" / "0.4.6" / "llama" / "org" / "model" / "h.json");
  stdfs::create_symlink(outside / "model.neff", root / k_version / "0_REGISTRY" / "escape.json");
  stdfs::create_symlink(root / "missing", root / k_version / "0_REGISTRY" / "dangling.json");
  stdfs::create_directory_symlink(outside.path(), root / k_version / "MODULE_3+d41d8cd9");
  stdfs::create_directory_symlink(inside, root / k_version / "MODULE_4+39f12043");
  stdfs::create_directory_symlink(root.path(), root / k_version / "0_REGISTRY" / "loop");

  auto scan = cc::scan(root.path());
  auto* escaped = find_entry(scan, "MODULE_1+39f12043");
  REQUIRE(escaped);
  CHECK(escaped->state == cc::EntryState::unsafe);
  CHECK(find_skip(scan, "MODULE_1+")->reason == cc::SkipReason::symlink_outside_root);
  CHECK(find_skip(scan, "MODULE_3+")->reason == cc::SkipReason::symlink_outside_root);
  CHECK(find_skip(scan, "escape.json")->reason == cc::SkipReason::symlink_outside_root);
  CHECK(find_skip(scan, "dangling.json")->reason == cc::SkipReason::dangling_symlink);
  auto* registry = find_entry(scan, "0_REGISTRY");
  REQUIRE(registry);
  auto names = file_names(*registry);
  CHECK(std::find(names.begin(), names.end(), "0.4.6/llama/org/model/h.json") != names.end());
  for (const auto& file : registry->files) {
    CHECK(scan.source_of(file).find(outside.path().string()) == std::string::npos);
  }
  // MODULE_2 is reached once, under its own name; the link to it is a second name for it.
  CHECK(find_entry(scan, "MODULE_2+39f12043")->state == cc::EntryState::success);
}

TEST_CASE("symlinks: a regular file in a followed directory (the HF cache) is read, nothing else leaving the root")
{
  test_support::TempDir root;
  test_support::TempDir hf_hub;
  test_support::TempDir outside;
  write(hf_hub / "blobs" / "neff", "hub neff");
  write(outside / "secret", "secret");
  stdfs::create_symlink(outside / "secret", hf_hub / "blobs" / "escape");
  stdfs::create_directories(hf_hub / "dir");
  auto entry = make_entry_c(root.path(), "1");
  stdfs::remove(entry / "model.neff");
  stdfs::create_symlink(hf_hub / "blobs" / "neff", entry / "model.neff");
  auto other = make_entry_c(root.path(), "2");
  stdfs::remove(other / "model.neff");
  stdfs::create_symlink(hf_hub / "blobs" / "escape", other / "model.neff"); // through the HF cache, out of it
  stdfs::create_directory_symlink(hf_hub / "dir", root / k_version / "MODULE_3+d41d8cd9");

  // Not followed unless asked: status and cleanup see links as links.
  CHECK(find_entry(cc::scan(root.path()), "MODULE_1+39f12043")->state == cc::EntryState::unsafe);

  auto scan = cc::scan(root.path(), {hf_hub.path()});
  auto* followed = find_entry(scan, "MODULE_1+39f12043");
  REQUIRE(followed);
  CHECK(followed->state == cc::EntryState::success);
  bool read_from_hub = false;
  for (const auto& file : followed->files) {
    read_from_hub = read_from_hub || scan.source_of(file).find(hf_hub.path().string()) == 0;
  }
  CHECK(read_from_hub);
  CHECK(find_entry(scan, "MODULE_2+39f12043")->state == cc::EntryState::unsafe);
  CHECK(find_skip(scan, "MODULE_3+")->reason == cc::SkipReason::symlink_outside_root);
}
TEST_CASE("a file's source: <root>/<path> unless a symlink inside the root leads elsewhere")
{
  test_support::TempDir root;
  auto plain = make_entry_c(root.path(), "1");
  auto linked = make_entry_c(root.path(), "2");
  write(root / "elsewhere" / "neff", "neff bytes");
  stdfs::remove(linked / "model.neff");
  stdfs::create_symlink(root / "elsewhere" / "neff", linked / "model.neff");
  auto scan = cc::scan(root.path());
  for (const auto* entry :
       {find_entry(scan, plain.filename().string()), find_entry(scan, linked.filename().string())}) {
    REQUIRE(entry);
    REQUIRE(entry->state == cc::EntryState::success);
    for (const auto& file : entry->files) {
      CAPTURE(file.path);
      bool link = entry == find_entry(scan, linked.filename().string()) && file.path.ends_with("model.neff");
      auto expected = link ? stdfs::canonical(root / "elsewhere" / "neff").string() : (root / file.path).string();
      CHECK(scan.source_of(file) == expected);
      CHECK(util::read_file(scan.source_of(file)) == util::read_file(root / file.path));
    }
  }
}

TEST_CASE("a scan over many entries (several threads) gives the one-thread result, in order")
{
  test_support::TempDir root;
  for (int i = 0; i < 700; ++i) {
    make_entry_c(root.path(), std::to_string(1000 + i));
  }
  stdfs::remove(root / k_version / ("MODULE_1500+" + cc::flags_suffix(k_json_flags)) / "model.done");
  auto scan = cc::scan(root.path());
  REQUIRE(scan.entries.size() == 700);
  CHECK(std::is_sorted(scan.entries.begin(), scan.entries.end(),
                       [](const cc::Entry& a, const cc::Entry& b) { return a.path < b.path; }));
  std::size_t good = 0;
  for (const auto& entry : scan.entries) {
    good += entry.state == cc::EntryState::success && entry.files.size() == 4 ? 1 : 0;
  }
  CHECK(good == 699);
  REQUIRE(scan.skipped.size() == 1);
  CHECK(scan.skipped[0].path.find("MODULE_1500+") != std::string::npos);
}

TEST_CASE("the flags memo: a flags file found good is not read again while its stamp holds")
{
  test_support::TempDir root;
  test_support::TempDir state;
  auto good = make_entry_c(root.path(), "1");
  auto bad = make_entry_c(root.path(), "2");
  write(bad / "compile_flags.json", "[\"--other\"]"); // no longer the name's suffix
  auto memo_file = state / "flags.bin";
  {
    cc::FlagsMemo memo(memo_file);
    auto scan = cc::scan(root.path(), {}, &memo);
    CHECK(find_entry(scan, good.filename().string())->state == cc::EntryState::success);
    CHECK(find_entry(scan, bad.filename().string())->state == cc::EntryState::flags_mismatch);
    memo.save();
  }
  // Only the good one is remembered: one fingerprint after the header.
  auto saved = util::read_file(memo_file);
  REQUIRE(saved.starts_with("neuron-cache-flags 1\n"));
  CHECK(saved.size() == std::string("neuron-cache-flags 1\n").size() + sizeof(std::uint64_t));
  {
    cc::FlagsMemo memo(memo_file);
    auto scan = cc::scan(root.path(), {}, &memo);
    CHECK(find_entry(scan, good.filename().string())->state == cc::EntryState::success);
    CHECK(find_entry(scan, bad.filename().string())->state == cc::EntryState::flags_mismatch);
    memo.save();
    CHECK(util::read_file(memo_file) == saved); // unchanged: not rewritten
  }
  // What the memo recalls is not read: a memo that (wrongly) holds the bad file's stamp
  // makes the scan trust it. This is why the stamp includes the ctime and the inode.
  struct stat status {};
  auto bad_flags = bad / "compile_flags.json";
  REQUIRE(::stat(bad_flags.c_str(), &status) == 0);
  auto rel = k_version + "/" + bad.filename().string() + "/compile_flags.json";
  auto fingerprint = util::stamp_fingerprint(
    rel, static_cast<std::uint64_t>(status.st_size), status.st_mtim.tv_sec * 1'000'000'000LL + status.st_mtim.tv_nsec,
    status.st_ctim.tv_sec * 1'000'000'000LL + status.st_ctim.tv_nsec, status.st_ino);
  {
    cc::FlagsMemo memo(state / "planted.bin");
    memo.remember(fingerprint);
    memo.save();
    cc::FlagsMemo planted(state / "planted.bin");
    auto scan = cc::scan(root.path(), {}, &planted);
    CHECK(find_entry(scan, bad.filename().string())->state == cc::EntryState::success);
  }
  // The flags file rewritten in place: another stamp, read and checked again.
  write(good / "compile_flags.json", "[\"--changed\"]");
  {
    cc::FlagsMemo memo(memo_file);
    auto scan = cc::scan(root.path(), {}, &memo);
    CHECK(find_entry(scan, good.filename().string())->state == cc::EntryState::flags_mismatch);
  }
  // A memo of nothing (a cache whose every flags file changed) is written and read back.
  {
    cc::FlagsMemo memo(state / "planted.bin");
    memo.save(); // recalled nothing this run: keeps nothing
    REQUIRE(util::read_file(state / "planted.bin") == "neuron-cache-flags 1\n");
    cc::FlagsMemo empty(state / "planted.bin");
    CHECK_FALSE(empty.recall(fingerprint));
  }
  // A corrupt or foreign memo remembers nothing.
  for (std::string content : {std::string("garbage"), std::string("neuron-cache-flags 1\n") + "123",
                              std::string("neuron-cache-flags 1\n") + std::string(16, '\xff') + std::string(8, '\0')}) {
    util::write_file_atomically(state / "corrupt.bin", content);
    cc::FlagsMemo corrupt(state / "corrupt.bin");
    CHECK_FALSE(corrupt.recall(fingerprint));
  }
}

TEST_CASE("scan errors on a missing or non-directory root, and survives odd names")
{
  test_support::TempDir dir;
  CHECK_THROWS_AS(cc::scan(dir / "missing"), IoError);
  write(dir / "file", "x");
  CHECK_THROWS_AS(cc::scan(dir / "file"), IoError);
  CHECK_THROWS_AS(cc::scan(dir / "file" / "below"), IoError);

  auto root = dir / "root";
  make_entry_c(root, "1");
  write(root / k_version / "MODULE_1+39f12043" / "bad\nname", "x");
  write(root / k_version / std::string("MODULE_\xff\xfe"), "x");
  write(root / std::string("neuronxcc-\x01"), "x");
  auto scan = cc::scan(root);
  CHECK(find_entry(scan, "MODULE_1+39f12043")->state == cc::EntryState::success);
  CHECK(find_skip(scan, "MODULE_??")->reason == cc::SkipReason::invalid_name);
  CHECK(find_skip(scan, "neuronxcc-?")->reason == cc::SkipReason::invalid_name);
  CHECK(cc::printable("a\xff"
                      "b\n")
        == "a?b?");
  CHECK(cc::printable("ünïcode") == "ünïcode");
}

TEST_CASE("temp and lock names")
{
  CHECK(cc::is_temp_file_name("model.neff.tmp.nc.host.1.x"));
  CHECK(cc::is_temp_file_name("model.neff.tmp"));
  CHECK(cc::is_temp_file_name("x.incomplete"));
  CHECK_FALSE(cc::is_temp_file_name("model.neff"));
  CHECK(cc::is_lock_name("lock"));
  CHECK(cc::is_lock_name("model.hlo_module.pb.lock"));
  CHECK_FALSE(cc::is_lock_name("locks.json"));
}

TEST_CASE("compiler detection reads procfs")
{
  test_support::TempDir proc;
  write(proc / "12" / "comm", "bash\n");
  write(proc / "12" / "cmdline", std::string("bash\0-c\0x", 9));
  CHECK_FALSE(cc::compiler_running(proc.path()));
  // A process that exits meanwhile makes its files unreadable: it is skipped, not an error.
  std::filesystem::create_directories(proc / "14" / "comm");
  CHECK_NOTHROW(CHECK_FALSE(cc::compiler_running(proc.path())));
  write(proc / "13" / "comm", "python3\n");
  write(proc / "13" / "cmdline", std::string("/opt/bin/neuronx-cc\0compile", 27));
  CHECK(cc::compiler_running(proc.path()));
}

TEST_SUITE_END();

TEST_CASE("NEURON_CC_FLAGS: one splitter for every reader, an unterminated quote is an error everywhere")
{
  CHECK(cc::split_cc_flags("--cache_dir '/a b' -O1") == std::vector<std::string>{"--cache_dir", "/a b", "-O1"});
  CHECK(cc::cache_dir_from_cc_flags("--cache_dir \"/a b\"") == "/a b");
  // The compiler (shlex) refuses these flags; so must the cache-root lookup, instead of
  // silently reading a cache directory the compiler never uses.
  CHECK_THROWS_WITH_AS(cc::cache_dir_from_cc_flags("--cache_dir='/tmp/x -O1"),
                       doctest::Contains("NEURON_CC_FLAGS cannot be read"), InvalidArgument);
  CHECK_THROWS_AS(cc::split_cc_flags("-O1 \"--model-type=transformer"), InvalidArgument);
  auto env = Environment::from_map({{"NEURON_CC_FLAGS", "--cache_dir='/tmp/x"}});
  CHECK_THROWS_AS(cc::resolve_cache_root(std::nullopt, env), InvalidArgument);
}

} // namespace compilecache_compile_cache_test
