#include <hubcache/error.hpp>
#include <hubcache/util/text.hpp>

#include <doctest/doctest.h>

using namespace hubcache;
using namespace hubcache::util;

TEST_CASE("trim drops surrounding whitespace only")
{
  CHECK(trim("  a b \t\r\n") == "a b");
  CHECK(trim("") == "");
  CHECK(trim(" \n ") == "");
}

TEST_CASE("command lines split like a shell and quote back")
{
  CHECK(split_command_line("a  b\tc") == std::vector<std::string>{"a", "b", "c"});
  CHECK(split_command_line("torchrun --nproc 2 'x y' \"a \\\"b\\\"\" c\\ d ''")
        == std::vector<std::string>{"torchrun", "--nproc", "2", "x y", "a \"b\"", "c d", ""});
  CHECK_THROWS_AS(split_command_line("echo 'open"), InvalidArgument);
  CHECK_THROWS_AS(split_command_line("echo \"open"), InvalidArgument);
  for (std::string arg : {"plain", "with space", "it's", "", "$HOME", "a\"b"}) {
    CHECK(split_command_line(quote_argument(arg)) == std::vector<std::string>{arg});
  }
}

TEST_CASE("escape_control: terminal controls and invalid bytes become visible escapes, UTF-8 stays")
{
  CHECK(escape_control("plain text") == "plain text");
  CHECK(escape_control("\x1b[31mred\x1b]0;title\x07") == "\\x1b[31mred\\x1b]0;title\\x07");
  CHECK(escape_control("a\rb\tc\nd") == "a\\x0db\\x09c\\x0ad");
  CHECK(escape_control("back\\slash") == "back\\\\slash");
  CHECK(escape_control("caf\xc3\xa9 \xe2\x9c\x93") == "caf\xc3\xa9 \xe2\x9c\x93");
  CHECK(escape_control("\xff\xc3") == "\\xff\\xc3"); // invalid and truncated UTF-8
  CHECK(escape_control("\xc2\x9b"
                       "2J")
        == "\\xc2\\x9b2J"); // C1 CSI
  CHECK(escape_control("\x7f") == "\\x7f");
}

TEST_CASE("escape_control with a limit: one line of a message, cut visibly")
{
  CHECK(escape_control("short", 10) == "short");
  CHECK(escape_control("exactly10!", 10) == "exactly10!");
  CHECK(escape_control("a server's long answer", 8) == "a server...");
  // A control character is escaped, not replaced, also inside the kept part.
  CHECK(escape_control("bad\x1b[2Jtext", 6) == "bad\\x1b[2...");
  CHECK(escape_control("", 0).empty());
}

TEST_CASE("human_duration: the one duration format of every message")
{
  CHECK(human_duration(0.4212) == "0.42s");
  CHECK(human_duration(1) == "1s");
  CHECK(human_duration(1.5) == "1.50s");
  CHECK(human_duration(-3) == "0s");
  CHECK(human_duration(12.4) == "12s");
  CHECK(human_duration(185) == "3m 05s");
  CHECK(human_duration(7200) == "2h 00m");
  CHECK(human_duration(3725) == "1h 02m");
}
