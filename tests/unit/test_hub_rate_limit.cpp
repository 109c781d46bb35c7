#include <hubcache/http/rate_limit.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

using namespace hubcache::http;

namespace hub_rate_limit_test {

namespace {
Headers quota_headers(const std::string& limit, const std::string& policy)
{
  Headers headers;
  headers.add("RateLimit", limit);
  headers.add("RateLimit-Policy", policy);
  return headers;
}
} // namespace

TEST_CASE("the Hub's RateLimit headers are read as huggingface_hub reads them")
{
  auto info = parse_rate_limit(quota_headers("\"api\";r=497;t=229", "\"fixed window\";\"api\";q=500;w=300"));
  REQUIRE(info);
  CHECK(info->bucket == "api");
  CHECK(info->remaining == 497);
  CHECK(info->reset_seconds == 229);
  CHECK(info->quota == 500);
  CHECK(info->window == 300);
  info = parse_rate_limit(quota_headers("\"resolvers\" ; r = 0 ; t = 5", ""));
  REQUIRE(info);
  CHECK(info->remaining == 0);
  CHECK(!info->quota);
  CHECK(!parse_rate_limit(quota_headers("api;r=1", "")));
  CHECK(!parse_rate_limit(quota_headers("\"api\";r=-1;t=3", "")));
  CHECK(!parse_rate_limit(Headers()));
}

TEST_CASE("requests draw from the quota the Hub counts them in")
{
  CHECK(rate_limit_bucket("https://huggingface.co/api/models/a/b/tree/main") == "api");
  CHECK(rate_limit_bucket("https://huggingface.co/a/b.git/info/lfs/objects/batch") == "api");
  CHECK(rate_limit_bucket("https://huggingface.co/a/b/resolve/main/x?download=1") == "resolvers");
  CHECK(rate_limit_bucket("http://127.0.0.1:1/_lfs/upload/a/b/0123") == "");
  CHECK(rate_limit_bucket("https://bucket.s3.amazonaws.com/api/x") == "api"); // paced only if it sends the headers
  CHECK(rate_limit_bucket("not a url") == "");
}

TEST_CASE("the pacer holds a spent window until it resets, and never an unknown one")
{
  RateLimitPacer pacer;
  CHECK(pacer.acquire("http://h", "resolvers").waited.count() == 0); // nothing known: goes
  pacer.settle("http://h", "resolvers",
               quota_headers("\"resolvers\";r=1;t=1", "\"fixed window\";\"resolvers\";q=2;w=1"));
  CHECK(pacer.acquire("http://h", "resolvers").waited.count() == 0); // one left
  pacer.settle("http://h", "resolvers",
               quota_headers("\"resolvers\";r=0;t=1", "\"fixed window\";\"resolvers\";q=2;w=1"));
  std::chrono::milliseconds waited{0};
  pacer.on_wait([&](const std::string& bucket, std::chrono::milliseconds wait) {
    CHECK(bucket == "resolvers");
    waited += wait;
  });
  auto held = pacer.acquire("http://h", "resolvers").waited; // spent: waits for the reset
  CHECK(held.count() >= 900);
  CHECK(waited == held);
  CHECK(pacer.acquire("http://other", "resolvers").waited.count() == 0);
}

TEST_CASE("the pacer opens a window with what its first answer leaves, and a 429's reset wins over a longer one")
{
  RateLimitPacer pacer;
  CHECK(pacer.acquire("http://h", "api").waited.count() == 0);
  // The first answer of a run: 998 left in a 300 s window. The next request goes at once.
  pacer.settle("http://h", "api", quota_headers("\"api\";r=998;t=300", "\"fixed window\";\"api\";q=1000;w=300"));
  CHECK(pacer.acquire("http://h", "api").waited.count() == 0);
  // A 429 says the quota is spent until a reset 1 s away: the pacer waits about 1 s, not
  // the 300 s the first answer announced.
  pacer.settle("http://h", "api", quota_headers("\"api\";r=0;t=1", "\"fixed window\";\"api\";q=1000;w=300"));
  auto held = pacer.acquire("http://h", "api").waited;
  CHECK(held.count() >= 900);
  CHECK(held.count() < 5000);
}

TEST_CASE("the pacer keeps a small reserve at a window's end")
{
  CHECK(RateLimitPacer::reserve_of(2) == 0);
  CHECK(RateLimitPacer::reserve_of(40) == 1);
  CHECK(RateLimitPacer::reserve_of(300) == 9);
  CHECK(RateLimitPacer::reserve_of(100000) == 16);
  RateLimitPacer pacer;
  const auto policy = "\"fixed window\";\"resolvers\";q=40;w=1";
  pacer.settle("http://h", "resolvers", quota_headers("\"resolvers\";r=3;t=1", policy));
  CHECK(pacer.acquire("http://h", "resolvers").waited.count() == 0); // 2 left
  CHECK(pacer.acquire("http://h", "resolvers").waited.count() == 0); // 1 left: the reserve
  // The last request of the window is not sent at its edge: it waits for the next window.
  CHECK(pacer.acquire("http://h", "resolvers").waited.count() >= 900);
}

TEST_CASE("a late answer from the window before does not end the window the pacer is in")
{
  RateLimitPacer pacer;
  const auto policy = "\"fixed window\";\"resolvers\";q=300;w=10";
  pacer.settle("http://h", "resolvers", quota_headers("\"resolvers\";r=20;t=1", policy));
  auto first = pacer.acquire("http://h", "resolvers");
  auto second = pacer.acquire("http://h", "resolvers");
  CHECK(first.window == second.window);
  // The first request lands in the next window (the Hub reset): 290 left there, 10 s to go.
  pacer.settle("http://h", "resolvers", quota_headers("\"resolvers\";r=290;t=10", policy), first.window);
  // The second was counted in the window before, as its last request (r=0, reset in 1 s):
  // that window is over, the current one still has 289 left.
  pacer.settle("http://h", "resolvers", quota_headers("\"resolvers\";r=0;t=1", policy), second.window);
  auto next = pacer.acquire("http://h", "resolvers");
  CHECK(next.waited.count() == 0);
  CHECK(next.window > first.window);
  // A 429 in the current window still holds it until its reset.
  pacer.settle("http://h", "resolvers", quota_headers("\"resolvers\";r=0;t=1", policy), next.window);
  CHECK(pacer.acquire("http://h", "resolvers").waited.count() >= 900);
}

TEST_CASE("what the first answer leaves is less the requests that went out before it")
{
  RateLimitPacer pacer;
  for (int i = 0; i < 5; ++i) // nothing known yet: a pull's first requests go out together
    CHECK(pacer.acquire("http://h", "resolvers").waited.count() == 0);
  // The first answer leaves 10, and four requests are still out: 6 may go, 1 is the reserve.
  pacer.settle("http://h", "resolvers",
               quota_headers("\"resolvers\";r=10;t=1", "\"fixed window\";\"resolvers\";q=40;w=1"));
  for (int i = 0; i < 5; ++i)
    CHECK(pacer.acquire("http://h", "resolvers").waited.count() == 0);
  CHECK(pacer.acquire("http://h", "resolvers").waited.count() >= 500);
}

} // namespace hub_rate_limit_test
