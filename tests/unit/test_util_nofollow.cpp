#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/nofollow.hpp>
#include <hubcache/util/temp_owner.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace hubcache;
namespace stdfs = std::filesystem;

TEST_SUITE_BEGIN("hubcache::util::nofollow");

TEST_CASE("open_directory_below walks real directories only, and makes the missing ones")
{
  test_support::TempDir dir;
  stdfs::create_directories(dir / "root" / "a");
  stdfs::create_directories(dir / "outside");
  stdfs::create_directory_symlink(dir / "outside", dir / "root" / "a" / "link");
  util::write_file_atomically(dir / "root" / "file", "x");
  auto root = util::open_root_directory(dir / "root");

  CHECK(util::open_directory_below(root, "a/b/c", "root", true).valid());
  CHECK(stdfs::is_directory(dir / "root" / "a" / "b" / "c"));
  CHECK_THROWS_AS(util::open_directory_below(root, "a/missing", "root", false), IoError);
  try {
    util::open_directory_below(root, "a/link/new", "root", true);
    FAIL("a link on the way was followed");
  } catch (const util::LinkOnTheWay& error) {
    CHECK(error.component() == "a/link");
    CHECK(std::string(error.what()).find("root/a/link is a symbolic link") != std::string::npos);
  }
  CHECK(stdfs::is_empty(dir / "outside"));
  CHECK_THROWS_WITH_AS(util::open_directory_below(root, "file/x", "root", true),
                       doctest::Contains("root/file: it is not a directory"), IoError);
  CHECK_THROWS_AS(util::open_directory_below(root, "a/../..", "root", true), util::LinkOnTheWay);

  CHECK(util::link_on_the_way(dir / "root", "a/link/new/deeper") == "a/link");
  CHECK(util::link_on_the_way(dir / "root", "a/b/not-yet/x") == std::nullopt);
  CHECK(util::link_on_the_way(dir / "root", "file/x") == "file");
  // The root itself may be a link (a cache moved to a bigger disk).
  stdfs::create_directory_symlink(dir / "root", dir / "root-link");
  CHECK(util::link_on_the_way(dir / "root-link", "a/b") == std::nullopt);
}

TEST_CASE("remove_tree_at removes links as themselves, never what they point to")
{
  test_support::TempDir dir;
  stdfs::create_directories(dir / "outside" / "sub");
  util::write_file_atomically(dir / "outside" / "sub" / "precious", "keep me");
  stdfs::create_directories(dir / "parent" / "tree" / "deep");
  util::write_file_atomically(dir / "parent" / "tree" / "deep" / "f", "x");
  stdfs::create_directory_symlink(dir / "outside", dir / "parent" / "tree" / "to-outside");
  stdfs::create_symlink(dir / "outside" / "sub" / "precious", dir / "parent" / "tree" / "deep" / "file-link");
  stdfs::create_directory_symlink(dir / "outside", dir / "parent" / "top-link");
  auto parent = util::open_root_directory(dir / "parent");

  CHECK(util::remove_tree_at(parent, "tree"));
  CHECK(util::remove_tree_at(parent, "top-link"));
  CHECK(util::remove_tree_at(parent, "missing"));
  CHECK_FALSE(util::remove_tree_at(parent, ".."));
  CHECK_FALSE(util::remove_tree_at(parent, "a/b"));
  CHECK(stdfs::is_empty(dir / "parent"));
  CHECK(util::read_file(dir / "outside" / "sub" / "precious") == "keep me");
}

TEST_CASE("a temp name says who wrote it; only a writer of this node can be proven gone")
{
  auto mine = util::unique_temp_path("/x/target").filename().string();
  auto owner = util::parse_temp_owner(mine);
  REQUIRE(owner);
  CHECK(owner->pid == ::getpid());
  CHECK(owner->host == util::host_name());
  CHECK(owner->node == util::this_node());
  CHECK(owner->start == util::process_start(::getpid()));
  CHECK(util::owner_state(*owner) == util::OwnerState::alive);

  // The same pid with another start time is another process: the writer died, its pid was reused.
  auto reused = *owner;
  reused.start += 1;
  CHECK(util::owner_state(reused) == util::OwnerState::gone);

  pid_t child = ::fork();
  if (child == 0) {
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  auto dead = util::parse_temp_owner("f.tmp.nc." + test_support::temp_owner_of(child) + "abc");
  REQUIRE(dead);
  CHECK(util::owner_state(*dead) == util::OwnerState::gone);

  // Another node (another boot, another pid namespace) or the older form: unknown.
  auto other =
    util::parse_temp_owner("f.tmp.nc." + util::host_name() + "." + std::to_string(child) + ".0123456789ab-1-r");
  REQUIRE(other);
  CHECK(other->node == "0123456789ab");
  CHECK(util::owner_state(*other) == util::OwnerState::unknown);
  auto older = util::parse_temp_owner("f.tmp.nc." + util::host_name() + "." + std::to_string(child) + ".abcdefghij");
  REQUIRE(older);
  CHECK(older->node.empty());
  CHECK(util::owner_state(*older) == util::OwnerState::unknown);

  auto now = std::chrono::system_clock::now();
  CHECK_FALSE(util::is_abandoned(mine, now - std::chrono::hours(48), std::chrono::hours(24), now));
  CHECK(util::is_abandoned("f.tmp.nc.elsewhere.1.x", now - std::chrono::hours(48), std::chrono::hours(24), now));
  CHECK_FALSE(util::is_abandoned("f.tmp.nc.elsewhere.1.x", now, std::chrono::hours(24), now));
  CHECK(util::is_abandoned("f.tmp.nc.garbage", now - std::chrono::hours(48), std::chrono::hours(24), now));
  CHECK_FALSE(util::is_abandoned("plain-name", now - std::chrono::hours(48), std::chrono::hours(24), now));
  CHECK_FALSE(util::parse_temp_owner("f.tmp.nc.host.notapid.x"));
  CHECK_FALSE(util::parse_temp_owner("f.tmp.nc.host.-3.x"));
}

TEST_SUITE_END();
