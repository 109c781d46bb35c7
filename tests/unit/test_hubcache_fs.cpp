#include <hubcache/error.hpp>
#include <hubcache/fs.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

using namespace hubcache;

TEST_SUITE_BEGIN("hubcache::fs");

TEST_CASE("AtomicFile publishes only on commit")
{
  test_support::TempDir dir;
  auto target = dir / "file";
  {
    fs::AtomicFile file(target);
    file.write("half");
    CHECK(fs::is_temp_name(file.temp_path().filename().string()));
    CHECK(!std::filesystem::exists(target));
  }
  CHECK(!std::filesystem::exists(target));
  CHECK(std::filesystem::is_empty(dir.path())); // temp file removed
  {
    fs::AtomicFile file(target);
    file.write("whole");
    file.commit();
  }
  CHECK(fs::read_file(target) == "whole");
}

TEST_CASE("AtomicFile replaces an existing file without a window")
{
  test_support::TempDir dir;
  auto target = dir / "file";
  fs::write_file_atomically(target, "old");
  fs::AtomicFile file(target);
  file.write("new");
  CHECK(fs::read_file(target) == "old");
  file.commit();
  CHECK(fs::read_file(target) == "new");
}

TEST_CASE("unique temp names differ")
{
  auto a = fs::unique_temp_path("/x/y");
  auto b = fs::unique_temp_path("/x/y");
  CHECK(a != b);
  CHECK(a.parent_path() == "/x");
}

TEST_CASE("create_exclusive_from refuses an existing name")
{
  test_support::TempDir dir;
  fs::write_file_atomically(dir / "a", "1");
  fs::write_file_atomically(dir / "b", "2");
  CHECK(fs::create_exclusive_from(dir / "a", dir / "c"));
  CHECK(!fs::create_exclusive_from(dir / "b", dir / "c"));
  CHECK(fs::read_file(dir / "c") == "1");
}

TEST_CASE("read_file_if_exists")
{
  test_support::TempDir dir;
  CHECK(!fs::read_file_if_exists(dir / "missing").has_value());
  CHECK_THROWS_AS(fs::read_file(dir / "missing"), IoError);
}

TEST_SUITE_END();
