#include <hubcache/util/recent_answer.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <optional>

using hubcache::util::RecentAnswer;

TEST_SUITE_BEGIN("hubcache::util");

TEST_CASE("a recent answer serves the calls made within its while, and is asked again after")
{
  int asked = 0;
  const auto fetch = [&asked] { return ++asked; };
  const auto always = [](int) { return true; };
  RecentAnswer<int> answer(std::chrono::hours(1));
  CHECK(answer.get(fetch, always) == 1);
  CHECK(answer.get(fetch, always) == 1);
  CHECK(asked == 1);
  answer.forget(); // a change of one's own
  CHECK(answer.get(fetch, always) == 2);

  RecentAnswer<int> short_lived(std::chrono::nanoseconds(0));
  CHECK(short_lived.get(fetch, always) == 3);
  CHECK(short_lived.get(fetch, always) == 4);
}

TEST_CASE("an answer the caller does not keep is asked again")
{
  int asked = 0;
  RecentAnswer<std::optional<int>> answer(std::chrono::hours(1));
  const auto missing = [&asked] {
    ++asked;
    return std::optional<int>();
  };
  const auto present = [](const std::optional<int>& value) { return value.has_value(); };
  CHECK_FALSE(answer.get(missing, present).has_value());
  CHECK_FALSE(answer.get(missing, present).has_value());
  CHECK(asked == 2);
}

TEST_SUITE_END();
