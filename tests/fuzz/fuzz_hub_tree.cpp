// The Hub's file listings: GET /api/{type}s/{repo}/tree/{revision}[/{path}] pages and
// POST .../paths-info answers, read entry by entry as HubApi does. Properties: only the
// errors HubApi expects; an LFS entry carries its content hash.
#include "hub_answer_support.hpp"

#include "hub/detail.hpp"

#include <hubcache/util/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  auto parsed = hubcache::util::try_parse_json(fuzz::text_of(data, size));
  if (!parsed) {
    return 0;
  }
  // paths-info iterates whatever came back; the tree listing first insists on an array.
  fuzz::hub_accepts([&] {
    for (const auto& item : *parsed) {
      auto entry = hubcache::hub::detail::parse_tree_entry(item);
      FUZZ_CHECK(entry.path == item.at("path").get<std::string>(), "path changed");
      FUZZ_CHECK(entry.lfs_oid.has_value() == (item.contains("lfs") && item["lfs"].is_object()), "LFS-ness changed");
    }
  });
  return 0;
}
