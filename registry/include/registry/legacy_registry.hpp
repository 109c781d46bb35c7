#pragma once

#include "registry/catalog.hpp"

#include <hubcache/storage/repository.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// optimum-neuron <= 0.0.18's training registry: one `registry.json` at the repo root,
//   {"<compiler version>": {"<model>": {"model_name_or_path", "model_hash",
//     "features": [{"input_shapes": [["input_ids", [16, 128]], ...], "precision": "torch.bfloat16",
//                   "num_neuron_cores": 32, "neuron_hash": "<sha512>"}]}}}
// read so that `list` shows what such repos hold (its graphs live under paths nobody can
// compute outside Python; they are listed, never looked up).
namespace registry {

inline constexpr std::string_view k_legacy_registry_file = "registry.json";
// The registry "version" its configurations are shown under.
inline constexpr std::string_view k_legacy_registry_version = "registry.json";
// A registry.json beyond this is not one optimum wrote; it is refused, not read.
inline constexpr std::uint64_t k_max_legacy_registry_size = 64ULL << 20;

// The root registry.json of `repo`, or nullopt when it has none (or an empty `{}`, which
// optimum <= 0.0.20's `create` committed). Throws InvalidArgument when it is larger than
// k_max_legacy_registry_size.
std::optional<std::string> read_legacy_registry(hubcache::storage::Repository& repo);

// One configuration per feature. Parts that are not in the format above become warnings
// (the rest is still read); text that is not JSON at all is one warning.
std::vector<Configuration> legacy_configurations(std::string_view text, std::vector<std::string>& warnings);

} // namespace registry
