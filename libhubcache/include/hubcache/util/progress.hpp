#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace hubcache::util {

// Progress of a long operation: bytes done, bytes total.
using ProgressCallback = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Progress of a transfer of many files. A total of 0 means "not known".
struct TransferProgress {
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;
  std::size_t files_done = 0;
  std::size_t files_total = 0;
};
// Called from one thread at a time (the library serializes the calls of its workers).
using TransferCallback = std::function<void(const TransferProgress&)>;

} // namespace hubcache::util
