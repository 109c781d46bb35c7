// The one way a Xet CAS answer that contradicts itself or the request is refused, shared by
// the reconstruction reader (cas_client.cpp) and the multi-range reader (multi_range.cpp).
#pragma once

#include "hubcache/error.hpp"

#include <string>

namespace hubcache::xet::detail {

inline constexpr const char* k_cas_retry_hint = "retry later; nothing was installed";

[[noreturn]] inline void cas_lied(const std::string& what)
{
  throw IntegrityError("the Xet CAS answered " + what, k_cas_retry_hint);
}

} // namespace hubcache::xet::detail
