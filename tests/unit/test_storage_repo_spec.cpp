#include <hubcache/error.hpp>
#include <hubcache/hub/config.hpp>
#include <hubcache/storage/factory.hpp>
#include <hubcache/storage/repo_choice.hpp>
#include <hubcache/storage/repo_spec.hpp>
#include <hubcache/storage/repository.hpp>
#include <hubcache/storage/s3_repository.hpp>
#include <hubcache/util/fs.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace hubcache;
using namespace hubcache::util;
using namespace hubcache::storage;

TEST_SUITE_BEGIN("hubcache::repo_spec");

TEST_CASE("Hub ids and directories are told apart")
{
  auto hub = parse_repo_spec("aws-neuron/optimum-neuron-cache");
  CHECK(hub.kind == RepoKind::hub);
  CHECK(hub.hub_id == "aws-neuron/optimum-neuron-cache");
  CHECK(hub.canonical() == "aws-neuron/optimum-neuron-cache");

  CHECK(parse_repo_spec("hf://org/name").hub_id == "org/name");
  // As copied from a browser or completed by a shell.
  CHECK(parse_repo_spec("org/name/").hub_id == "org/name");
  CHECK(parse_repo_spec("https://huggingface.co/aws-neuron/optimum-neuron-cache").hub_id
        == "aws-neuron/optimum-neuron-cache");
  CHECK(parse_repo_spec("https://huggingface.co/org/name/").hub_id == "org/name");
  CHECK(parse_repo_spec("https://hf.co/org/name/tree/main").hub_id == "org/name");
  CHECK_THROWS_WITH_AS(parse_repo_spec("https://huggingface.co/datasets/org/name"),
                       doctest::Contains("is a dataset repo; a cache repo is a model repo"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_repo_spec("https://huggingface.co/org/name/tree/dev"),
                       doctest::Contains("names a page inside a repo"), InvalidArgument);
  CHECK_THROWS_AS(parse_repo_spec("https://example.com/org/name"), InvalidArgument);
  CHECK_THROWS_AS(parse_repo_spec("org/name//"), InvalidArgument);
  CHECK(parse_repo_spec("optimum-neuron-cache").hub_id == "optimum-neuron-cache");
  CHECK(!parse_repo_spec("optimum-neuron-cache").has_namespace());

  auto dir = parse_repo_spec("/data/cache/");
  CHECK(dir.kind == RepoKind::directory);
  CHECK(dir.directory == "/data/cache");
  CHECK(dir.canonical() == "file:///data/cache");
  CHECK(parse_repo_spec("file:///data/./x/../cache").directory == "/data/cache");
}

// Found by fuzz_config_file: "///" was stored as file://// which read back as file:///.
TEST_CASE("--max-workers reaches an S3 repo's transfers, its default otherwise")
{
  auto env = Environment::from_map({{"AWS_REGION", "eu-west-1"}});
  aws::Overrides anonymous;
  anonymous.no_sign_request = true;
  auto spec = parse_repo_spec("s3://nc-bucket/cache");
  REQUIRE(spec.kind == RepoKind::s3);
  BackendOptions options;
  options.aws = anonymous;
  auto with_default = open_repository(spec, env, options);
  REQUIRE(dynamic_cast<S3Repository*>(with_default.get()) != nullptr);
  CHECK(dynamic_cast<S3Repository&>(*with_default).workers() == aws::S3Config{}.workers);
  options.max_workers = 1;
  CHECK(dynamic_cast<S3Repository&>(*open_repository(spec, env, options)).workers() == 1);
  options.max_workers = 12;
  CHECK(dynamic_cast<S3Repository&>(*open_repository(spec, env, options)).workers() == 12);
}

TEST_CASE("directory specs with several leading slashes have a canonical form that reads back")
{
  CHECK(parse_repo_spec("///").canonical() == "file:///");
  CHECK(parse_repo_spec("file:////").canonical() == "file:///");
  CHECK(parse_repo_spec("//data//cache/").directory == "/data/cache");
  auto spec = parse_repo_spec("file:////data/x");
  CHECK(parse_repo_spec(spec.canonical()).canonical() == spec.canonical());
}

TEST_CASE("bad specs are rejected with a hint")
{
  for (const char* bad : {"a/b/c", "../x", "", "has space/x", "org/na\tme", "org/\x01x", "./x", "x/", "-org/x",
                          "org--x/y", "org/x.git", "http://example.com/x", "file://host/x", "file://relative"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_repo_spec(bad), InvalidArgument);
    try {
      parse_repo_spec(bad);
    } catch (const Error& error) {
      CHECK(!error.hint().empty());
      CHECK(std::string(error.what()).find('\n') == std::string::npos);
    }
  }
  auto s3 = parse_repo_spec("s3://my-bucket/team/cache/");
  CHECK(s3.kind == RepoKind::s3);
  CHECK(s3.canonical() == "s3://my-bucket/team/cache");
  for (const char* bad : {"s3://", "s3://Bad_Bucket/x", "s3://ab/x", "s3://bucket/a/../b", "s3://bucket//x"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_repo_spec(bad), InvalidArgument);
  }
}

TEST_CASE("HF_HOME defaults as huggingface_hub computes it")
{
  CHECK(hub::hf_home(Environment::from_map({{"HF_HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}})) == "/h");
  CHECK(hub::hf_home(Environment::from_map({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/home/u"}})) == "/x/huggingface");
  CHECK(hub::hf_home(Environment::from_map({{"HOME", "/home/u"}})) == "/home/u/.cache/huggingface");
  CHECK(hub::hf_home(Environment::from_map({{"HF_HOME", "~/hf"}, {"HOME", "/home/u"}})) == "/home/u/hf");
  // The Hub cache, as huggingface_hub resolves it.
  CHECK(hub::hf_hub_cache(Environment::from_map({{"HF_HOME", "/h"}})) == "/h/hub");
  CHECK(hub::hf_hub_cache(Environment::from_map({{"HF_HOME", "/h"}, {"HUGGINGFACE_HUB_CACHE", "/old"}})) == "/old");
  CHECK(hub::hf_hub_cache(Environment::from_map(
          {{"HF_HOME", "/h"}, {"HUGGINGFACE_HUB_CACHE", "/old"}, {"HF_HUB_CACHE", "~/hc"}, {"HOME", "/home/u"}}))
        == "/home/u/hc");
  CHECK(hub::hf_hub_cache(Environment::from_map({{"HF_HOME", "/h"}, {"HF_HUB_CACHE", ""}})) == "/h/hub");
  CHECK(custom_cache_config_path(Environment::from_map({{"HF_HOME", "/h"}})) == "/h/optimum_neuron_custom_cache");
}

TEST_CASE("resolution precedence: option > env > file > default")
{
  test_support::TempDir home;
  auto config = home / "optimum_neuron_custom_cache";
  util::write_file_atomically(config, "from/file");
  std::map<std::string, std::string> vars = {{"HF_HOME", home.path().string()},
                                             {"CUSTOM_CACHE_REPO", "from/env"},
                                             {"XDG_CONFIG_HOME", (home / "config").string()}};

  auto resolved = resolve_repo(std::string("from/option"), Environment::from_map(vars));
  CHECK(resolved.spec.hub_id == "from/option");
  CHECK(resolved.source == RepoSource::option);

  resolved = resolve_repo(std::nullopt, Environment::from_map(vars));
  CHECK(resolved.spec.hub_id == "from/env");
  CHECK(resolved.source == RepoSource::environment);

  vars.erase("CUSTOM_CACHE_REPO");
  resolved = resolve_repo(std::nullopt, Environment::from_map(vars));
  CHECK(resolved.spec.hub_id == "from/file");
  CHECK(resolved.source == RepoSource::config_file);
  CHECK(resolved.origin == config.string());

  // neuron-cache's own file (directories, S3) comes before optimum's.
  auto own = own_config_path(Environment::from_map(vars));
  CHECK(own == home / "config" / "neuron-cache" / "repo");
  auto written = record_repo_choice(parse_repo_spec("/data/repo"), "file:///data/repo", Environment::from_map(vars));
  CHECK(written == own);
  CHECK(util::read_file(config) == "from/file"); // optimum's file untouched
  resolved = resolve_repo(std::nullopt, Environment::from_map(vars));
  CHECK(resolved.spec.canonical() == "file:///data/repo");
  CHECK(resolved.source == RepoSource::own_config_file);
  CHECK(resolved.origin == own.string());
  // A Hub id goes to optimum's file, byte for byte, and clears the own choice.
  CHECK(record_repo_choice(parse_repo_spec("org/hub"), "org/hub", Environment::from_map(vars)) == config);
  CHECK(util::read_file(config) == "org/hub");
  CHECK(!std::filesystem::exists(own));

  std::filesystem::remove(config);
  resolved = resolve_repo(std::nullopt, Environment::from_map(vars));
  CHECK(resolved.spec.hub_id == "aws-neuron/optimum-neuron-cache");
  CHECK(resolved.source == RepoSource::default_value);

  // An empty CUSTOM_CACHE_REPO counts as unset, as in optimum.
  vars["CUSTOM_CACHE_REPO"] = "";
  CHECK(resolve_repo(std::nullopt, Environment::from_map(vars)).source == RepoSource::default_value);
}

TEST_CASE("higher levels shadow a broken config file")
{
  test_support::TempDir home;
  util::write_file_atomically(home / "optimum_neuron_custom_cache", "  \n");
  std::map<std::string, std::string> vars = {{"HF_HOME", home.path().string()},
                                             {"XDG_CONFIG_HOME", (home / "config").string()}};
  CHECK_THROWS_AS(resolve_repo(std::nullopt, Environment::from_map(vars)), ConfigError);
  CHECK(resolve_repo(std::string("a/b"), Environment::from_map(vars)).spec.hub_id == "a/b");
  vars["CUSTOM_CACHE_REPO"] = "c/d";
  CHECK(resolve_repo(std::nullopt, Environment::from_map(vars)).spec.hub_id == "c/d");
}

TEST_CASE("config file format is byte-exact: bare name, no newline; readers trim")
{
  test_support::TempDir home;
  auto config = home / "sub" / "optimum_neuron_custom_cache";
  write_custom_cache_repo(config, "my-org/optimum-neuron-cache");
  CHECK(util::read_file(config) == "my-org/optimum-neuron-cache");

  util::write_file_atomically(config, "  my-org/other\n\n");
  CHECK(read_custom_cache_repo(config) == std::optional<std::string>("my-org/other"));
  CHECK(!read_custom_cache_repo(home / "missing").has_value());
}

TEST_CASE("an unreadable or unwritable config is a clear error and nothing changes")
{
  if (::geteuid() == 0) {
    // root bypasses permission bits; the end-to-end suite covers this as a normal user.
    return;
  }
  test_support::TempDir home;
  auto config = home / "optimum_neuron_custom_cache";
  write_custom_cache_repo(config, "a/b");
  ::chmod(config.c_str(), 0);
  CHECK_THROWS_AS(read_custom_cache_repo(config), ConfigError);
  ::chmod(config.c_str(), 0644);
  ::chmod(home.path().c_str(), 0555);
  CHECK_THROWS_AS(write_custom_cache_repo(config, "c/d"), IoError);
  ::chmod(home.path().c_str(), 0755);
  CHECK(util::read_file(config) == "a/b");
}

TEST_SUITE_END();

TEST_CASE("failures that also hit root: config path under a file, config that is a directory")
{
  test_support::TempDir home;
  util::write_file_atomically(home / "plain-file", "x");
  auto impossible = home / "plain-file" / "hf" / "optimum_neuron_custom_cache";
  CHECK_THROWS_AS(write_custom_cache_repo(impossible, "a/b"), IoError);
  CHECK_THROWS_AS(ensure_config_writable(impossible), IoError);
  CHECK(util::read_file(home / "plain-file") == "x");

  std::filesystem::create_directories(home / "optimum_neuron_custom_cache");
  CHECK_THROWS_AS(read_custom_cache_repo(home / "optimum_neuron_custom_cache"), ConfigError);
}

TEST_CASE("a config file that is a FIFO, a device or huge is one clear error, never a hang")
{
  test_support::TempDir dir;
  REQUIRE(::mkfifo((dir.path() / "fifo").c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(read_custom_cache_repo(dir.path() / "fifo"), doctest::Contains("not a regular file"),
                       ConfigError);
  CHECK_THROWS_AS(read_custom_cache_repo("/dev/zero"), ConfigError);
  util::write_file_atomically(dir.path() / "huge", std::string(100 * 1024, 'a'));
  CHECK_THROWS_WITH_AS(read_custom_cache_repo(dir.path() / "huge"), doctest::Contains("larger than"), ConfigError);
}

TEST_CASE("repo paths split into their components, empty ones included")
{
  CHECK(path_components("a/b/c") == std::vector<std::string_view>{"a", "b", "c"});
  CHECK(path_components("a//b") == std::vector<std::string_view>{"a", "", "b"});
  CHECK(path_components("") == std::vector<std::string_view>{""});
}
