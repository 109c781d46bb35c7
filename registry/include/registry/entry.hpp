#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// optimum-neuron registry entries (SingleModelCacheEntry / MultiModelCacheEntry): one
// compiled configuration of a model, serialized byte-identically to optimum so the
// file names (hashes of the text) agree.
namespace registry {

// Keys optimum drops from a model config before comparing or storing it.
const std::vector<std::string>& cache_white_list();
// Keys dropped from each component's "neuron" dict in multi-model entries.
const std::vector<std::string>& neuron_config_white_list();
// Diffusers components optimum leaves out of multi-model entries.
bool is_unchecked_component(std::string_view name);

// A config.json object without the CACHE_WHITE_LIST keys (a copy; non-objects unchanged).
nlohmann::json clean_config(nlohmann::json config);

enum class EntryClass { single_model, multi_model };
std::string_view to_string(EntryClass entry_class);

class CacheEntry {
public:
  EntryClass entry_class = EntryClass::single_model;
  std::string model_id;
  std::optional<std::string> task; // null for multi-model entries
  std::string model_type;
  // Single: the cleaned model config without "neuron". Multi: {component: cleaned config
  // including its "neuron" dict}.
  nlohmann::json config = nlohmann::json::object();
  // Single: the neuron config as stored (loose JSON, may be null). Multi: empty object;
  // use neuron_config().
  nlohmann::json neuron = nullptr;

  // The neuron config optimum shows for the entry (multi: the unet/transformer one).
  nlohmann::json neuron_config() const;
  // optimum's to_dict() plus the three "_" metadata keys.
  nlohmann::json to_json() const;
  // json.dumps(to_json(), indent=2, sort_keys=True): the registry file content.
  std::string serialize() const;
  // First 20 hex digits of sha512(serialize()): the registry file name without ".json".
  std::string hash() const;
  // sha256 of the compact JSON of the architecture (model_type, task, config): the
  // directory name optimum >= 0.4.5 files entries under.
  std::string arch_digest() const;

  // Parses a registry file; throws hubcache::InvalidArgument naming `what` when the
  // text is not an entry optimum could read. Entries from optimum <= 0.0.20 have no
  // "_" keys: they are read as single-model entries of `legacy_model_id` (from the path).
  static CacheEntry deserialize(std::string_view text, const std::string& what = "registry entry",
                                const std::optional<std::string>& legacy_model_id = std::nullopt);
};

// The entry `add` writes: config.json content (cleaned here) plus a neuron config.
// Throws InvalidArgument when the config is not an object with a string model_type.
CacheEntry make_registry_entry(const std::string& model_id, const std::optional<std::string>& task,
                               const nlohmann::json& model_config, const nlohmann::json& neuron_config);

// A diffusers pipeline entry from its components' configs ({"unet": {...}, ...}).
CacheEntry make_multi_model_entry(const std::string& model_id, const nlohmann::json& component_configs);

// Arch digest of an entry-to-be whose configs may still hold "neuron" keys (ignored).
// live_config: the config as a PretrainedConfig holds it (to_diff_dict() of a loaded
// config), whose id2label keys are ints (see dumps_compact_live_config).
std::string single_model_arch_digest(const std::string& model_type, const std::optional<std::string>& task,
                                     const nlohmann::json& cleaned_config, bool live_config = false);
std::string multi_model_arch_digest(const std::string& model_type, const nlohmann::json& component_configs);
// stable-diffusion when a unet is present, diffusion-transformer with a transformer,
// else the encoder's model_type; throws InvalidArgument otherwise.
std::string multi_model_type(const nlohmann::json& component_configs);

} // namespace registry
