#pragma once

// Helpers shared by the hub/ sources; not part of the library's interface.
#include "hubcache/hub/api.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hubcache::hub::detail {

std::optional<std::string> clean_token(std::string_view text);
std::optional<std::uint64_t> parse_u64(std::string_view text);
// An etag as the clients normalise it: no W/ prefix, no quotes, lowercase.
std::string normalize_etag(std::string_view etag);
bool is_hex(std::string_view text);
// Server text made safe for a one-line message: no control characters, bounded, and
// never the token even if the server echoed it.
std::string sanitize(std::string text, const std::optional<std::string>& token);
std::string server_message(const http::Response& response);
void sleep_for(std::chrono::milliseconds delay);
// The answer as JSON; RemoteError when it is none (its request id shown without `token`).
nlohmann::json parse_json_answer(const http::Response& response, std::string_view action,
                                 const std::optional<std::string>& token);
[[noreturn]] void throw_bad_shape(std::string_view action, const std::exception& error);
HubTreeEntry parse_tree_entry(const nlohmann::json& item);
std::vector<std::pair<std::string, std::string>> lfs_headers();

} // namespace hubcache::hub::detail
