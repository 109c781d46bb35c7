#pragma once

#include "hubcache/error.hpp"
#include "hubcache/http/client.hpp"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hubcache::aws::detail {

// A whole decimal number and nothing else (a size, a count from S3).
inline std::optional<std::uint64_t> parse_u64(std::string_view text)
{
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// Keeps a response body in memory up to `limit` bytes: a hostile or broken server cannot
// make us hold more.
class CappedBody final : public http::BodySink {
public:
  explicit CappedBody(std::size_t limit) : m_limit(limit) {}
  bool start(long, const http::Headers&) override { return true; }
  void write(std::string_view chunk) override
  {
    if (m_body.size() + chunk.size() > m_limit) {
      throw RemoteError("a response was larger than " + std::to_string(m_limit) + " bytes");
    }
    m_body.append(chunk);
  }
  std::string& body() { return m_body; }

private:
  std::size_t m_limit;
  std::string m_body;
};

} // namespace hubcache::aws::detail
