// The Hub's answer to the LFS batch API (POST {repo}.git/info/lfs/objects/batch), then
// the multipart plan made from each upload action. Properties: only the errors HubApi
// expects; a multipart plan's parts exactly cover the object.
#include "hub_answer_support.hpp"

#include <hubcache/hub/protocol.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  std::vector<hubcache::hub::LfsBatchObject> objects;
  if (!fuzz::hub_accepts([&] { objects = hubcache::hub::parse_lfs_batch_response(fuzz::text_of(data, size)); })) {
    return 0;
  }
  for (const auto& object : objects) {
    if (!object.upload) {
      continue;
    }
    std::optional<hubcache::hub::MultipartPlan> plan;
    if (!fuzz::accepts([&] { plan = hubcache::hub::multipart_plan(*object.upload, object.size); }) || !plan) {
      continue;
    }
    auto parts = static_cast<std::uint64_t>(plan->part_urls.size());
    FUZZ_CHECK(plan->chunk_size > 0, "a multipart plan with empty parts");
    // parts * chunk >= size > (parts - 1) * chunk, computed without overflow.
    FUZZ_CHECK(parts == object.size / plan->chunk_size + (object.size % plan->chunk_size != 0 ? 1 : 0),
               "the parts do not cover the " + std::to_string(object.size) + "-byte object exactly ("
                 + std::to_string(parts) + " parts of " + std::to_string(plan->chunk_size) + ")");
  }
  return 0;
}
