#pragma once

#include "fuzz_support.hpp"

#include <nlohmann/json.hpp>

namespace fuzz {

// Hub answer parsers report a bad shape as nlohmann::json::exception, which HubApi turns
// into one RemoteError ("unexpected answer to ..."); anything else must be a hubcache::Error.
template <typename Body>
bool hub_accepts(Body&& body)
{
  try {
    return accepts(std::forward<Body>(body));
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

} // namespace fuzz
