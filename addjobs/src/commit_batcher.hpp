#pragma once

#include <hubcache/storage/repository.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace addjobs {

// Group commit for registrations: configurations that finish while a commit is in flight,
// or while the pace holds the next one back, share one commit. Commits to a store with a
// commit quota keep to its pace (storage::CommitPace): the first `burst` go at once, then
// one every `interval` on average, so a 3-configuration job never waits and a
// 300-configuration manifest stays under the Hub's 128 commits an hour, gathering what
// finishes meanwhile into each commit. Thread-safe.
class CommitBatcher {
public:
  using CommitFunction = std::function<hubcache::storage::CommitResult(const hubcache::storage::CommitRequest&)>;
  CommitBatcher(CommitFunction commit, hubcache::storage::CommitPace pace)
    : m_commit(std::move(commit)), m_pace(pace), m_credit(static_cast<double>(std::max<std::size_t>(pace.burst, 1)))
  {}

  // Blocks until `request` has landed, alone or with others; that commit's result (or
  // its error).
  hubcache::storage::CommitResult commit(hubcache::storage::CommitRequest request);

  std::size_t commits_made() const;

private:
  struct Pending {
    hubcache::storage::CommitRequest request;
    std::optional<hubcache::storage::CommitResult> result;
    std::exception_ptr error;
    bool done = false;
  };
  void lead(std::unique_lock<std::mutex>& lock);
  // When the next commit may go: now while the burst lasts, else once a commit's worth of
  // credit has come back (one per interval, up to the burst).
  std::chrono::steady_clock::time_point next_due();

  CommitFunction m_commit;
  hubcache::storage::CommitPace m_pace;
  double m_credit; // commits that may go at once
  std::chrono::steady_clock::time_point m_credited = std::chrono::steady_clock::now();
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<std::shared_ptr<Pending>> m_queue;
  bool m_committing = false;
  std::size_t m_commits = 0;
};

// The requests as one: additions and deletions together (a path added twice keeps its
// first content), one message naming how many registrations it carries.
hubcache::storage::CommitRequest merge_requests(std::vector<hubcache::storage::CommitRequest*> requests);

} // namespace addjobs
