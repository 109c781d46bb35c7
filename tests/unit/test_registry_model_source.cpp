// The one reader of a model's config files, and what lookup and add take from them.
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <registry/model_source.hpp>

#include <filesystem>
#include <string>

#include <sys/stat.h>

namespace stdfs = std::filesystem;

TEST_SUITE_BEGIN("model_source");

TEST_CASE("read_model_config: a bounded regular file of bounded JSON, or nothing")
{
  test_support::TempDir dir;
  auto file = dir / "config.json";
  CHECK_FALSE(registry::read_model_config_if_exists(file));
  CHECK_THROWS_AS(registry::read_model_config(file), hubcache::IoError);

  hubcache::util::write_file_atomically(file, R"({"model_type": "bert"})");
  CHECK(registry::read_model_config(file)["model_type"] == "bert");
  CHECK(registry::read_model_config_if_exists(file) == registry::read_model_config(file));

  // Hostile JSON: malformed, or nested past the parser's bounds.
  hubcache::util::write_file_atomically(file, "{\"model_type\": ");
  CHECK_THROWS_AS(registry::read_model_config(file), hubcache::InvalidArgument);
  hubcache::util::write_file_atomically(file, std::string(100'000, '[') + std::string(100'000, ']'));
  CHECK_THROWS_AS(registry::read_model_config_if_exists(file), hubcache::InvalidArgument);

  // Larger than the bound: refused from its size, not read.
  stdfs::remove(file);
  hubcache::util::write_file_atomically(file, "{}");
  stdfs::resize_file(file, registry::k_max_model_config_bytes + 1);
  CHECK_THROWS_AS(registry::read_model_config_if_exists(file), hubcache::IoError);

  // Not a regular file: a FIFO is refused without waiting for a writer; a directory too.
  stdfs::remove(file);
  REQUIRE(::mkfifo(file.c_str(), 0600) == 0);
  CHECK_THROWS_AS(registry::read_model_config_if_exists(file), hubcache::IoError);
  stdfs::remove(file);
  stdfs::create_directory(file);
  CHECK_THROWS_AS(registry::read_model_config(file), hubcache::IoError);
}

TEST_CASE("read_local_model reads through it: a directory's FIFO config.json is refused")
{
  test_support::TempDir dir;
  stdfs::create_directories(dir / "model");
  REQUIRE(::mkfifo((dir / "model/config.json").c_str(), 0600) == 0);
  CHECK_THROWS_AS(registry::read_local_model(dir / "model"), hubcache::IoError);
  stdfs::remove(dir / "model/config.json");
  hubcache::util::write_file_atomically(dir / "model/model_index.json", "{}");
  stdfs::create_directories(dir / "model/unet");
  stdfs::resize_file(dir / "model/model_index.json", registry::k_max_model_config_bytes + 1);
  CHECK_THROWS_AS(registry::read_local_model(dir / "model"), hubcache::IoError);
}

TEST_CASE("has_model_type and saved_from_hub_id: what lookup and add take from a config")
{
  CHECK(registry::has_model_type({{"model_type", "llama"}}));
  CHECK_FALSE(registry::has_model_type({{"model_type", 3}}));
  CHECK_FALSE(registry::has_model_type({{"hidden_size", 2}}));
  CHECK_FALSE(registry::has_model_type(nlohmann::json::array({"model_type"})));

  CHECK(registry::saved_from_hub_id({{"_name_or_path", "org/bert"}}) == "org/bert");
  CHECK_FALSE(registry::saved_from_hub_id({{"_name_or_path", "bert"}}));       // no namespace
  CHECK_FALSE(registry::saved_from_hub_id({{"_name_or_path", "/tmp/x"}}));     // a path
  CHECK_FALSE(registry::saved_from_hub_id({{"_name_or_path", "./org/bert"}})); // a relative path
  CHECK_FALSE(registry::saved_from_hub_id({{"_name_or_path", "org/a/b"}}));
  CHECK_FALSE(registry::saved_from_hub_id({{"_name_or_path", 7}}));
  CHECK_FALSE(registry::saved_from_hub_id(nlohmann::json::array()));
}

TEST_SUITE_END();
