#include "hubcache/http/rate_limit.hpp"

#include <algorithm>
#include <charconv>
#include <thread>

namespace hubcache::http {

namespace {

// Past a reset, the wait goes on a little: the Hub rounds `t` to whole seconds.
constexpr auto k_reset_margin = std::chrono::milliseconds(100);
// A window's end seen within this of the known one is the same window.
constexpr auto k_same_window = std::chrono::milliseconds(1500);

// The number of parameter `key` in a structured-field item: `;`, spaces, key, spaces, `=`,
// spaces, digits (the regexes huggingface_hub uses: `"api" ; r = 0 ; t = 5` is valid).
std::optional<long> number_after(std::string_view text, std::string_view key)
{
  for (auto at = text.find(';'); at != std::string_view::npos; at = text.find(';', at + 1)) {
    auto rest = text.substr(at + 1);
    auto skip = [&rest] {
      while (!rest.empty() && rest.front() == ' ') {
        rest.remove_prefix(1);
      }
    };
    skip();
    if (!rest.starts_with(key)) {
      continue;
    }
    rest.remove_prefix(key.size());
    skip();
    if (rest.empty() || rest.front() != '=') {
      continue;
    }
    rest.remove_prefix(1);
    skip();
    long value = 0;
    auto [end, error] = std::from_chars(rest.data(), rest.data() + std::min<std::size_t>(rest.size(), 12), value);
    if (error == std::errc() && end != rest.data() && value >= 0) {
      return value;
    }
  }
  return std::nullopt;
}

// The first quoted token of a structured-field list: "api" in `"api";r=1;t=2`.
std::string first_token(std::string_view text)
{
  auto open = text.find('"');
  auto close = open == std::string_view::npos ? open : text.find('"', open + 1);
  if (close == std::string_view::npos || close - open > 32) {
    return {};
  }
  return std::string(text.substr(open + 1, close - open - 1));
}

} // namespace

std::optional<RateLimitInfo> parse_rate_limit(const Headers& headers)
{
  auto limit = headers.get("ratelimit");
  if (!limit || limit->size() > 1024) {
    return std::nullopt;
  }
  RateLimitInfo info;
  info.bucket = first_token(*limit);
  auto remaining = number_after(*limit, "r");
  auto reset = number_after(*limit, "t");
  if (info.bucket.empty() || !remaining || !reset) {
    return std::nullopt;
  }
  info.remaining = *remaining;
  info.reset_seconds = *reset;
  if (auto policy = headers.get("ratelimit-policy"); policy && policy->size() <= 1024) {
    info.quota = number_after(*policy, "q");
    info.window = number_after(*policy, "w");
  }
  return info;
}

std::string rate_limit_bucket(std::string_view url)
{
  auto scheme = url.find("://");
  auto path_start = scheme == std::string_view::npos ? std::string_view::npos : url.find('/', scheme + 3);
  if (path_start == std::string_view::npos) {
    return {};
  }
  auto path = url.substr(path_start, url.find('?', path_start) - path_start);
  if (path.starts_with("/api/")) {
    return "api";
  }
  if (path.ends_with(".git/info/lfs/objects/batch")) {
    return "api";
  }
  if (path.find("/resolve/") != std::string_view::npos || path.find("/raw/") != std::string_view::npos) {
    return "resolvers";
  }
  return {};
}

long RateLimitPacer::reserve_of(long quota)
{
  return std::clamp(quota / 32, 0L, 16L); // none for a quota too small to spare one
}

RateLimitPacer::Grant RateLimitPacer::acquire(const std::string& origin, const std::string& bucket)
{
  auto key = origin + ' ' + bucket;
  Grant grant;
  std::unique_lock lock(m_mutex);
  for (;;) {
    auto& window = m_windows[key];
    if (!window.known) {
      // Nothing known of this quota: the answer will tell, and what it leaves is less what
      // went out before it (a pull's first requests go out together).
      ++window.in_flight;
      return grant;
    }
    auto now = Clock::now();
    if (now >= window.resets_at) {
      // A new window: its quota is whole again (or, when not announced, one request
      // learns it).
      window.remaining = window.quota ? *window.quota - window.in_flight : 1;
      window.resets_at = now + std::chrono::seconds(window.window_seconds.value_or(1));
      ++window.number;
    }
    if (window.remaining > (window.quota ? reserve_of(*window.quota) : 0)) {
      --window.remaining;
      ++window.in_flight;
      grant.window = window.number;
      return grant;
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(window.resets_at - now) + k_reset_margin;
    auto observer = m_observer;
    lock.unlock();
    if (observer) {
      observer(bucket, wait);
    }
    std::this_thread::sleep_for(wait);
    grant.waited += wait;
    lock.lock();
  }
}

void RateLimitPacer::settle(const std::string& origin, const std::string& bucket, const Headers& headers,
                            std::optional<std::uint64_t> sent_in)
{
  auto info = parse_rate_limit(headers);
  std::lock_guard lock(m_mutex);
  auto key = origin + ' ' + bucket;
  auto it = m_windows.find(key);
  if (it != m_windows.end() && it->second.in_flight > 0) {
    --it->second.in_flight;
  }
  if (!info || info->bucket != bucket) {
    return;
  }
  auto now = Clock::now();
  auto resets_at = now + std::chrono::seconds(info->reset_seconds);
  if (it == m_windows.end()) {
    it = m_windows.emplace(key, Window{}).first;
  }
  auto& window = it->second;
  const bool first_answer = !window.known;
  window.known = true;
  window.quota = info->quota ? info->quota : window.quota;
  window.window_seconds = info->window ? info->window : window.window_seconds;
  // What the server has not counted yet (requests still in flight) will be counted.
  auto left = info->remaining - window.in_flight;
  auto gap = resets_at > window.resets_at ? resets_at - window.resets_at : window.resets_at - resets_at;
  if (first_answer || (gap > k_same_window && resets_at > window.resets_at)) {
    window.resets_at = resets_at; // a newer window than we knew
    window.remaining = left;
    window.number += first_answer ? 0 : 1;
  } else if (sent_in && *sent_in < window.number && gap > k_same_window) {
    // Sent before the window the pacer is in began, and counted in an earlier one: its
    // `r` (0 for the last request of that window) is not what this window has left.
    return;
  } else if (info->remaining == 0) {
    // Spent, and reset sooner than we thought (a 429's own `t`): wait for that reset only,
    // never for the longer window an earlier answer announced.
    window.resets_at = std::min(window.resets_at, resets_at);
    window.remaining = 0;
  } else {
    window.remaining = std::min(window.remaining, left); // answers of one window may arrive out of order
  }
}

void RateLimitPacer::release(const std::string& origin, const std::string& bucket)
{
  std::lock_guard lock(m_mutex);
  auto it = m_windows.find(origin + ' ' + bucket);
  if (it != m_windows.end() && it->second.in_flight > 0) {
    --it->second.in_flight;
  }
}

void RateLimitPacer::on_wait(std::function<void(const std::string&, std::chrono::milliseconds)> observer)
{
  std::lock_guard lock(m_mutex);
  m_observer = std::move(observer);
}

RateLimitPacer& rate_limit_pacer()
{
  static RateLimitPacer pacer;
  return pacer;
}

RateLimitTicket::RateLimitTicket(std::string_view url) : m_bucket(rate_limit_bucket(url))
{
  if (m_bucket.empty()) {
    return;
  }
  m_origin = url_origin(url);
  m_window = rate_limit_pacer().acquire(m_origin, m_bucket).window;
  m_open = true;
}

RateLimitTicket::~RateLimitTicket()
{
  if (m_open) {
    rate_limit_pacer().release(m_origin, m_bucket);
  }
}

void RateLimitTicket::settle(const Headers& headers)
{
  if (m_open) {
    m_open = false;
    rate_limit_pacer().settle(m_origin, m_bucket, headers, m_window);
  }
}

} // namespace hubcache::http
