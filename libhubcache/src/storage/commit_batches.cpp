#include "hubcache/storage/commit_batches.hpp"

#include <algorithm>
#include <regex>

namespace hubcache::storage {

void CommitSizer::plan_first(const std::vector<UnitSize>& units)
{
  if (m_measured) {
    return;
  }
  const auto ceiling = k_scale.size() - 1;
  const auto end = next_batch_end(units, 0, k_scale[ceiling]);
  std::uint64_t regular_bytes = 0;
  for (std::size_t u = 0; u < end; ++u) {
    regular_bytes += units[u].regular_bytes;
  }
  m_index = regular_bytes <= k_light_regular_bytes ? ceiling : k_initial_index;
}

void CommitSizer::succeeded(std::chrono::steady_clock::duration took, std::size_t files, bool was_full)
{
  m_measured = true;
  if (took > k_target_duration) {
    failed();
    return;
  }
  if (!was_full || m_index + 1 >= k_scale.size()) {
    return;
  }
  // What a commit of `size` files would take at this commit's pace.
  const auto predicted = [&](std::size_t size) {
    return took * static_cast<long>(size) / std::max<long>(1, static_cast<long>(files));
  };
  auto index = m_index + 1;
  while (index + 1 < k_scale.size() && predicted(k_scale[index + 1]) < k_fast_duration) {
    ++index;
  }
  m_index = index;
}

void CommitSizer::failed()
{
  m_measured = true;
  if (m_index > 0) {
    --m_index;
  }
}

std::size_t next_batch_end(const std::vector<UnitSize>& units, std::size_t begin, std::size_t target_files,
                           std::uint64_t byte_budget)
{
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  auto end = begin;
  while (end < units.size()) {
    const auto& unit = units[end];
    if (end > begin && (files + unit.files > target_files || bytes + unit.regular_bytes > byte_budget)) {
      break;
    }
    files += unit.files;
    bytes += unit.regular_bytes;
    ++end;
  }
  return end;
}

std::optional<CommitQuotaAnswer> parse_commit_quota_answer(std::string_view message, std::optional<long> retry_after)
{
  const std::string text(message.substr(0, 4096));
  if (text.find("repository commits") == std::string::npos && text.find("action: commit") == std::string::npos) {
    return std::nullopt;
  }
  CommitQuotaAnswer answer;
  std::smatch match;
  if (std::regex_search(text, match, std::regex(R"(\((\d{1,9}) per ([a-z0-9 ]+)\))"))) {
    answer.quota = match[1].str() + " commits per " + match[2].str();
  }
  if (retry_after && *retry_after >= 0) {
    answer.retry_after = std::chrono::seconds(*retry_after);
  } else if (std::regex_search(text, match, std::regex(R"(in about (\d{1,6}) (hour|minute|second)s?)"))) {
    const auto count = std::stol(match[1].str());
    const auto unit = match[2].str();
    answer.retry_after = std::chrono::seconds(count * (unit == "hour" ? 3600 : unit == "minute" ? 60 : 1));
  }
  return answer;
}

} // namespace hubcache::storage
