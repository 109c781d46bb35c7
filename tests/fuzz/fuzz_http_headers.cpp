// Headers the Hub (or anything between us and it) sends back: Retry-After, RateLimit and
// Link (tree pagination), and the retry wait computed from them. Input: the three values,
// one per line. Properties: the wait is never negative nor above the cap, whatever the
// numbers; a Link target is text between '<' and '>' of the header.
#include "fuzz_support.hpp"

#include <hubcache/http/client.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  auto parts = fuzz::fields(fuzz::text_of(data, size), 3);
  auto retry_after = parts[0];
  auto ratelimit = parts[1];
  auto link = parts[2];

  if (auto seconds = hubcache::http::parse_retry_after(retry_after)) {
    FUZZ_CHECK(*seconds >= 0, "a negative Retry-After");
  }
  if (auto reset = hubcache::http::parse_ratelimit_reset(ratelimit)) {
    FUZZ_CHECK(*reset >= 0, "a negative RateLimit reset");
  }
  hubcache::http::RetryPolicy policy;
  for (long status : {429L, 503L}) {
    hubcache::http::Response response;
    response.status = status;
    response.headers.add("Retry-After", std::string(retry_after));
    response.headers.add("RateLimit", std::string(ratelimit));
    for (int attempt = 1; attempt < policy.max_attempts; ++attempt) {
      auto delay = policy.delay_after(attempt, &response);
      FUZZ_CHECK(delay.has_value(), "a retryable answer was not retried");
      FUZZ_CHECK(delay->count() >= 0, "a negative wait");
      FUZZ_CHECK(*delay <= std::max(policy.server_wait_cap, policy.cap), "a wait above the cap");
    }
  }

  if (auto next = hubcache::http::parse_link_next(link)) {
    FUZZ_CHECK(link.find("<" + *next + ">") != std::string_view::npos, "a Link target that is not in the header");
    auto base = std::string("https://huggingface.co/api/models/org/model/tree/main?recursive=true");
    auto url = hubcache::http::resolve_location(base, *next);
    // HubApi sends the token to a next page only on the endpoint's origin: a relative
    // target must stay there.
    if (!next->starts_with("//") && next->find("://") == std::string::npos) {
      FUZZ_CHECK(hubcache::http::url_origin(url) == hubcache::http::url_origin(base),
                 "a relative Link target leaves the origin: " + url);
    }
  }
  return 0;
}
