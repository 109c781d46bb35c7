#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

using namespace hubcache;
using namespace hubcache::util;

TEST_SUITE_BEGIN("hubcache::fs");

TEST_CASE("AtomicFile publishes only on commit")
{
  test_support::TempDir dir;
  auto target = dir / "file";
  {
    util::AtomicFile file(target);
    file.write("half");
    CHECK(util::is_temp_name(file.temp_path().filename().string()));
    CHECK(!std::filesystem::exists(target));
  }
  CHECK(!std::filesystem::exists(target));
  CHECK(std::filesystem::is_empty(dir.path())); // temp file removed
  {
    util::AtomicFile file(target);
    file.write("whole");
    file.commit();
  }
  CHECK(util::read_file(target) == "whole");
}

TEST_CASE("AtomicFile replaces an existing file without a window")
{
  test_support::TempDir dir;
  auto target = dir / "file";
  util::write_file_atomically(target, "old");
  util::AtomicFile file(target);
  file.write("new");
  CHECK(util::read_file(target) == "old");
  file.commit();
  CHECK(util::read_file(target) == "new");
}

TEST_CASE("unique temp names differ")
{
  auto a = util::unique_temp_path("/x/y");
  auto b = util::unique_temp_path("/x/y");
  CHECK(a != b);
  CHECK(a.parent_path() == "/x");
}

TEST_CASE("create_exclusive_from refuses an existing name")
{
  test_support::TempDir dir;
  util::write_file_atomically(dir / "a", "1");
  util::write_file_atomically(dir / "b", "2");
  CHECK(util::create_exclusive_from(dir / "a", dir / "c"));
  CHECK(!util::create_exclusive_from(dir / "b", dir / "c"));
  CHECK(util::read_file(dir / "c") == "1");
}

TEST_CASE("read_file_if_exists")
{
  test_support::TempDir dir;
  CHECK(!util::read_file_if_exists(dir / "missing").has_value());
  CHECK_THROWS_AS(util::read_file(dir / "missing"), IoError);
}

TEST_SUITE_END();
