#pragma once

#include <cstddef>
#include <functional>

namespace hubcache::util {

// Runs task(0..count-1) on up to `workers` threads (inline when one suffices). The first
// exception stops further tasks from starting and is rethrown once every thread is done.
void parallel_for(std::size_t count, std::size_t workers, const std::function<void(std::size_t)>& task);

} // namespace hubcache::util
