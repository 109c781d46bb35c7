#pragma once

#include "registry/lookup.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

// What a cache repo holds, per model: the data behind `list`.
namespace registry {

// One compiled configuration: the copies of one entry (alias and digest paths) in one
// registry root count once.
struct Configuration {
  std::string model_id;
  std::string model_type;
  std::string compiler_dir;
  std::string compiler_version;
  std::string registry_version;
  std::string hash;               // entry file name without .json
  std::vector<std::string> paths; // every copy
  // Read only when needed: a pointer, not an optional, keeps each of tens of thousands of
  // configurations small when few are read.
  std::shared_ptr<const CacheEntry> entry;
  std::optional<std::uint64_t> size; // MODULE_<hash> folder size, when the repo has one
};

struct ModelSummary {
  std::string model_id;
  std::set<std::string> model_types;
  std::set<std::string> compiler_versions;
  std::size_t configurations = 0;
  std::optional<std::uint64_t> size; // sum of the known sizes
};

struct CatalogOptions {
  std::optional<std::string> compiler_version; // only this compiler (with or without +hash)
  std::optional<std::string> model_id;         // only this model, with every entry read
  unsigned parallelism = 8;
  // The text of a root registry.json (optimum <= 0.0.18), listed with the rest.
  std::optional<std::string> legacy_registry;
};

struct Catalog {
  std::vector<Configuration> configurations; // by model, compiler, registry version, cores, batch, sequence
  std::vector<ModelSummary> models;          // sorted by model id
  std::vector<std::string> warnings;
  std::size_t files_read = 0;
};

// Builds the catalog from the index, reading only entries whose model id the paths do
// not tell (digest-only copies) — and, with options.model_id, that model's entries.
Catalog build_catalog(const RegistryIndex& index, const RepositoryOpener& open, const CatalogOptions& options);

} // namespace registry
