#pragma once

#include <exception>
#include <string>

// What a failed transfer (pull, copy between stores) means for the rest of its run.
namespace hubcache::compilecache {

// A failure of a store itself (after the backend's retries) or a refusal (auth, no repo):
// nothing more will transfer, so a run stops instead of trying every other file.
bool stops_the_run(const std::exception_ptr& error);
std::string message_of(const std::exception_ptr& error);

} // namespace hubcache::compilecache
