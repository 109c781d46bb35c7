#include <hubcache/compilecache/pull_lock.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fcntl.h>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <time.h>
#include <unistd.h>

namespace cc = hubcache::compilecache;
namespace stdfs = std::filesystem;

namespace compilecache_pull_lock_test {

namespace {

// What a waiter reads when it opens the lock; nullopt when there was no lock file to open.
std::optional<std::string> read_lock(const stdfs::path& lock)
{
  int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  char buffer[512];
  auto size = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  return std::string(buffer, size > 0 ? static_cast<std::size_t>(size) : 0);
}

} // namespace

TEST_SUITE_BEGIN("pull lock");

TEST_CASE("a lock file is never seen without its owner")
{
  // A waiter that read an empty lock saw no owner and, on a local disk, found its flock
  // free: it took a live pull's lock over. The lock must appear with its owner in it.
  test_support::TempDir dir;
  auto lock = dir / std::string(cc::k_pull_lock_name);
  std::atomic<bool> done{false};
  std::thread holder([&] {
    for (int round = 0; round < 300; ++round) {
      cc::PullLock taken(dir.path(), {});
    }
    done = true;
  });
  int seen = 0;
  int empty = 0;
  while (!done) {
    // Only a file this waiter opened counts: the lock it read is the one it judges.
    auto text = read_lock(lock);
    if (!text) {
      continue;
    }
    ++seen;
    if (text->empty()) {
      ++empty;
    } else {
      CHECK(text->starts_with("neuron-cache-pull-lock 1\n"));
    }
  }
  holder.join();
  CHECK(seen > 0);
  CHECK(empty == 0);
  CHECK_FALSE(stdfs::exists(lock));
  // No temp name of a candidate lock is left beside it.
  CHECK(stdfs::is_empty(dir.path()));
}

// Holds the lock of `root` on a thread until release() (or destruction).
class HeldLock {
public:
  explicit HeldLock(const stdfs::path& root)
    : m_thread([this, root] {
        cc::PullLock taken(root, {});
        m_held = true;
        while (!m_release) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      })
  {
    while (!m_held) {
      std::this_thread::yield();
    }
  }
  ~HeldLock() { release(); }
  HeldLock(const HeldLock&) = delete;
  HeldLock& operator=(const HeldLock&) = delete;
  void release()
  {
    m_release = true;
    if (m_thread.joinable()) {
      m_thread.join();
    }
  }

private:
  std::atomic<bool> m_held{false};
  std::atomic<bool> m_release{false};
  std::thread m_thread;
};

TEST_CASE("a second pull waits for the first and is told who holds it")
{
  test_support::TempDir dir;
  HeldLock first(dir.path());
  int told = 0;
  cc::PullLockHolder holder;
  {
    cc::PullLockOptions options;
    options.poll = std::chrono::milliseconds(10);
    // The first lets go only once the second was told to wait: no timing assumed.
    cc::PullLock second(
      dir.path(),
      [&](const cc::PullLockHolder& who) {
        ++told;
        holder = who;
        first.release();
      },
      options);
  }
  CHECK(told == 1);
  CHECK(holder.pid == ::getpid());
  CHECK(holder.this_host);
  CHECK(holder.describe() == "the pull of pid " + std::to_string(::getpid()) + " on this host");
  CHECK(stdfs::is_empty(dir.path()));
}

TEST_CASE("a lock taken after a long wait is fresh, not stale to other hosts")
{
  // Another host judges the lock by its mtime alone: the lock must not carry the time the
  // wait began.
  test_support::TempDir dir;
  auto lock = dir / std::string(cc::k_pull_lock_name);
  HeldLock first(dir.path());
  auto waited = std::chrono::milliseconds(1500);
  cc::PullLockOptions options;
  options.poll = std::chrono::milliseconds(10);
  std::thread releaser([&] {
    std::this_thread::sleep_for(waited);
    first.release();
  });
  cc::PullLock second(dir.path(), {}, options);
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  struct stat status {};
  REQUIRE(::stat(lock.c_str(), &status) == 0);
  releaser.join();
  auto age_ms = (now.tv_sec - status.st_mtim.tv_sec) * 1000 + (now.tv_nsec - status.st_mtim.tv_nsec) / 1000000;
  CHECK(age_ms < waited.count() / 2);
}

TEST_SUITE_END();

} // namespace compilecache_pull_lock_test
