#include <hubcache/error.hpp>
#include <hubcache/util/thread_pool.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace hubcache;

TEST_CASE("parallel_for runs every task once and rethrows the first failure")
{
  std::vector<int> hits(100, 0);
  util::parallel_for(hits.size(), 4, [&](std::size_t i) { hits[i] += 1; });
  CHECK(std::all_of(hits.begin(), hits.end(), [](int n) { return n == 1; }));
  CHECK_THROWS_AS(util::parallel_for(10, 3,
                                     [](std::size_t i) {
                                       if (i == 5) {
                                         throw IoError("boom");
                                       }
                                     }),
                  IoError);
}

TEST_CASE("TaskQueue runs every submitted task, on at most its workers, and wait() joins")
{
  std::atomic<int> done{0};
  std::atomic<int> running{0};
  std::atomic<int> most_running{0};
  {
    util::TaskQueue queue(3);
    for (int i = 0; i < 50; ++i) {
      queue.submit([&] {
        auto now = ++running;
        auto seen = most_running.load();
        while (now > seen && !most_running.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --running;
        ++done;
      });
    }
    queue.wait();
    CHECK(done == 50);
  }
  CHECK(most_running <= 3);
  CHECK(most_running >= 1);
}

TEST_CASE("TaskQueue stops after the first failure and rethrows it")
{
  std::atomic<int> after_failure{0};
  util::TaskQueue queue(1);
  queue.submit([] { throw IoError("verify failed"); });
  // One worker: the failing task runs first, so what comes after it is dropped.
  for (int i = 0; i < 20; ++i) {
    queue.submit([&] { ++after_failure; });
  }
  CHECK_THROWS_AS(queue.wait(), IoError);
  CHECK(after_failure == 0);
  CHECK_THROWS_AS(queue.rethrow_if_failed(), IoError);
}

TEST_CASE("a TaskQueue destroyed without wait() joins its threads and drops what did not start")
{
  std::atomic<int> done{0};
  {
    util::TaskQueue queue(2);
    for (int i = 0; i < 10; ++i) {
      queue.submit([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++done;
      });
    }
  }
  CHECK(done <= 10); // no crash, no task running past the queue's lifetime
}
