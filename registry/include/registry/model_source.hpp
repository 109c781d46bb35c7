#pragma once

#include "registry/lookup.hpp"

#include <filesystem>
#include <optional>
#include <string>

// The configs of the model `lookup` searches for.
namespace registry {

struct ModelConfigs {
  bool multi_model = false;
  nlohmann::json config;     // single model: config.json
  nlohmann::json components; // diffusers: {"unet": config.json, ...} from */config.json
  std::string origin;        // the file or directory read, for messages
  bool local = false;        // read from disk (else from the Hub)
};

// A local model: a config.json file, a directory with config.json, or a diffusers
// directory with model_index.json and <component>/config.json. nullopt when `path` does
// not exist; InvalidArgument when it exists but holds no readable model config.
std::optional<ModelConfigs> read_local_model(const std::filesystem::path& path);

// From the text of a Hub model's config.json.
ModelConfigs model_configs_from_text(const std::string& config_json, const std::string& origin);

// The id entries of the model are filed under: a Hub id as given; for a local model the
// `_name_or_path` of its config when that is a Hub id (org/name), as transformers records
// where a saved model came from; else the path as given.
std::string model_id_of(const std::string& model, const ModelConfigs& configs);

LookupTarget make_lookup_target(const std::string& model_id, const std::optional<std::string>& task,
                                const ModelConfigs& configs);

} // namespace registry
