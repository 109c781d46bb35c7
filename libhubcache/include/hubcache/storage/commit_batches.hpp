#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// How a push too big for one Hub commit is cut into commits, as huggingface_hub >= 1.20's
// upload pipeline sizes them (shared/reference/hub-buckets-and-limits.md §2.4, §2.7), but by
// whole units: a unit (a compile-cache entry) is never split across commits.
namespace hubcache::storage {

// The size of one unit of a commit.
struct UnitSize {
  std::size_t files = 0;
  std::uint64_t regular_bytes = 0;
};

// The files-per-commit target on huggingface_hub's scale (20 .. 1000 files, start 250, one
// step down after a commit that took over 40 s or failed), but growing as fast as the
// measured pace allows: after a full commit, the target goes up to the biggest size that
// commit's pace says would still take under 10 s (at least one step). A push whose first
// batch at the ceiling is light (LFS pointers and small regular files: the Hub's cost is
// per file and per inline byte) starts at the ceiling: a commit that proves slow steps down.
class CommitSizer {
public:
  static constexpr std::array<std::size_t, 10> k_scale = {20, 50, 75, 100, 125, 200, 250, 400, 600, 1000};
  static constexpr std::size_t k_initial_index = 6;
  static constexpr std::chrono::seconds k_target_duration{40};
  static constexpr std::chrono::seconds k_fast_duration{10};
  // Regular (non-LFS) files travel base64 inside the commit request: at most this many of
  // their bytes per commit.
  static constexpr std::uint64_t k_regular_bytes_budget = 100ull * 1024 * 1024;
  // A first batch at the ceiling with no more inline bytes than this starts there.
  static constexpr std::uint64_t k_light_regular_bytes = 16ull * 1024 * 1024;

  std::size_t target() const { return k_scale[m_index]; }
  // Before the first commit of a push: starts at the ceiling when the units from the
  // start make a light batch there. Nothing changes once a commit was measured.
  void plan_first(const std::vector<UnitSize>& units);
  void succeeded(std::chrono::steady_clock::duration took, std::size_t files, bool was_full);
  void failed();

private:
  std::size_t m_index = k_initial_index;
  bool m_measured = false;
};

// The end (exclusive) of the batch starting at `begin`: whole units, as many as fit
// `target_files` and `byte_budget`, and at least one.
std::size_t next_batch_end(const std::vector<UnitSize>& units, std::size_t begin, std::size_t target_files,
                           std::uint64_t byte_budget = CommitSizer::k_regular_bytes_budget);

// What the Hub's commit-rate 429 says: "...repository commits (128 per hour). You can
// retry this action in about 1 hour...". `quota` is "128 commits per hour" (empty if not
// said); `retry_after` from the Retry-After header, else the "in about N unit" text.
struct CommitQuotaAnswer {
  std::string quota;
  std::chrono::seconds retry_after{3600};
};
// nullopt when a 429's text is not about the commit rate (then it is the api quota).
std::optional<CommitQuotaAnswer> parse_commit_quota_answer(std::string_view message, std::optional<long> retry_after);

} // namespace hubcache::storage
