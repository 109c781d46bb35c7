#pragma once

#include <string_view>

namespace hubcache::util {

// `text` without leading and trailing whitespace (header values, token files, config files).
std::string_view trim(std::string_view text);

} // namespace hubcache::util
