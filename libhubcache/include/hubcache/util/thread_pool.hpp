#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

// The concurrency kit: which primitive to use when.
// - parallel_for: a known number of independent tasks (the files of a pull, a copy batch,
//   a commit phase, a multipart's parts, hashes). The default; `workers` is --max-workers.
// - TaskQueue: work found while producing other work, run without holding up the producer
//   (an upload's verify call after its PUT).
// - std::async: one call overlapping the caller's own (reading the head while the cache is
//   scanned; the Hub's next commit batch while this one is planned), joined by its future.
// - std::thread: only a companion with a lifetime of its own (StreamWriter's writer, a
//   lock's renewer, the progress ticker), joined by its owner's destructor.
// Nothing else starts threads.
namespace hubcache::util {

// Runs task(0..count-1) on up to `workers` threads (inline when one suffices). The first
// exception stops further tasks from starting and is rethrown once every thread is done.
void parallel_for(std::size_t count, std::size_t workers, const std::function<void(std::size_t)>& task);

// Up to `workers` threads running tasks as they are submitted, for work that follows other
// work without holding up its producer (an upload's verify call after its PUT). After the
// first failure the rest is dropped; wait() joins and rethrows it. The destructor joins
// too (dropping what has not started), so tasks may capture the caller's locals declared
// before the queue.
class TaskQueue {
public:
  explicit TaskQueue(std::size_t workers);
  ~TaskQueue();
  TaskQueue(const TaskQueue&) = delete;
  TaskQueue& operator=(const TaskQueue&) = delete;

  void submit(std::function<void()> task);
  // Rethrows the first failure without waiting, so a producer can stop early.
  void rethrow_if_failed();
  // Runs what was submitted, joins, and rethrows the first failure.
  void wait();

private:
  void run();
  void stop_and_join();

  std::size_t m_max_workers;
  std::mutex m_mutex;
  std::condition_variable m_ready;
  std::deque<std::function<void()>> m_tasks;
  std::vector<std::thread> m_threads;
  std::size_t m_idle = 0;
  bool m_closing = false;
  std::exception_ptr m_error;
};

} // namespace hubcache::util
