#include "limits.hpp"
#include "commit_tree.hpp"

#include <algorithm>
#include <set>
#include <thread>

namespace testhub {

namespace {

std::int64_t now_seconds()
{
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// "5 minutes", "1 hour", "10 seconds": how the Hub's messages name a span.
std::string span_text(std::int64_t seconds)
{
  if (seconds % 3600 == 0)
    return seconds == 3600 ? "1 hour" : std::to_string(seconds / 3600) + " hours";
  if (seconds % 60 == 0)
    return seconds == 60 ? "1 minute" : std::to_string(seconds / 60) + " minutes";
  return seconds == 1 ? "1 second" : std::to_string(seconds) + " seconds";
}

// "about 1 hour", "about 14 minutes", "about 20 seconds".
std::string about(std::int64_t seconds)
{
  if (seconds >= 3000)
    return "about " + span_text(std::max<std::int64_t>(1, (seconds + 1800) / 3600) * 3600);
  if (seconds >= 90)
    return "about " + span_text((seconds + 30) / 60 * 60);
  return "about " + span_text(std::max<std::int64_t>(1, seconds));
}

} // namespace

std::optional<Quota> plan_quota(const std::string& plan)
{
  static const std::map<std::string, Quota> plans = {
    {"anonymous", {500, 3000}},  {"free", {1000, 5000}},        {"pro", {2500, 12000}},
    {"team", {3000, 20000}},     {"enterprise", {6000, 50000}}, {"enterprise-plus", {10000, 100000}},
    {"academia", {3000, 20000}}, {"unlimited", {0, 0}},
  };
  const auto it = plans.find(plan);
  if (it == plans.end())
    return std::nullopt;
  return it->second;
}

std::optional<std::string> quota_bucket(const std::string& route)
{
  if (route == "resolve" || route == "raw")
    return "resolvers";
  static const std::set<std::string> uncounted = {"control", "lfs_upload", "lfs_part", "lfs_complete",
                                                  "lfs_cdn", "lfs_verify", "unknown"};
  // The Xet CAS is another host on the real Hub, outside the Hub's API quotas.
  if (uncounted.count(route) || route.rfind("cas_", 0) == 0)
    return std::nullopt;
  return "api";
}

Limits::Admission Limits::admit(const std::string& principal, const Quota& plan, const std::string& bucket,
                                bool json_body)
{
  Admission admission;
  if (!m_options.quotas)
    return admission;
  auto quota = bucket == "api" ? plan.api : plan.resolvers;
  if (bucket == "api" && m_options.override_api)
    quota = *m_options.override_api;
  if (bucket == "resolvers" && m_options.override_resolvers)
    quota = *m_options.override_resolvers;
  if (quota == 0)
    return admission;
  const auto window = m_options.quota_window.count();
  const auto now = now_seconds();
  const auto start = now - now % window;
  std::uint64_t remaining = 0;
  {
    std::lock_guard lock(m_mutex);
    auto& state = m_windows[principal + "\n" + bucket];
    if (state.start != start)
      state = {start, 0};
    if (state.used < quota) {
      ++state.used;
      remaining = quota - state.used;
    } else {
      admission.refused.emplace();
    }
  }
  const auto reset = std::to_string(start + window - now);
  admission.headers.emplace_back("RateLimit", "\"" + bucket + "\";r=" + std::to_string(remaining) + ";t=" + reset);
  admission.headers.emplace_back("RateLimit-Policy", "\"fixed window\";\"" + bucket + "\";q=" + std::to_string(quota)
                                                       + ";w=" + std::to_string(window));
  if (admission.refused) {
    *admission.refused = error_reply(
      429,
      "We had to rate limit you, you hit the quota of " + std::to_string(quota) + " " + bucket + " requests per "
        + span_text(window)
        + " period. Upgrade to a PRO user or Team/Enterprise organization account (https://hf.co/pricing) to get "
          "higher limits. See https://huggingface.co/docs/hub/rate-limits",
      json_body);
    admission.refused->header("Retry-After", reset);
  }
  return admission;
}

std::optional<Reply> Limits::refuse_commit(const std::string& repo_uid)
{
  if (m_options.commits_per_window == 0)
    return std::nullopt;
  const auto now = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point oldest;
  {
    std::lock_guard lock(m_mutex);
    auto& times = m_commits[repo_uid];
    while (!times.empty() && times.front() + m_options.commit_window <= now)
      times.pop_front();
    if (times.size() < m_options.commits_per_window)
      return std::nullopt;
    oldest = times.front();
  }
  const auto wait =
    std::chrono::duration_cast<std::chrono::seconds>(oldest + m_options.commit_window - now).count() + 1;
  const auto window = m_options.commit_window.count();
  auto reply = error_reply(
    429, "You have exceeded the rate limit for repository commits (" + std::to_string(m_options.commits_per_window)
           + " per " + (window == 3600 ? std::string("hour") : span_text(window)) + "). You can retry this action in "
           + about(wait)
           + ". To reduce the number of commits, you can upload entire folders at once using the Hub Python library: "
             "https://huggingface.co/docs/huggingface_hub/guides/upload#upload-a-folder");
  reply.header("Retry-After", std::to_string(wait));
  return reply;
}

void Limits::record_commit(const std::string& repo_uid)
{
  if (m_options.commits_per_window == 0)
    return;
  std::lock_guard lock(m_mutex);
  m_commits[repo_uid].push_back(std::chrono::steady_clock::now());
}

void Limits::check_commit_size(std::size_t operations) const
{
  if (m_options.files_per_commit > 0 && operations > m_options.files_per_commit)
    throw HubError(400, "Your push was rejected because it contains too many files (" + std::to_string(operations)
                          + "). A commit can contain at most " + std::to_string(m_options.files_per_commit)
                          + " files: split it into several commits.");
}

void Limits::simulate_commit_work(std::size_t operations) const
{
  if (m_options.commit_cost_per_file.count() > 0)
    std::this_thread::sleep_for(m_options.commit_cost_per_file * static_cast<std::int64_t>(operations));
}

void Limits::check_tree(const Commit& next, const Storage::TreeChange& change, const std::string& branch) const
{
  if (m_options.entries_per_folder > 0) {
    // Only the folders this commit adds to: a folder already past the limit stays readable.
    std::set<std::string> grown;
    for (const auto& path : change.new_paths) {
      for (auto folder = parent_dir(path);; folder = parent_dir(folder)) {
        if (!grown.insert(folder).second || folder.empty())
          break;
      }
    }
    std::string offending;
    for (const auto& folder : grown) {
      if (count_children(next.files, folder) > m_options.entries_per_folder)
        offending += (offending.empty() ? "" : " ") + std::string("/") + folder + (folder.empty() ? "" : "/");
    }
    if (!offending.empty())
      throw HubError(400, "Your push was rejected because it contains too many files per directory. Each directory "
                          "in your git repo can only contain up to "
                            + std::to_string(m_options.entries_per_folder) + " files. Offending reference: refs/heads/"
                            + branch + " Offending directories: " + offending);
  }
  if (m_options.refuse_past_repo_files && m_options.repo_files > 0 && next.files.size() > m_options.repo_files
      && next.files.size() > change.parent_file_count)
    throw HubError(400, "Your push was rejected because the repository would hold " + std::to_string(next.files.size())
                          + " files, more than the " + std::to_string(m_options.repo_files)
                          + " allowed per repository.");
}

std::optional<std::string> Limits::repo_files_warning(const Commit& next) const
{
  if (m_options.repo_files == 0 || next.files.size() <= m_options.repo_files)
    return std::nullopt;
  return "299 - \"This repository holds " + std::to_string(next.files.size()) + " files; the Hub recommends fewer than "
         + std::to_string(m_options.repo_files)
         + " files per repository (https://huggingface.co/docs/hub/storage-limits)\"";
}

} // namespace testhub
