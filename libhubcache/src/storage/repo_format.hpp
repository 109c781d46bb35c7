#pragma once

#include <string_view>

namespace hubcache::storage {

// What the marker at the root of a directory or S3 repo made by neuron-cache says it is.
inline constexpr std::string_view k_repo_format_name = "neuron-cache-compile-cache-repo";

} // namespace hubcache::storage
