#include <hubcache/error.hpp>
#include <hubcache/util/thread_pool.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

using namespace hubcache;

TEST_CASE("parallel_for runs every task once and rethrows the first failure")
{
  std::vector<int> hits(100, 0);
  util::parallel_for(hits.size(), 4, [&](std::size_t i) { hits[i] += 1; });
  CHECK(std::all_of(hits.begin(), hits.end(), [](int n) { return n == 1; }));
  CHECK_THROWS_AS(util::parallel_for(10, 3,
                                     [](std::size_t i) {
                                       if (i == 5) {
                                         throw IoError("boom");
                                       }
                                     }),
                  IoError);
}
