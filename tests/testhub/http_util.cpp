#include "http_util.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <ctime>
#include <random>

namespace testhub {

namespace {

bool iequals(std::string_view a, std::string_view b)
{
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

constexpr std::string_view k_base64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string encode64(std::string_view data, std::string_view alphabet, bool pad)
{
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const auto n = (static_cast<unsigned>(static_cast<unsigned char>(data[i])) << 16)
                   | (static_cast<unsigned>(static_cast<unsigned char>(data[i + 1])) << 8)
                   | static_cast<unsigned>(static_cast<unsigned char>(data[i + 2]));
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += alphabet[n & 63];
  }
  const auto rest = data.size() - i;
  if (rest > 0) {
    unsigned n = static_cast<unsigned>(static_cast<unsigned char>(data[i])) << 16;
    if (rest == 2)
      n |= static_cast<unsigned>(static_cast<unsigned char>(data[i + 1])) << 8;
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    if (rest == 2)
      out += alphabet[(n >> 6) & 63];
    if (pad)
      out.append(rest == 1 ? 2 : 1, '=');
  }
  return out;
}

std::optional<std::string> decode64(std::string_view text, bool url_safe)
{
  std::string out;
  out.reserve(text.size() / 4 * 3);
  unsigned buffer = 0;
  int bits = 0;
  std::size_t padding = 0;
  for (char c : text) {
    int v = -1;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == (url_safe ? '-' : '+'))
      v = 62;
    else if (c == (url_safe ? '_' : '/'))
      v = 63;
    else if (c == '=') {
      ++padding;
      continue;
    } else if (c == '\n' || c == '\r')
      continue;
    else
      return std::nullopt;
    if (padding > 0)
      return std::nullopt; // data after padding
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  if (padding > 2 || bits >= 6)
    return std::nullopt;
  return out;
}

} // namespace

std::optional<std::string> Reply::find_header(std::string_view name) const
{
  for (const auto& [key, value] : headers)
    if (iequals(key, name))
      return value;
  return std::nullopt;
}

void Reply::replace_header(std::string_view name, std::string value)
{
  std::erase_if(headers, [&](const auto& h) { return iequals(h.first, name); });
  header(std::string(name), std::move(value));
}

Reply json_reply(int status, const json& body)
{
  Reply reply;
  reply.status = status;
  reply.content_type = "application/json; charset=utf-8";
  reply.body = body.dump();
  return reply;
}

Reply error_reply(int status, const std::string& message, bool as_json, const std::string& error_code)
{
  Reply reply;
  if (as_json) {
    reply = json_reply(status, json{{"error", message}});
  } else {
    reply.status = status;
    reply.content_type = "text/plain; charset=utf-8";
    reply.body = message;
  }
  reply.header("X-Error-Message", message);
  if (!error_code.empty())
    reply.header("X-Error-Code", error_code);
  return reply;
}

int hex_value(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view text, bool plus_is_space)
{
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int hi = hex_value(text[i + 1]);
      const int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += (plus_is_space && c == '+') ? ' ' : c;
  }
  return out;
}

std::string percent_encode(std::string_view text, bool keep_slash)
{
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += c;
    } else {
      out += '%';
      out += digits[u >> 4];
      out += digits[u & 15];
    }
  }
  return out;
}

std::vector<std::string> split(std::string_view text, char separator)
{
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto pos = text.find(separator, start);
    parts.emplace_back(text.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos)
      break;
    start = pos + 1;
  }
  return parts;
}

std::string base64_encode(std::string_view data)
{
  return encode64(data, k_base64, true);
}
std::optional<std::string> base64_decode(std::string_view text)
{
  return decode64(text, false);
}
std::string base64url_encode(std::string_view data)
{
  return encode64(data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", false);
}
std::optional<std::string> base64url_decode(std::string_view text)
{
  return decode64(text, true);
}

std::string random_hex(std::size_t length)
{
  thread_local std::mt19937_64 engine{std::random_device{}()};
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(length, '0');
  for (auto& c : out)
    c = digits[engine() & 15];
  return out;
}

std::int64_t unix_now()
{
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string iso8601(std::int64_t unix_seconds)
{
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> buffer{};
  std::strftime(buffer.data(), buffer.size(), "%Y-%m-%dT%H:%M:%S.000Z", &tm);
  return buffer.data();
}

std::string iso8601_ms(std::int64_t unix_ms)
{
  auto text = iso8601(unix_ms / 1000);
  const auto ms = std::to_string(1000 + unix_ms % 1000); // "1xyz": the three digits, zero-padded
  text.replace(text.size() - 4, 3, ms.substr(1));
  return text;
}

std::string iso8601_now_ms()
{
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return iso8601_ms(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

std::string iso8601_now()
{
  return iso8601(unix_now());
}

bool is_truthy(std::string_view value)
{
  return iequals(value, "true") || value == "1" || iequals(value, "yes");
}

RangeOutcome parse_range(std::string_view header, std::uint64_t size, ByteRange& range)
{
  constexpr std::string_view prefix = "bytes=";
  if (header.substr(0, prefix.size()) != prefix)
    return RangeOutcome::none;
  const auto spec = header.substr(prefix.size());
  if (spec.find(',') != std::string_view::npos)
    return RangeOutcome::none; // multi-range: send it all
  const auto dash = spec.find('-');
  if (dash == std::string_view::npos)
    return RangeOutcome::none;
  const auto first_text = spec.substr(0, dash);
  const auto last_text = spec.substr(dash + 1);
  const auto all_digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!all_digits(first_text) || !all_digits(last_text) || (first_text.empty() && last_text.empty()))
    return RangeOutcome::none;
  if (first_text.empty()) { // suffix: the last n bytes
    const auto n = std::stoull(std::string(last_text));
    if (n == 0 || size == 0)
      return RangeOutcome::unsatisfiable;
    range.first = n >= size ? 0 : size - n;
    range.last = size - 1;
    return RangeOutcome::satisfiable;
  }
  range.first = std::stoull(std::string(first_text));
  if (!last_text.empty() && std::stoull(std::string(last_text)) < range.first)
    return RangeOutcome::none; // syntactically invalid: ignored, as RFC 9110 says
  if (range.first >= size)
    return RangeOutcome::unsatisfiable;
  range.last = last_text.empty() ? size - 1 : std::min<std::uint64_t>(std::stoull(std::string(last_text)), size - 1);
  return RangeOutcome::satisfiable;
}

std::string content_type_for(std::string_view file_name)
{
  const auto dot = file_name.rfind('.');
  const auto ext = dot == std::string_view::npos ? std::string_view{} : file_name.substr(dot + 1);
  if (ext == "txt" || ext == "md" || ext == "gitattributes" || ext == "gitignore" || file_name == ".gitattributes")
    return "text/plain; charset=utf-8";
  if (ext == "json")
    return "application/json; charset=utf-8";
  if (ext == "yaml" || ext == "yml")
    return "text/yaml; charset=utf-8";
  if (ext == "py" || ext == "sh" || ext == "csv")
    return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

} // namespace testhub
