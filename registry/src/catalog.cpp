#include "registry/catalog.hpp"

#include "registry/legacy_registry.hpp"

#include <hubcache/error.hpp>
#include <hubcache/util/thread_pool.hpp>

#include <algorithm>
#include <tuple>

namespace registry {

namespace {

// (compiler dir, registry version, hash) -> configuration, and the copy to read for it.
// Keys and copies point into the index, which outlives them: tens of thousands of
// entries are not copied again.
using Key = std::tuple<std::string_view, std::string_view, std::string_view>;
struct Found {
  Configuration configuration;
  const RegistryPath* first_path = nullptr;
};
using Configurations = std::map<Key, Found>;

// The registry paths of each configuration (alias and digest copies), its names where the
// alias path gives them.
Configurations group_paths(const RegistryIndex& index, const CatalogOptions& options)
{
  Configurations by_key;
  for (const auto& path : index.entries) {
    if (options.compiler_version && !compiler_version_matches(path.compiler_version, *options.compiler_version)) {
      continue;
    }
    auto& found = by_key[Key(path.compiler_dir, path.registry_version, path.file_hash)];
    auto& configuration = found.configuration;
    if (configuration.paths.empty()) {
      configuration.compiler_dir = path.compiler_dir;
      configuration.compiler_version = path.compiler_version;
      configuration.registry_version = path.registry_version;
      configuration.hash = path.file_hash;
      found.first_path = &path;
    }
    if (path.kind == RegistryPathKind::alias) {
      configuration.paths.insert(configuration.paths.begin(), path.path); // the browsable copy first
    } else {
      configuration.paths.push_back(path.path);
    }
    if (path.kind == RegistryPathKind::alias && configuration.model_id.empty()) {
      configuration.model_id = path.model_id;
      configuration.model_type = path.model_type;
      found.first_path = &path; // prefer reading the alias copy (legacy entries need its model id)
    }
  }
  return by_key;
}

// Reads the entries whose model is unknown (digest-only copies) or asked for.
void read_entries(Configurations& by_key, const RepositoryOpener& open, const CatalogOptions& options, Catalog& catalog)
{
  std::vector<RegistryPath> to_read;
  for (auto& [key, found] : by_key) {
    bool unknown = found.configuration.model_id.empty();
    bool wanted = options.model_id && found.configuration.model_id == *options.model_id;
    if (unknown || wanted) {
      to_read.push_back(*found.first_path);
    }
  }
  auto report = load_entries(open, to_read, options.parallelism);
  catalog.files_read = to_read.size();
  catalog.warnings = std::move(report.warnings);
  for (auto& loaded : report.entries) {
    auto it =
      by_key.find(Key(loaded.location.compiler_dir, loaded.location.registry_version, loaded.location.file_hash));
    if (it == by_key.end()) {
      continue; // (each was read for a key of the map)
    }
    auto& configuration = it->second.configuration;
    if (configuration.model_id.empty()) {
      configuration.model_id = loaded.entry.model_id;
    }
    if (configuration.model_type.empty()) {
      configuration.model_type = loaded.entry.model_type;
    }
    configuration.entry = std::make_shared<const CacheEntry>(std::move(loaded.entry));
  }
}

// Sizes: a traced model's MODULE_<entry hash> folder, else the graphs add's record names.
void measure_sizes(Configurations& by_key, const RegistryIndex& index, const RepositoryOpener& open,
                   const CatalogOptions& options)
{
  std::vector<Configuration*> recorded;
  for (auto& [key, found] : by_key) {
    auto& configuration = found.configuration;
    configuration.size = module_size(index, configuration.compiler_dir, configuration.hash);
    if (!configuration.size && !configuration.model_id.empty()
        && (!options.model_id || configuration.model_id == *options.model_id)
        && index.attribution_records.count(attribution_path(configuration.compiler_version, configuration.hash))
             != 0U) {
      recorded.push_back(&configuration);
    }
  }
  if (recorded.empty()) {
    return;
  }
  auto repo = open();
  hubcache::util::parallel_for(recorded.size(), std::max(1U, options.parallelism), [&](std::size_t i) {
    auto& configuration = *recorded[i];
    auto path = attribution_path(configuration.compiler_version, configuration.hash);
    try {
      configuration.size =
        folders_size(index, attributed_modules(repo->read_file(path), path, configuration.compiler_dir));
    } catch (const hubcache::Error&) {
      // A record gone or unreadable leaves the size unknown; the listing stands.
    }
  });
}

// The configurations the options select, from the registry and the legacy registry.json.
void select_configurations(Configurations& by_key, const CatalogOptions& options, Catalog& catalog)
{
  catalog.configurations.reserve(by_key.size());
  for (auto& [key, found] : by_key) {
    auto& configuration = found.configuration;
    if (configuration.model_id.empty()) {
      continue; // unreadable digest-only copy: already reported as a warning
    }
    if (options.model_id && configuration.model_id != *options.model_id) {
      continue;
    }
    catalog.configurations.push_back(std::move(configuration));
  }
  if (!options.legacy_registry) {
    return;
  }
  for (auto& configuration : legacy_configurations(*options.legacy_registry, catalog.warnings)) {
    if ((options.compiler_version
         && !compiler_version_matches(configuration.compiler_version, *options.compiler_version))
        || (options.model_id && configuration.model_id != *options.model_id)) {
      continue;
    }
    catalog.configurations.push_back(std::move(configuration));
  }
}

// Sorted by model, compiler, then shape; one summary per model.
void sort_and_summarize(Catalog& catalog)
{
  auto order = [](const Configuration& configuration) {
    EntryShape shape;
    if (configuration.entry) {
      shape = entry_shape(*configuration.entry);
    }
    return std::make_tuple(configuration.model_id, configuration.compiler_version, configuration.registry_version,
                           shape.num_cores.value_or(0), shape.batch_size.value_or(0), shape.sequence_length.value_or(0),
                           configuration.hash);
  };
  std::sort(catalog.configurations.begin(), catalog.configurations.end(),
            [&](const Configuration& a, const Configuration& b) { return order(a) < order(b); });
  for (const auto& configuration : catalog.configurations) {
    if (catalog.models.empty() || catalog.models.back().model_id != configuration.model_id) {
      catalog.models.push_back(ModelSummary{configuration.model_id, {}, {}, 0, std::nullopt});
    }
    auto& model = catalog.models.back();
    if (!configuration.model_type.empty()) { // registry.json does not name model types
      model.model_types.insert(configuration.model_type);
    }
    model.compiler_versions.insert(configuration.compiler_version);
    ++model.configurations;
    if (configuration.size) {
      model.size = model.size.value_or(0) + *configuration.size;
    }
  }
}

} // namespace

Catalog build_catalog(const RegistryIndex& index, const RepositoryOpener& open, const CatalogOptions& options)
{
  Catalog catalog;
  auto by_key = group_paths(index, options);
  read_entries(by_key, open, options, catalog);
  measure_sizes(by_key, index, open, options);
  select_configurations(by_key, options, catalog);
  sort_and_summarize(catalog);
  return catalog;
}

} // namespace registry
