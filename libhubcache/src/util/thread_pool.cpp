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

namespace hubcache::util {

TaskQueue::TaskQueue(std::size_t workers) : m_max_workers(std::max<std::size_t>(1, workers)) {}

TaskQueue::~TaskQueue()
{
  {
    std::lock_guard lock(m_mutex);
    m_tasks.clear();
  }
  stop_and_join();
}

void TaskQueue::submit(std::function<void()> task)
{
  std::lock_guard lock(m_mutex);
  if (m_error || m_closing) {
    return;
  }
  m_tasks.push_back(std::move(task));
  // Threads start on demand: a queue that gets three tasks runs at most three threads.
  if (m_idle == 0 && m_threads.size() < m_max_workers) {
    m_threads.emplace_back([this] { run(); });
  } else {
    m_ready.notify_one();
  }
}

void TaskQueue::rethrow_if_failed()
{
  std::lock_guard lock(m_mutex);
  if (m_error) {
    std::rethrow_exception(m_error);
  }
}

void TaskQueue::wait()
{
  stop_and_join();
  std::lock_guard lock(m_mutex);
  if (m_error) {
    std::rethrow_exception(m_error);
  }
}

void TaskQueue::stop_and_join()
{
  {
    std::lock_guard lock(m_mutex);
    m_closing = true;
  }
  m_ready.notify_all();
  for (auto& thread : m_threads) {
    if (thread.joinable()) {
      thread.join();
    }
  }
}

void TaskQueue::run()
{
  std::unique_lock lock(m_mutex);
  for (;;) {
    ++m_idle;
    m_ready.wait(lock, [this] { return !m_tasks.empty() || m_closing; });
    --m_idle;
    if (m_tasks.empty()) {
      return; // closing and drained
    }
    auto task = std::move(m_tasks.front());
    m_tasks.pop_front();
    lock.unlock();
    try {
      task();
    } catch (...) {
      lock.lock();
      if (!m_error) {
        m_error = std::current_exception();
      }
      m_tasks.clear();
      continue;
    }
    lock.lock();
  }
}

} // namespace hubcache::util
