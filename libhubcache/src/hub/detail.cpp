#include "detail.hpp"

#include "hubcache/util/json.hpp"
#include "hubcache/util/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <thread>

namespace hubcache::hub::detail {

using json = nlohmann::json;
using util::trim;

std::optional<std::string> clean_token(std::string_view text)
{
  std::string token;
  for (char c : text) {
    if (c != '\r' && c != '\n') {
      token.push_back(c);
    }
  }
  auto trimmed = std::string(trim(token));
  if (trimmed.empty()) {
    return std::nullopt;
  }
  return trimmed;
}

std::optional<std::uint64_t> parse_u64(std::string_view text)
{
  text = trim(text);
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

std::string normalize_etag(std::string_view etag)
{
  etag = trim(etag);
  if (etag.starts_with("W/")) {
    etag.remove_prefix(2);
  }
  std::string out;
  for (char c : etag) {
    if (c != '"') {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

bool is_hex(std::string_view text)
{
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

std::string sanitize(std::string text, const std::optional<std::string>& token)
{
  if (token && !token->empty()) {
    for (auto at = text.find(*token); at != std::string::npos; at = text.find(*token, at)) {
      text.replace(at, token->size(), "hf_***");
    }
  }
  for (auto& c : text) {
    if (std::iscntrl(static_cast<unsigned char>(c)) != 0) {
      c = ' ';
    }
  }
  auto trimmed = std::string(trim(text));
  if (trimmed.size() > 300) {
    trimmed = trimmed.substr(0, 300) + "...";
  }
  return trimmed;
}

std::string server_message(const http::Response& response)
{
  if (auto header = response.headers.get("x-error-message")) {
    return *header;
  }
  auto answer = util::try_parse_json(response.body);
  if (answer && answer->is_object()) {
    const auto& parsed = *answer;
    for (const char* key : {"error", "message"}) {
      if (!parsed.contains(key)) {
        continue;
      }
      const auto& value = parsed[key];
      if (value.is_string()) {
        return value.get<std::string>();
      }
      if (value.is_array()) {
        std::string joined;
        for (const auto& item : value) {
          joined += (joined.empty() ? "" : "; ") + (item.is_string() ? item.get<std::string>() : item.dump());
        }
        return joined;
      }
    }
    return {};
  }
  auto body = std::string_view(response.body);
  auto newline = body.find('\n');
  return std::string(body.substr(0, std::min<std::size_t>(newline, 200)));
}

void sleep_for(std::chrono::milliseconds delay)
{
  if (delay.count() > 0) {
    std::this_thread::sleep_for(delay);
  }
}

nlohmann::json parse_json_answer(const http::Response& response, std::string_view action,
                                 const std::optional<std::string>& token)
{
  auto parsed = util::try_parse_json(response.body);
  if (!parsed) {
    auto request_id = response.request_id();
    throw RemoteError("the Hub sent an invalid JSON answer to " + std::string(action) + " (HTTP "
                        + std::to_string(response.status) + ")"
                        + (request_id ? " (request id: " + sanitize(*request_id, token) + ")" : ""),
                      "retry later; if it persists, check HF_ENDPOINT points at a Hugging Face Hub");
  }
  return std::move(*parsed);
}

[[noreturn]] void throw_bad_shape(std::string_view action, const std::exception& error)
{
  throw RemoteError("the Hub sent an unexpected answer to " + std::string(action) + ": " + error.what(),
                    "retry later; if it persists, check HF_ENDPOINT points at a Hugging Face Hub");
}

HubTreeEntry parse_tree_entry(const nlohmann::json& item)
{
  HubTreeEntry entry;
  entry.type = item.at("type").get<std::string>();
  entry.path = item.at("path").get<std::string>();
  // get_ref throws type_error (a bad answer) for a negative or fractional size, which a
  // conversion would turn into garbage or, for 1e300, undefined behaviour.
  entry.size = item.contains("size") ? item["size"].get_ref<const nlohmann::json::number_unsigned_t&>() : 0;
  entry.oid = item.value("oid", std::string());
  if (item.contains("lfs") && item["lfs"].is_object()) {
    entry.lfs_oid = item["lfs"].at("oid").get<std::string>();
  }
  if (item.contains("lastCommit") && item["lastCommit"].is_object()) {
    entry.last_commit_date = item["lastCommit"].value("date", std::string());
  }
  return entry;
}

std::vector<std::pair<std::string, std::string>> lfs_headers()
{
  return {{"Accept", "application/vnd.git-lfs+json"}, {"Content-Type", "application/vnd.git-lfs+json"}};
}

} // namespace hubcache::hub::detail
