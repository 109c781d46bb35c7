// The Hub's answer to POST /api/{type}s/{repo}/preupload/{revision}: which files go to
// LFS, which are ignored, what the remote already has. Properties: only the errors HubApi
// expects; every accepted answer names a mode we know for each file.
#include "hub_answer_support.hpp"

#include <hubcache/hub/protocol.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  hubcache::hub::PreuploadResult result;
  if (!fuzz::hub_accepts([&] { result = hubcache::hub::parse_preupload_response(fuzz::text_of(data, size)); })) {
    return 0;
  }
  auto parsed = nlohmann::json::parse(fuzz::text_of(data, size));
  FUZZ_CHECK(result.files.size() == parsed.at("files").size(), "files were dropped or invented");
  for (std::size_t i = 0; i < result.files.size(); ++i) {
    const auto& item = parsed.at("files")[i];
    FUZZ_CHECK(result.files[i].path == item.at("path").get<std::string>(), "path changed");
    FUZZ_CHECK(result.files[i].lfs == (item.at("uploadMode") == "lfs"), "upload mode changed");
  }
  return 0;
}
