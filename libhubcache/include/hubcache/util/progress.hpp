#pragma once

#include <cstdint>
#include <functional>

namespace hubcache::util {

// Progress of a long operation: bytes done, bytes total.
using ProgressCallback = std::function<void(std::uint64_t done, std::uint64_t total)>;

} // namespace hubcache::util
