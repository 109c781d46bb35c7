#include "hubcache/http/listing_bounds.hpp"

#include "hubcache/error.hpp"

namespace hubcache::http {

void ListingBounds::next_page(std::string_view cursor)
{
  if (!m_cursors.emplace(cursor).second) {
    throw RemoteError(m_what + " loops back to a page it already sent", "retry later");
  }
  if (++m_pages > m_limits.max_pages) {
    throw RemoteError(m_what + " goes on past " + std::to_string(m_limits.max_pages) + " pages", "retry later");
  }
}

void ListingBounds::add_entries(std::size_t count)
{
  if (count > m_limits.max_entries - m_entries) {
    throw RemoteError(m_what + " lists more than " + std::to_string(m_limits.max_entries) + " entries",
                      "a cache repo this large is not supported; check the prefix");
  }
  m_entries += count;
}

} // namespace hubcache::http
