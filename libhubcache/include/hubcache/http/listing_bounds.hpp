#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

// Bounds on a paginated listing read from a server (S3 continuation tokens, Hub Link
// cursors): a server that never stops paginating, loops back to a cursor it already gave,
// or lists more entries than any cache holds is an error, not a loop that runs forever.
namespace hubcache::http {

struct ListingLimits {
  std::size_t max_pages = 100'000;
  std::size_t max_entries = 5'000'000;
};

class ListingBounds {
public:
  // `what` names the listing in errors ("the listing of s3://bucket/prefix").
  ListingBounds(std::string what, ListingLimits limits) : m_what(std::move(what)), m_limits(limits) {}

  // Before asking for each page, with the cursor that names it (a token or URL; the first
  // page's may be empty): RemoteError when that cursor came before or the listing has more
  // pages than allowed.
  void next_page(std::string_view cursor);
  // After a page: RemoteError when the listing now holds more entries than allowed.
  void add_entries(std::size_t count);
  std::size_t pages() const { return m_pages; }
  std::size_t entries() const { return m_entries; }

private:
  std::string m_what;
  ListingLimits m_limits;
  std::set<std::string, std::less<>> m_cursors;
  std::size_t m_pages = 0;
  std::size_t m_entries = 0;
};

} // namespace hubcache::http
