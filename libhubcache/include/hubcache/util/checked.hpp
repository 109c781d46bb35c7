#pragma once

#include <cstdint>
#include <limits>

namespace hubcache::util {

// a + b, or the largest value when the sum would wrap: sizes from a listing are the
// server's word, and a sum that wraps to a small number would slip past a size guard.
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) noexcept
{
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::uint64_t>::max() : sum;
}

} // namespace hubcache::util
