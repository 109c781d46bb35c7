#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hubcache::util {

// `text` with control characters (ESC, CR, tabs, DEL...) and invalid UTF-8 bytes shown as
// \xHH escapes, and backslashes doubled, so what came from outside (a repo, a server) can
// neither drive the terminal nor pass for something else. Valid UTF-8 stays as it is.
std::string escape_control(std::string_view text);
// The same for one line of a message: at most the first `limit` bytes, "..." when cut
// (a server's answer quoted in an error).
std::string escape_control(std::string_view text, std::size_t limit);

// strerror(error) as a string: the one way messages name an errno.
std::string errno_text(int error);

// `text` without leading and trailing whitespace (header values, token files, config files).
std::string_view trim(std::string_view text);

// Splits a command line the way a POSIX shell splits words (quotes, backslashes), with
// no expansion. Throws InvalidArgument on an unterminated quote.
std::vector<std::string> split_command_line(std::string_view text);
// Quotes an argument for display so that split_command_line gives it back.
std::string quote_argument(std::string_view argument);

// A duration as people read it, the one format of every message: "0.42s" (below 10 s;
// "3s" when whole), "12s", "3m 05s", "1h 02m".
std::string human_duration(double seconds);

// "a, b, c": the words of any range of strings, with `separator` between them.
template <typename Words>
std::string join(const Words& words, std::string_view separator)
{
  std::string joined;
  for (const auto& word : words) {
    if (!joined.empty()) {
      joined += separator;
    }
    joined += word;
  }
  return joined;
}

} // namespace hubcache::util
