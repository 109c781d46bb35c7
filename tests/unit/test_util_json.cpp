#include <hubcache/error.hpp>
#include <hubcache/util/json.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace hubcache;

TEST_CASE("json: nesting depth is counted outside strings")
{
  CHECK(util::json_nesting_depth(R"({"a": [1, {"b": []}]})", 100) == 4);
  CHECK(util::json_nesting_depth(R"({"a": "[[[[\"[[["})", 100) == 1);
  CHECK(util::json_nesting_depth("", 100) == 0);
  CHECK(util::json_nesting_depth(std::string(1000, '['), 10) == 11); // stops counting early
}

TEST_CASE("json: a document nested 300,000 levels deep is refused, not a crash")
{
  std::string deep = std::string(300000, '[') + std::string(300000, ']');
  CHECK_THROWS_WITH_AS(util::parse_json(deep, "registry entry x.json"),
                       doctest::Contains("registry entry x.json is not usable JSON: nested deeper than 128 levels"),
                       InvalidArgument);
  CHECK_FALSE(util::try_parse_json(deep).has_value());
  std::string fine = std::string(100, '[') + std::string(100, ']');
  CHECK(util::parse_json(fine, "x").is_array());
}

TEST_CASE("json: size limits and invalid text name the document")
{
  CHECK_THROWS_WITH_AS(util::parse_json("[1, 2, 3]", "answer", {.max_depth = 8, .max_size = 4}),
                       doctest::Contains("answer is not usable JSON: larger than 4 bytes"), InvalidArgument);
  CHECK_THROWS_WITH_AS(util::parse_json("{", "config.json"), doctest::Contains("config.json is not valid JSON"),
                       InvalidArgument);
  CHECK_FALSE(util::try_parse_json("{").has_value());
  CHECK(util::try_parse_json(R"({"a": 1})")->at("a") == 1);
}

// Found by fuzz_registry_entry: nlohmann reports a number beyond a double as out_of_range,
// not parse_error, which escaped as a library exception and failed the whole lookup.
TEST_CASE("json: a number beyond a double is refused naming the document, like any bad JSON")
{
  CHECK_THROWS_WITH_AS(util::parse_json(R"({"model_type": "llama", "eps": -1e400})", "registry entry x.json"),
                       doctest::Contains("registry entry x.json is not valid JSON"), InvalidArgument);
  CHECK_FALSE(util::try_parse_json("[1e400]").has_value());
}
