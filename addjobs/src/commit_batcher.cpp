#include "commit_batcher.hpp"

#include <set>

namespace addjobs {

namespace hs = hubcache::storage;

hs::CommitRequest merge_requests(std::vector<hs::CommitRequest*> requests)
{
  if (requests.size() == 1) {
    return std::move(*requests.front());
  }
  hs::CommitRequest merged;
  merged.message = "Add " + std::to_string(requests.size()) + " configurations";
  std::set<std::string> added;
  for (auto* request : requests) {
    merged.description += request->message + "\n";
    for (auto& addition : request->additions) {
      if (added.insert(addition.path_in_repo).second) {
        merged.additions.push_back(std::move(addition));
      }
    }
    for (auto& deletion : request->deletions) {
      merged.deletions.push_back(std::move(deletion));
    }
    if (!merged.unit_of) {
      merged.unit_of = request->unit_of;
    }
  }
  return merged;
}

hs::CommitResult CommitBatcher::commit(hs::CommitRequest request)
{
  auto mine = std::make_shared<Pending>();
  mine->request = std::move(request);
  std::unique_lock lock(m_mutex);
  m_queue.push_back(mine);
  while (!mine->done) {
    if (!m_committing) {
      lead(lock);
    } else {
      m_changed.wait(lock);
    }
  }
  if (mine->error) {
    std::rethrow_exception(mine->error);
  }
  return *mine->result;
}

std::chrono::steady_clock::time_point CommitBatcher::next_due()
{
  auto now = std::chrono::steady_clock::now();
  if (m_pace.interval.count() <= 0) {
    return now;
  }
  using Seconds = std::chrono::duration<double>;
  const auto interval = std::chrono::duration_cast<Seconds>(m_pace.interval).count();
  const auto burst = static_cast<double>(std::max<std::size_t>(m_pace.burst, 1));
  m_credit = std::min(burst, m_credit + std::chrono::duration_cast<Seconds>(now - m_credited).count() / interval);
  m_credited = now;
  if (m_credit >= 1.0) {
    return now;
  }
  return now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(Seconds((1.0 - m_credit) * interval));
}

void CommitBatcher::lead(std::unique_lock<std::mutex>& lock)
{
  m_committing = true;
  // Registrations finishing while the pace holds this commit back join it.
  for (auto due = next_due(); std::chrono::steady_clock::now() < due; due = next_due()) {
    m_changed.wait_until(lock, due);
  }
  if (m_pace.interval.count() > 0) {
    m_credit -= 1.0;
  }
  auto batch = std::move(m_queue);
  m_queue.clear();
  std::vector<hs::CommitRequest*> requests;
  for (const auto& pending : batch) {
    requests.push_back(&pending->request);
  }
  lock.unlock();
  std::optional<hs::CommitResult> result;
  std::exception_ptr error;
  try {
    result = m_commit(merge_requests(std::move(requests)));
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  for (const auto& pending : batch) {
    pending->result = result;
    pending->error = error;
    pending->done = true;
  }
  ++m_commits;
  m_committing = false;
  m_changed.notify_all();
}

std::size_t CommitBatcher::commits_made() const
{
  std::lock_guard lock(m_mutex);
  return m_commits;
}

} // namespace addjobs
