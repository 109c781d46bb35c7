#include <hubcache/storage/commit_batches.hpp>

#include <doctest/doctest.h>

using namespace hubcache::storage;

TEST_CASE("the commit sizer starts at 250 files and adapts to how long commits take")
{
  CommitSizer sizer;
  CHECK(sizer.target() == 250);
  sizer.succeeded(std::chrono::seconds(5), 250, true); // 400 files would take 8 s: a step, not more
  CHECK(sizer.target() == 400);
  sizer.succeeded(std::chrono::seconds(2), 400, false); // not full: no step up
  CHECK(sizer.target() == 400);
  sizer.succeeded(std::chrono::seconds(41), 400, true); // too slow: a step down
  CHECK(sizer.target() == 250);
  sizer.succeeded(std::chrono::seconds(30), 250, true); // full and under 40 s: at least one step
  CHECK(sizer.target() == 400);
  for (int i = 0; i < 20; ++i) {
    sizer.failed();
  }
  CHECK(sizer.target() == 20);
}

TEST_CASE("the commit sizer grows as far as the measured pace keeps commits under 10 s")
{
  CommitSizer sizer;
  sizer.succeeded(std::chrono::milliseconds(500), 250, true); // 1000 files: 2 s
  CHECK(sizer.target() == 1000);
  sizer.succeeded(std::chrono::milliseconds(500), 1000, true); // the ceiling holds
  CHECK(sizer.target() == 1000);
  CommitSizer slower;
  slower.succeeded(std::chrono::seconds(4), 250, true); // 400: 6.4 s, 600: 9.6 s, 1000: 16 s
  CHECK(slower.target() == 600);
}

TEST_CASE("a push whose first batch is light starts at the ceiling, a heavy one at 250")
{
  std::vector<UnitSize> light(500, UnitSize{4, 2000}); // 250 entries at the ceiling: 500 KB inline
  CommitSizer sizer;
  sizer.plan_first(light);
  CHECK(sizer.target() == 1000);
  sizer.succeeded(std::chrono::seconds(50), 1000, true); // slow: steps down, and stays measured
  CHECK(sizer.target() == 600);
  sizer.plan_first(light);
  CHECK(sizer.target() == 600);
  std::vector<UnitSize> heavy(500, UnitSize{4, 1 << 20}); // 4 MB inline per entry
  CommitSizer careful;
  careful.plan_first(heavy);
  CHECK(careful.target() == 250);
}

TEST_CASE("batches are whole units within the file target and the regular-bytes budget")
{
  std::vector<UnitSize> units = {{4, 10}, {4, 10}, {4, 10}, {300, 0}, {1, 90}, {1, 5}};
  CHECK(next_batch_end(units, 0, 8) == 2);
  CHECK(next_batch_end(units, 2, 8) == 3);
  CHECK(next_batch_end(units, 3, 8) == 4);     // a unit bigger than the target goes alone, whole
  CHECK(next_batch_end(units, 4, 8, 94) == 5); // the byte budget closes the batch
  CHECK(next_batch_end(units, 4, 8, 95) == 6);
  CHECK(next_batch_end(units, 6, 8) == 6);
}

TEST_CASE("the Hub's commit-rate 429 is told from the api quota's")
{
  auto answer = parse_commit_quota_answer(
    "You have exceeded the rate limit for repository commits (128 per hour). You can retry this action in about 1 "
    "hour. To reduce the number of commits, you can upload entire folders at once",
    std::nullopt);
  REQUIRE(answer);
  CHECK(answer->quota == "128 commits per hour");
  CHECK(answer->retry_after == std::chrono::seconds(3600));
  answer = parse_commit_quota_answer("...repository commits (3 per 10 seconds). You can retry this action in about "
                                     "14 minutes.",
                                     std::nullopt);
  REQUIRE(answer);
  CHECK(answer->quota == "3 commits per 10 seconds");
  CHECK(answer->retry_after == std::chrono::seconds(14 * 60));
  CHECK(parse_commit_quota_answer("repository commits (128 per hour)", 42)->retry_after == std::chrono::seconds(42));
  CHECK(!parse_commit_quota_answer("We had to rate limit you, you hit the quota of 1000 api requests", 5));
}
