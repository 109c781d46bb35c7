#include <hubcache/error.hpp>
#include <hubcache/util/anonymous_file.hpp>
#include <hubcache/util/fs.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace hubcache;
using namespace hubcache::util;

TEST_SUITE_BEGIN("util::fs");

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

TEST_CASE("reads take regular files only, bounded, and never hang on a FIFO or stream a device")
{
  test_support::TempDir dir;
  util::write_file_atomically(dir / "small", "12345");
  CHECK(util::read_file(dir / "small") == "12345");
  CHECK_THROWS_WITH_AS(util::read_file(dir / "small", 4), doctest::Contains("larger than 4 bytes"), IoError);
  CHECK_FALSE(util::read_file_if_exists(dir / "missing").has_value());
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(util::read_file(dir / "fifo"), doctest::Contains("not a regular file"), IoError);
  CHECK_THROWS_WITH_AS(util::read_file("/dev/zero"), doctest::Contains("not a regular file"), IoError);
  CHECK_THROWS_AS(util::read_file(dir.path()), IoError);
  std::string seen;
  auto total =
    util::read_file_chunks(dir / "small", [&](const char* data, std::size_t size) { seen.append(data, size); });
  CHECK(total == 5);
  CHECK(seen == "12345");
  char head[3];
  CHECK(util::read_up_to(util::open_regular_file(dir / "small"), dir / "small", head, sizeof head) == 3);
  CHECK(std::string(head, 3) == "123");
}

