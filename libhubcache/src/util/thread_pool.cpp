#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace hubcache::util {

void parallel_for(std::size_t count, std::size_t workers, const std::function<void(std::size_t)>& task)
{
  workers = std::max<std::size_t>(1, std::min(workers, count));
  if (workers <= 1) {
    for (std::size_t i = 0; i < count; ++i) {
      task(i);
    }
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (;;) {
      auto index = next.fetch_add(1);
      if (index >= count || failed.load()) {
        return;
      }
      try {
        task(index);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!first_error) {
          first_error = std::current_exception();
        }
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers);
  for (std::size_t i = 0; i < workers; ++i) {
    threads.emplace_back(worker);
  }
  for (auto& thread : threads) {
    thread.join();
  }
  if (first_error) {
    std::rethrow_exception(first_error);
  }
}

} // namespace hubcache::util
