#include "s3_xml.hpp"

#include "detail.hpp"

#include "hubcache/aws/credentials.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/text.hpp"

#include <pugixml.hpp>

namespace hubcache::aws::xml {

namespace {

// The document, or nullopt when it is too big, malformed (a body cut short is) or nested
// deeper than any S3 answer.
std::optional<pugi::xml_document> parse_bounded(std::string_view body)
{
  if (body.size() > k_max_document_size) {
    return std::nullopt;
  }
  std::optional<pugi::xml_document> document(std::in_place);
  // No DOCTYPE, no processing instructions: entities other than XML's five and character
  // references are never expanded.
  auto options = pugi::parse_default & ~pugi::parse_doctype & ~pugi::parse_pi;
  if (!document->load_buffer(body.data(), body.size(), options, pugi::encoding_utf8)) {
    return std::nullopt;
  }
  // Depth, walked without recursion.
  std::size_t depth = 1;
  auto node = document->first_child();
  while (node) {
    if (depth > k_max_depth) {
      return std::nullopt;
    }
    if (auto child = node.first_child()) {
      node = child;
      ++depth;
      continue;
    }
    // Up to the nearest ancestor with a next sibling; past the top, the walk ends.
    while (node && !node.next_sibling()) {
      node = node.parent();
      --depth;
    }
    if (node) {
      node = node.next_sibling();
    }
  }
  return document;
}

} // namespace

using detail::parse_u64;

std::string unquote_etag(std::string etag)
{
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

ListPage parse_list_page(std::string_view body, std::string_view where)
{
  auto bad = [&](const std::string& why) {
    return RemoteError("S3 sent a listing of " + std::string(where) + " that cannot be used: " + why,
                       "retry; if it persists, check AWS_ENDPOINT_URL points at S3");
  };
  auto document = parse_bounded(body);
  if (!document) {
    throw bad("malformed, cut short or too large XML");
  }
  auto root = document->child("ListBucketResult");
  if (!root) {
    throw bad("no ListBucketResult");
  }
  ListPage page;
  // A page that does not say whether more follow was cut short: never taken as the end.
  std::string_view truncated = root.child_value("IsTruncated");
  if (truncated != "true" && truncated != "false") {
    throw bad("no IsTruncated");
  }
  page.truncated = truncated == "true";
  std::size_t keys = 0;
  for (auto contents : root.children("Contents")) {
    S3Object object;
    object.key = contents.child_value("Key");
    auto size = parse_u64(contents.child_value("Size"));
    if (object.key.empty() || !size) {
      throw bad("an object without a key or a size");
    }
    object.size = *size;
    object.etag = unquote_etag(contents.child_value("ETag"));
    if (auto modified = parse_iso8601(util::trim(contents.child_value("LastModified")))) {
      object.last_modified = std::chrono::duration_cast<std::chrono::seconds>(modified->time_since_epoch()).count();
    }
    page.objects.push_back(std::move(object));
    ++keys;
  }
  for ([[maybe_unused]] auto prefix : root.children("CommonPrefixes")) {
    ++keys;
  }
  if (auto count = root.child("KeyCount")) {
    if (parse_u64(count.child_value()) != keys) {
      throw bad("KeyCount " + std::string(count.child_value()).substr(0, 20) + " but " + std::to_string(keys)
                + " keys sent");
    }
  }
  if (page.truncated) {
    page.next_token = root.child_value("NextContinuationToken");
    if (page.next_token.empty()) {
      throw bad("it goes on but gives no continuation token");
    }
  }
  return page;
}

ErrorAnswer parse_error(std::string_view body)
{
  ErrorAnswer answer;
  auto document = parse_bounded(body);
  if (!document) {
    return answer;
  }
  auto error = document->child("Error");
  answer.code = error.child_value("Code");
  answer.message = error.child_value("Message");
  answer.region = error.child_value("Region");
  return answer;
}

std::optional<std::string> child_text(std::string_view body, const char* root, const char* child)
{
  auto document = parse_bounded(body);
  if (!document) {
    return std::nullopt;
  }
  auto node = document->child(root).child(child);
  if (!node) {
    return std::nullopt;
  }
  return std::string(node.child_value());
}

} // namespace hubcache::aws::xml
