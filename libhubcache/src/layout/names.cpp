#include "hubcache/layout/names.hpp"

namespace hubcache::layout {

bool version_matches(std::string_view version, std::string_view filter)
{
  if (filter.empty() || version == filter) {
    return true;
  }
  return version.size() > filter.size() && version.starts_with(filter)
         && (version[filter.size()] == '.' || version[filter.size()] == '+');
}

} // namespace hubcache::layout
