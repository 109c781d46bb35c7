#pragma once

#include "registry/entry.hpp"

#include <hubcache/layout/names.hpp>

#include <optional>
#include <string>
#include <string_view>

// Where registry entries live in a cache repo, in every layout optimum has written:
//   neuronxcc-<compiler>/0_REGISTRY/<registry ver>/<model_type>/<org>/<model>/<hash>.json   (alias; ours)
//   neuronxcc-<compiler>/0_REGISTRY/<registry ver>/<arch digest>/<hash>.json                 (optimum >= 0.4.5)
//   neuronxcc-<compiler>/0_REGISTRY/<registry ver>/{inference|training}/<model_type>/...      (0.0.19 - 0.1.x)
// and model ids without an org one level shallower.
namespace registry {

using hubcache::layout::k_registry_dir;
inline constexpr std::string_view k_compiler_dir_prefix = hubcache::layout::k_version_prefix;

enum class RegistryPathKind {
  alias,      // <model_type>/<model_id>/<hash>.json, optionally below a mode level
  digest,     // <64-hex arch digest>/<hash>.json
  unexpected, // under a 0_REGISTRY but at a depth or name no layout uses
};

struct RegistryPath {
  std::string path; // the repo path, as listed
  RegistryPathKind kind = RegistryPathKind::unexpected;
  std::string compiler_dir;     // "neuronxcc-2.21.33363.0+82129205"
  std::string compiler_version; // "2.21.33363.0+82129205"
  std::string registry_version; // the optimum-neuron version that wrote it, e.g. "0.4.5"
  std::string registry_root;    // "<compiler_dir>/0_REGISTRY/<registry_version>"
  std::string mode;             // "inference" / "training" for the 0.0.19 - 0.1.x layout
  std::string arch_digest;      // digest kind only
  std::string model_type;       // alias kind only
  std::string model_id;         // alias kind only: "org/model" or "model"
  std::string file_hash;        // file name without ".json"
  std::string problem;          // why an unexpected path is unexpected
};

// Classifies a repo path: nullopt when it is not under a 0_REGISTRY directory at all;
// otherwise a RegistryPath whose kind says which layout it follows. Never throws.
std::optional<RegistryPath> parse_registry_path(std::string_view path);

bool is_arch_digest(std::string_view text) noexcept;
// The one --compiler-version rule (hubcache::layout::version_matches): the full version or a
// prefix ending at a '.' or '+' boundary ("2.21.33363.0+82129205", "2.21.33363.0", "2.21").
bool compiler_version_matches(std::string_view version, std::string_view filter) noexcept;

// `add`'s attribution records: which MODULE_* entries the run that wrote a registry
// entry produced (registry entries written by other tools do not say), so that a pull
// can install one model's graphs only. One record per registry entry file, named by its
// hash: neuronxcc-<cv>/0_REGISTRY/neuron-cache-modules/<entry hash>.json holding
// {"model_id", "task", "registry_files": [...], "modules": ["neuronxcc-<cv>/MODULE_...", ...]}.
// parse_registry_path() does not take them for entries (nullopt).
inline constexpr std::string_view k_attribution_version = "neuron-cache-modules";
std::string attribution_path(const std::string& compiler_version, const std::string& entry_hash);

// Registry root for a compiler and registry version: neuronxcc-<cv>/0_REGISTRY/<rv>.
std::string registry_root(const std::string& compiler_version, const std::string& registry_version);
// Our primary layout: <root>/<model_type>/<model_id>/<hash>.json. Throws InvalidArgument
// when the model id or versions would not make a valid repo path.
std::string registry_path(const std::string& compiler_version, const std::string& registry_version,
                          const CacheEntry& entry);
// optimum >= 0.4.5's lookup key: <root>/<arch digest>/<hash>.json. Writers that want
// optimum >= 0.4.5 to find the entry add this copy too.
std::string digest_registry_path(const std::string& compiler_version, const std::string& registry_version,
                                 const CacheEntry& entry);

} // namespace registry
