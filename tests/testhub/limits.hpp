#pragma once

// The limits the real Hub enforces (shared/reference/hub-buckets-and-limits.md §2), each with
// the Hub's own default: commits per hour per repo, the commit request's time budget, files
// per commit, entries per folder, files per repo, and the api / resolvers quotas per fixed
// window announced in `RateLimit` / `RateLimit-Policy` headers. Tests set small values.

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http_util.hpp"
#include "storage.hpp"

namespace testhub {

// Quotas of one plan per window (hub-buckets-and-limits.md §2.2, "September '25").
struct Quota {
  std::uint64_t api = 0;       // 0: unlimited
  std::uint64_t resolvers = 0; // 0: unlimited
};

// The plan names --user accepts, and their quotas per 5-minute window.
std::optional<Quota> plan_quota(const std::string& plan);

struct LimitOptions {
  // Commits per repo within `commit_window` (a sliding window); 0: unlimited. The Hub
  // answers the 129th commit of an hour with 429.
  std::uint64_t commits_per_window = 128;
  std::chrono::seconds commit_window{3600};
  // Files (additions and deletions) in one commit; 0: no limit, as on the Hub (which only
  // recommends fewer than 100).
  std::uint64_t files_per_commit = 0;
  // A commit request that takes longer than this is still applied, but its answer is a 504
  // (the client saw its request time out). 0: no budget.
  std::chrono::milliseconds commit_timeout{60000};
  // Server-side work per file of a commit (sleeps), so a test can make commits slow.
  std::chrono::microseconds commit_cost_per_file{0};
  // Direct entries (files and folders) one folder may hold; 0: unlimited.
  std::uint64_t entries_per_folder = 10000;
  // Files per repo the Hub recommends; a commit past it is applied with a Warning header,
  // or refused when `refuse_past_repo_files`. 0: no check.
  std::uint64_t repo_files = 100000;
  bool refuse_past_repo_files = false;
  // Fixed quota windows; `override_*` replace every plan's quota for that bucket.
  std::chrono::seconds quota_window{300};
  std::optional<std::uint64_t> override_api;
  std::optional<std::uint64_t> override_resolvers;
  bool quotas = true;
};

// Which quota a request draws from: "api" (every /api route and the LFS batch endpoint, as
// the Hub's "batch response: We had to rate limit you..." shows), "resolvers" (/resolve and
// /raw), or none (LFS transfers, CDN, the test control routes).
std::optional<std::string> quota_bucket(const std::string& route);

class Limits {
public:
  explicit Limits(LimitOptions options) : m_options(std::move(options)) {}
  const LimitOptions& options() const { return m_options; }

  // Takes one request from `principal`'s quota for `bucket`. Returns the headers to send
  // with the answer; `refused` is set (a 429 to send instead of the answer) when spent.
  struct Admission {
    std::vector<std::pair<std::string, std::string>> headers;
    std::optional<Reply> refused;
  };
  Admission admit(const std::string& principal, const Quota& plan, const std::string& bucket, bool json_body);

  // A 429 when `repo_uid` has had its commits for the window, else nullopt.
  std::optional<Reply> refuse_commit(const std::string& repo_uid);
  // Counts a commit that landed.
  void record_commit(const std::string& repo_uid);
  // Throws HubError(400) when the commit has more files than allowed.
  void check_commit_size(std::size_t operations) const;
  // Throws HubError(400, the Hub's text) when a folder the commit adds to would hold more
  // entries than allowed, or when the repo would hold too many files and refusal is on.
  void check_tree(const Commit& next, const Storage::TreeChange& change, const std::string& branch) const;
  // A Warning header value when `next` holds more files than recommended.
  std::optional<std::string> repo_files_warning(const Commit& next) const;
  void simulate_commit_work(std::size_t operations) const;

private:
  struct Window {
    std::int64_t start = 0; // seconds since the epoch, a multiple of the window
    std::uint64_t used = 0;
  };

  LimitOptions m_options;
  std::mutex m_mutex;
  std::map<std::string, Window> m_windows; // principal + '\n' + bucket
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>> m_commits;
};

} // namespace testhub
