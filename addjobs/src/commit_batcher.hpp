#pragma once

#include <hubcache/storage/repository.hpp>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace addjobs {

// Group commit for registrations: configurations that finish close together share one
// commit, and commits to a store with a commit quota are spaced at least `spacing` apart
// (the Hub allows about 128 commits an hour per repo), so a 300-configuration manifest
// stays far under the quota. The first commit goes at once; a later one waits out the
// spacing, gathering whatever finishes meanwhile. Thread-safe.
class CommitBatcher {
public:
  using CommitFunction = std::function<hubcache::storage::CommitResult(const hubcache::storage::CommitRequest&)>;
  CommitBatcher(CommitFunction commit, std::chrono::milliseconds spacing)
    : m_commit(std::move(commit)), m_spacing(spacing)
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

  CommitFunction m_commit;
  std::chrono::milliseconds m_spacing;
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<std::shared_ptr<Pending>> m_queue;
  bool m_committing = false;
  std::optional<std::chrono::steady_clock::time_point> m_last_commit;
  std::size_t m_commits = 0;
};

// The requests as one: additions and deletions together (a path added twice keeps its
// first content), one message naming how many registrations it carries.
hubcache::storage::CommitRequest merge_requests(std::vector<hubcache::storage::CommitRequest*> requests);

} // namespace addjobs
