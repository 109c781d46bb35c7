#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hubcache::util {

// `text` without leading and trailing whitespace (header values, token files, config files).
std::string_view trim(std::string_view text);

// Splits a command line the way a POSIX shell splits words (quotes, backslashes), with
// no expansion. Throws InvalidArgument on an unterminated quote.
std::vector<std::string> split_command_line(std::string_view text);
// Quotes an argument for display so that split_command_line gives it back.
std::string quote_argument(std::string_view argument);

} // namespace hubcache::util