TEST_CASE("reads relative to an open directory: whole files of any size, /proc files, errors naming the file")
{
  test_support::TempDir dir;
  util::write_file_atomically(dir / "flags.json", "[\"--model-type=transformer\"]");
  std::string big(100'000, 'b');
  util::write_file_atomically(dir / "big", big);
  util::write_file_atomically(dir / "empty", "");
  auto directory = util::open_directory_at(AT_FDCWD, dir.path().c_str());
  REQUIRE(directory.valid());
  CHECK(util::read_file_at_if_exists(directory.get(), "flags.json", dir.path().native())
        == "[\"--model-type=transformer\"]");
  CHECK(util::read_file_at_if_exists(directory.get(), "big", dir.path().native()) == big);
  CHECK(util::read_file_at_if_exists(directory.get(), "empty", dir.path().native()) == "");
  CHECK_FALSE(util::read_file_at_if_exists(directory.get(), "missing", dir.path().native()).has_value());
  auto too_big = (dir / "big").string() + ": larger than 10 bytes";
  CHECK_THROWS_WITH_AS(util::read_file_at_if_exists(directory.get(), "big", dir.path().native(), 10),
                       doctest::Contains(too_big.c_str()), IoError);
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(util::read_file_at_if_exists(directory.get(), "fifo", dir.path().native()),
                       doctest::Contains("not a regular file"), IoError);
  // Files that say size 0 and read in pieces are read to their end.
  auto maps = util::read_file("/proc/self/maps");
  CHECK(maps.size() > 100);
  CHECK(maps.back() == '\n');
}

TEST_CASE("directory listings: every name but . and .., with its type; symlinks are not opened as directories")
{
  test_support::TempDir dir;
  util::write_file_atomically(dir / "file", "x");
  stdfs::create_directory(dir / "sub");
  stdfs::create_directory_symlink(dir / "sub", dir / "link");
  for (int i = 0; i < 2000; ++i) { // more than one getdents64 block
    util::write_file_atomically(dir / "sub" / ("n" + std::to_string(i)), "");
  }
  auto directory = util::open_directory_at(AT_FDCWD, dir.path().c_str());
  REQUIRE(directory.valid());
  std::map<std::string, unsigned char> seen;
  CHECK(util::for_each_directory_item(directory,
                                      [&](std::string_view name, unsigned char type) { seen.emplace(name, type); })
        == 0);
  REQUIRE(seen.size() == 3);
  for (const auto& item : seen) {
    const auto& name = item.first; // not a structured binding: clang 14 cannot capture one
    auto type = item.second;
    CAPTURE(name);
    CHECK((type == DT_UNKNOWN || type == (name == "file" ? DT_REG : name == "sub" ? DT_DIR : DT_LNK)));
  }
  auto sub = util::open_directory_at(directory.get(), "sub");
  REQUIRE(sub.valid());
  std::size_t count = 0;
  CHECK(util::for_each_directory_item(sub, [&](std::string_view, unsigned char) { ++count; }) == 0);
  CHECK(count == 2000);
  CHECK_FALSE(util::open_directory_at(directory.get(), "link").valid());
  CHECK((errno == ELOOP || errno == ENOTDIR));
  CHECK_FALSE(util::open_directory_at(directory.get(), "file").valid());
  CHECK(errno == ENOTDIR);
}

TEST_CASE("a temporary file is removed unless kept; a no-replace rename never overwrites")
{
  test_support::TempDir dir;
  std::filesystem::path path;
  {
    util::TemporaryFile file(dir / "payload");
    file.write("data");
    file.close();
    path = file.path();
    CHECK(util::is_temp_name(path.filename().string()));
    CHECK(std::filesystem::exists(path));
  }
  CHECK_FALSE(std::filesystem::exists(path));
  util::write_file_atomically(dir / "a", "a");
  util::write_file_atomically(dir / "b", "b");
  CHECK_FALSE(util::rename_no_replace(dir / "a", dir / "b"));
  CHECK(util::read_file(dir / "b") == "b");
  CHECK(util::rename_no_replace(dir / "a", dir / "c"));
  CHECK(util::read_file(dir / "c") == "a");
  CHECK_THROWS_AS(util::rename_no_replace(dir / "missing", dir / "d"), IoError);
}

TEST_CASE("join_path puts exactly one slash between a directory and a relative path")
{
  CHECK(util::join_path("/var/tmp/cache", "neuronxcc-2.0/MODULE_1/model.neff")
        == "/var/tmp/cache/neuronxcc-2.0/MODULE_1/model.neff");
  CHECK(util::join_path("/var/tmp/cache/", "a/b") == "/var/tmp/cache/a/b");
  CHECK(util::join_path("", "a") == "/a");
  CHECK(util::join_path("/", "a") == "/a");
}

TEST_SUITE_END();

TEST_CASE("a fatal signal removes the process's live temp files before it dies; abandoned ones are recognized")
{
  test_support::TempDir dir;
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    util::remove_temp_files_on_fatal_signals();
    util::TemporaryFile payload(dir / "payload.ndjson");
    util::AtomicFile entry(dir / "model.neff");
    entry.write("partial");
    util::write_file_atomically(dir / "ready", "");
    ::raise(SIGTERM);
    ::_exit(0); // not reached
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(std::filesystem::exists(dir / "ready"));
  for (const auto& item : std::filesystem::directory_iterator(dir.path())) {
    CHECK_MESSAGE(!util::is_temp_name(item.path().filename().string()), item.path().string());
  }

  // A temp name of a dead process of this host is abandoned at once; a live one's is not.
  auto ours = util::unique_temp_path(dir / "x");
  util::write_file_atomically(ours, "");
  CHECK_FALSE(util::is_abandoned_temp_file(ours, std::chrono::hours(24)));
  auto dead = dir / ("x" + std::string(util::k_temp_infix) + test_support::temp_owner_of(child) + "abc");
  util::write_file_atomically(dead, "");
  CHECK(util::is_abandoned_temp_file(dead, std::chrono::hours(24)));
  // Another host, or this host's name in another pid namespace (a container with host
  // networking), or a name of the older form: only age tells.
  for (const auto* owner : {"elsewhere.1.abc", "elsewhere.1.0123456789ab-5-abc"}) {
    auto other_host = dir / ("x" + std::string(util::k_temp_infix) + owner);
    util::write_file_atomically(other_host, "");
    CHECK_FALSE(util::is_abandoned_temp_file(other_host, std::chrono::hours(24)));
    CHECK(util::is_abandoned_temp_file(other_host, std::chrono::hours(24),
                                       std::chrono::system_clock::now() + std::chrono::hours(25)));
  }
  auto same_name_old_form =
    dir / ("x" + std::string(util::k_temp_infix) + util::host_name() + "." + std::to_string(child) + ".abc");
  util::write_file_atomically(same_name_old_form, "");
  CHECK_FALSE(util::is_abandoned_temp_file(same_name_old_form, std::chrono::hours(24)));
}

TEST_CASE("a scratch file is written at its end, rewritten in place, never past its end")
{
  test_support::TempDir dir;
  hubcache::util::AnonymousFile file(dir.path());
  file.write(std::string(4, ' '));
  file.write("body");
  file.write_at(2, "h:");
  CHECK(file.size() == 8);
  std::string read_back(8, '\0');
  CHECK(::pread(file.fd().get(), read_back.data(), read_back.size(), 0) == 8);
  CHECK(read_back == "  h:body");
  CHECK_THROWS_AS(file.write_at(6, "xyz"), hubcache::IoError);
  CHECK_THROWS_AS(file.write_at(9, ""), hubcache::IoError);
  CHECK(file.size() == 8);
}
