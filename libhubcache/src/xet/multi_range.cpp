// Multi-range xorb fetches (spec `download-protocol.md`): a v2 reconstruction signs all the
// ranges of one xorb into one URL; they are asked for in one request and come back as a
// multipart/byteranges answer, each part checked to be exactly the bytes asked for.

#include "cas_answer.hpp"
#include "hubcache/xet/cas_client.hpp"
#include "hubcache/xet/xorb.hpp"

namespace hubcache::xet {

namespace {

// The boundary parameter of a multipart/byteranges content type.
std::string boundary_of(std::string_view content_type)
{
  if (content_type.find("multipart/byteranges") == std::string_view::npos) {
    detail::cas_lied("a multi-range request with something else than multipart/byteranges");
  }
  const auto at = content_type.find("boundary=");
  if (at == std::string_view::npos) {
    detail::cas_lied("a multipart answer without a boundary");
  }
  auto boundary = content_type.substr(at + 9);
  boundary = boundary.substr(0, boundary.find(';'));
  if (boundary.size() >= 2 && boundary.front() == '"' && boundary.back() == '"') {
    boundary = boundary.substr(1, boundary.size() - 2);
  }
  if (boundary.empty() || boundary.size() > 200) {
    detail::cas_lied("a multipart answer with an unusable boundary");
  }
  return std::string(boundary);
}

std::string range_text(const XorbFetch& fetch)
{
  return std::to_string(fetch.byte_start) + "-" + std::to_string(fetch.byte_end);
}

} // namespace

std::vector<std::string> split_byteranges(std::string_view body, std::string_view content_type,
                                          const std::vector<const XorbFetch*>& fetches)
{
  const auto delimiter = "--" + boundary_of(content_type);
  std::vector<std::string> parts;
  std::size_t at = body.find(delimiter);
  for (const auto* fetch : fetches) {
    if (at == std::string_view::npos) {
      detail::cas_lied("a multipart answer with " + std::to_string(parts.size()) + " parts, not the "
                       + std::to_string(fetches.size()) + " ranges asked for");
    }
    const auto headers_end = body.find("\r\n\r\n", at);
    if (headers_end == std::string_view::npos) {
      detail::cas_lied("a multipart part without headers");
    }
    const auto headers = body.substr(at, headers_end - at);
    // The part says which bytes it holds; they must be the range asked for, in order.
    const auto wanted = "bytes " + range_text(*fetch) + "/";
    std::string lowered(headers);
    for (auto& c : lowered) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (lowered.find("content-range: " + wanted) == std::string::npos) {
      detail::cas_lied("a multipart part for other bytes than the range " + range_text(*fetch) + " asked for");
    }
    const auto length = fetch->byte_end - fetch->byte_start + 1;
    const auto data = headers_end + 4;
    if (body.size() < data + length || body.substr(data + length, 2 + delimiter.size()) != "\r\n" + delimiter) {
      detail::cas_lied("a xorb range shorter or longer than the " + std::to_string(length) + " bytes asked for");
    }
    parts.emplace_back(body.substr(data, length));
    at = data + length + 2;
  }
  return parts;
}

std::vector<std::string> CasClient::fetch_ranges(const std::vector<const XorbFetch*>& fetches)
{
  if (fetches.size() == 1) {
    std::vector<std::string> one; // not `return {...}`: an initializer list copies its strings
    one.push_back(fetch_range(*fetches.front()));
    return one;
  }
  http::Request request;
  std::string ranges;
  std::uint64_t total = 0;
  for (const auto* fetch : fetches) {
    ranges += (ranges.empty() ? "" : ",") + range_text(*fetch);
    total += fetch->byte_end - fetch->byte_start + 1;
  }
  request.url = fetches.front()->url;
  request.headers.emplace_back("Range", "bytes=" + ranges);
  request.body_limit = total + fetches.size() * 512 + 4096; // the parts and their headers
  request.expected_body = total;
  auto response = send(std::move(request), false); // a signed URL: no token
  if (!response.ok()) {
    throw RemoteError("the Xet CAS refused xorb ranges (HTTP " + std::to_string(response.status) + ")",
                      "retry later; nothing was installed");
  }
  if (response.status != 206) {
    detail::cas_lied("a multi-range request with the whole xorb");
  }
  return split_byteranges(response.body, response.headers.get("content-type").value_or(""), fetches);
}

} // namespace hubcache::xet
