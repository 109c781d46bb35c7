#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

// JSON read from outside (registry files, config.json, Hub answers, markers) is hostile:
// a document nested a few hundred thousand levels deep overflows the stack of any
// recursive reader, nlohmann's included. Every parse goes through these bounds.
namespace hubcache::util {

struct JsonLimits {
  std::size_t max_depth = 128;                  // objects and arrays nested in each other
  std::size_t max_size = std::size_t{64} << 20; // bytes of text
};

// The depth of the deepest object or array nesting in `text`, counted outside strings;
// stops counting past `stop_at`.
std::size_t json_nesting_depth(std::string_view text, std::size_t stop_at);

// Parses `text`; InvalidArgument naming `what` when it is too large, too deep or not JSON.
nlohmann::json parse_json(std::string_view text, const std::string& what, const JsonLimits& limits = {});
// nullopt instead of an error (for answers whose shape is checked by the caller).
std::optional<nlohmann::json> try_parse_json(std::string_view text, const JsonLimits& limits = {});

} // namespace hubcache::util
