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
