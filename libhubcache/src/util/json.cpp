#include "hubcache/util/json.hpp"

#include "hubcache/error.hpp"

namespace hubcache::util {

std::size_t json_nesting_depth(std::string_view text, std::size_t stop_at)
{
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > stop_at) {
          return deepest;
        }
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

namespace {

// Why `text` may not be parsed, or empty.
std::string refusal(std::string_view text, const JsonLimits& limits)
{
  if (text.size() > limits.max_size) {
    return "larger than " + std::to_string(limits.max_size) + " bytes";
  }
  if (json_nesting_depth(text, limits.max_depth) > limits.max_depth) {
    return "nested deeper than " + std::to_string(limits.max_depth) + " levels";
  }
  return {};
}

} // namespace

nlohmann::json parse_json(std::string_view text, const std::string& what, const JsonLimits& limits)
{
  if (auto why = refusal(text, limits); !why.empty()) {
    throw InvalidArgument(what + " is not usable JSON: " + why);
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& error) {
    // parse_error, and out_of_range for numbers beyond a double (1e400).
    std::string detail = error.what();
    // nlohmann prefixes "[json.exception.parse_error.101] "; keep the readable part.
    if (auto at = detail.find("] "); at != std::string::npos) {
      detail = detail.substr(at + 2);
    }
    throw InvalidArgument(what + " is not valid JSON: " + detail);
  }
}

std::optional<nlohmann::json> try_parse_json(std::string_view text, const JsonLimits& limits)
{
  if (!refusal(text, limits).empty()) {
    return std::nullopt;
  }
  auto parsed = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (parsed.is_discarded()) {
    return std::nullopt;
  }
  return parsed;
}

} // namespace hubcache::util
