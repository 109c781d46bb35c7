#include <hubcache/http/rate_limit.hpp>

#include <doctest/doctest.h>

using namespace hubcache::http;

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
  CHECK(pacer.acquire("http://h", "resolvers").count() == 0); // nothing known: goes
  pacer.settle("http://h", "resolvers",
               quota_headers("\"resolvers\";r=1;t=1", "\"fixed window\";\"resolvers\";q=2;w=1"));
  CHECK(pacer.acquire("http://h", "resolvers").count() == 0); // one left
  pacer.settle("http://h", "resolvers",
               quota_headers("\"resolvers\";r=0;t=1", "\"fixed window\";\"resolvers\";q=2;w=1"));
  std::chrono::milliseconds waited{0};
  pacer.on_wait([&](const std::string& bucket, std::chrono::milliseconds wait) {
    CHECK(bucket == "resolvers");
    waited += wait;
  });
  auto held = pacer.acquire("http://h", "resolvers"); // spent: waits for the reset
  CHECK(held.count() >= 900);
  CHECK(waited == held);
  CHECK(pacer.acquire("http://other", "resolvers").count() == 0);
}

TEST_CASE("the pacer opens a window with what its first answer leaves, and a 429's reset wins over a longer one")
{
  RateLimitPacer pacer;
  CHECK(pacer.acquire("http://h", "api").count() == 0);
  // The first answer of a run: 998 left in a 300 s window. The next request goes at once.
  pacer.settle("http://h", "api", quota_headers("\"api\";r=998;t=300", "\"fixed window\";\"api\";q=1000;w=300"));
  CHECK(pacer.acquire("http://h", "api").count() == 0);
  // A 429 says the quota is spent until a reset 1 s away: the pacer waits about 1 s, not
  // the 300 s the first answer announced.
  pacer.settle("http://h", "api", quota_headers("\"api\";r=0;t=1", "\"fixed window\";\"api\";q=1000;w=300"));
  auto held = pacer.acquire("http://h", "api");
  CHECK(held.count() >= 900);
  CHECK(held.count() < 5000);
}
