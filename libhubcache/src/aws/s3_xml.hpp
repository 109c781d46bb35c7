#pragma once

// S3's XML answers, read with pugixml under size and depth bounds: what a server sends is
// hostile until parsed. Private to the aws floor (and its fuzz target).
#include "hubcache/aws/s3_client.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hubcache::aws::xml {

// Bounds on one document: S3's answers are a few MiB at most (1000 listed keys) and
// three elements deep.
inline constexpr std::size_t k_max_document_size = std::size_t{16} << 20;
inline constexpr std::size_t k_max_depth = 16;

// One page of ListObjectsV2. RemoteError when it is no listing (malformed, cut short,
// too big or deep, an object without a key or a size, a page that goes on without a
// token, a KeyCount that disagrees with the keys sent).
struct ListPage {
  std::vector<S3Object> objects;
  bool truncated = false;
  std::string next_token; // set when truncated
};
ListPage parse_list_page(std::string_view body, std::string_view where);

// The fields of an <Error> document; empty ones when the body is not one (an error answer
// may come with any body, or none). Never throws.
struct ErrorAnswer {
  std::string code;
  std::string message;
  std::string region;
};
ErrorAnswer parse_error(std::string_view body);

// The text of /<root>/<child> (an UploadId, a completed upload's ETag), nullopt when the
// document is not one or lacks it. Never throws.
std::optional<std::string> child_text(std::string_view body, const char* root, const char* child);

std::string unquote_etag(std::string etag);

} // namespace hubcache::aws::xml
