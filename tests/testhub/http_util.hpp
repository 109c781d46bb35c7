#pragma once

// Small HTTP-level helpers of the test Hub: the Reply a route produces, URL and base64
// codecs, Range parsing.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace testhub {

using json = nlohmann::ordered_json;

// A byte range of a file on disk, streamed without loading it.
struct FileSlice {
  std::filesystem::path path;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

// What a route answers; turned into an httplib response in one place, where faults apply.
struct Reply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type;
  std::string body;
  std::optional<FileSlice> file; // streamed body instead of `body`

  void header(std::string name, std::string value) { headers.emplace_back(std::move(name), std::move(value)); }
  std::optional<std::string> find_header(std::string_view name) const;
  void replace_header(std::string_view name, std::string value);
  std::uint64_t body_size() const { return file ? file->length : body.size(); }
};

Reply json_reply(int status, const json& body);
// The Hub's error shape: X-Error-Message + {"error": ...} (JSON under /api, text elsewhere).
Reply error_reply(int status, const std::string& message, bool as_json = true, const std::string& error_code = {});

// The value of one hex digit; -1 for anything else.
int hex_value(char c);
std::string percent_decode(std::string_view text, bool plus_is_space = false);
std::string percent_encode(std::string_view text, bool keep_slash);
std::vector<std::string> split(std::string_view text, char separator);

std::string base64_encode(std::string_view data);
std::optional<std::string> base64_decode(std::string_view text);
std::string base64url_encode(std::string_view data);
std::optional<std::string> base64url_decode(std::string_view text);

std::string random_hex(std::size_t length);
std::string iso8601_now();
std::string iso8601(std::int64_t unix_seconds);
std::string iso8601_ms(std::int64_t unix_ms);
// Now, to the millisecond: a bucket's updatedAt moves with every change.
std::string iso8601_now_ms();
std::int64_t unix_now();

bool is_truthy(std::string_view value); // "true", "1", "True"...

// A single `Range: bytes=` spec resolved against a size.
struct ByteRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0; // inclusive
};
enum class RangeOutcome { none, satisfiable, unsatisfiable };
RangeOutcome parse_range(std::string_view header, std::uint64_t size, ByteRange& range);

std::string content_type_for(std::string_view file_name);

} // namespace testhub
