#pragma once

#include "hubcache/http/client.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

// Pacing on the Hub's quota headers (hub-buckets-and-limits.md §2.2): every answer says how
// many requests are left in its fixed window and when it resets,
//   RateLimit: "api";r=497;t=229   RateLimit-Policy: "fixed window";"api";q=500;w=300
// so a client that reads them can wait for the reset instead of running into 429s.
namespace hubcache::http {

struct RateLimitInfo {
  std::string bucket;         // "api", "resolvers", "pages"
  long remaining = 0;         // r
  long reset_seconds = 0;     // t
  std::optional<long> quota;  // q, from RateLimit-Policy
  std::optional<long> window; // w, from RateLimit-Policy
};

// The RateLimit (and RateLimit-Policy) headers of an answer; nullopt when absent or not
// understood.
std::optional<RateLimitInfo> parse_rate_limit(const Headers& headers);

// Which quota a request to `url` draws from, as the Hub counts: "resolvers" for /resolve/
// and /raw/, "api" for /api/ and the LFS batch endpoint, empty for the rest (LFS and CDN
// transfers, other services).
std::string rate_limit_bucket(std::string_view url);

// What every request to one origin and bucket may still send in the current window, learnt
// from the answers. Thread-safe; requests to an origin that never sent the headers are
// never held.
class RateLimitPacer {
public:
  using Clock = std::chrono::steady_clock;

  // What acquire gave: how long it waited, and which of the bucket's windows (as the pacer
  // counts them) the request was sent in.
  struct Grant {
    std::chrono::milliseconds waited{0};
    std::uint64_t window = 0;
  };

  // The requests left unspent at a window's end when its quota is known: the few that may
  // land on the other side of a reset the Hub tells only to the second (and that a
  // request in flight at the reset is counted in) find room there instead of a 429.
  static long reserve_of(long quota);

  // Before a request: waits while the bucket's window is known spent (down to its
  // reserve), then counts the request as in flight.
  Grant acquire(const std::string& origin, const std::string& bucket);
  // After the answer (its headers, possibly none) to a request sent in `sent_in`: learns
  // the window; ends the in-flight count. An answer counted in a window older than the
  // one the pacer has moved to (it arrived late) says nothing of the current one.
  void settle(const std::string& origin, const std::string& bucket, const Headers& headers,
              std::optional<std::uint64_t> sent_in = std::nullopt);
  // The request got no answer.
  void release(const std::string& origin, const std::string& bucket);

  // Called (outside the lock) when a request is about to wait for a window to reset.
  void on_wait(std::function<void(const std::string& bucket, std::chrono::milliseconds wait)> observer);

private:
  struct Window {
    bool known = false; // an answer told its quota (before: requests are only counted)
    Clock::time_point resets_at;
    long remaining = 0; // what may still be sent, in-flight requests deducted
    long in_flight = 0;
    std::optional<long> quota;
    std::optional<long> window_seconds;
    std::uint64_t number = 0; // goes up each time a newer window begins
  };
  std::mutex m_mutex;
  std::map<std::string, Window> m_windows; // origin + ' ' + bucket
  std::function<void(const std::string&, std::chrono::milliseconds)> m_observer;
};

// The process's pacer, which Client::perform goes through.
RateLimitPacer& rate_limit_pacer();

// Scoped use of the pacer for one request (Client::perform): acquire on construction,
// settle with the answer's headers, release when dropped unanswered.
class RateLimitTicket {
public:
  explicit RateLimitTicket(std::string_view url);
  ~RateLimitTicket();
  RateLimitTicket(const RateLimitTicket&) = delete;
  RateLimitTicket& operator=(const RateLimitTicket&) = delete;
  void settle(const Headers& headers);

private:
  std::string m_origin;
  std::string m_bucket;
  std::uint64_t m_window = 0;
  bool m_open = false;
};

} // namespace hubcache::http
