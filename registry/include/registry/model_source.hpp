#pragma once

#include "registry/lookup.hpp"

#include <cstdint>
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

// The one reader of a model's config files on disk (config.json, model_index.json), for
// lookup and add alike. They come from anywhere (a download, a shared directory): the file
// must be a regular one (a FIFO or a device is refused, never waited on) of at most
// k_max_model_config_bytes, and its JSON is parsed within util's bounds (size, nesting
// depth). nullopt when the file does not exist; IoError when it cannot be read or is no
// regular file; InvalidArgument naming the file when it is not JSON.
inline constexpr std::uint64_t k_max_model_config_bytes = std::uint64_t{64} << 20;
std::optional<nlohmann::json> read_model_config_if_exists(const std::filesystem::path& file);
// The same for a file that must exist (IoError when missing).
nlohmann::json read_model_config(const std::filesystem::path& file);

// Whether `config` is a transformers model config: an object with a model_type string.
bool has_model_type(const nlohmann::json& config);

// The Hub id (org/name) a saved model came from: its config's `_name_or_path`, as
// transformers records it, when that is one; nullopt for a path or anything else.
std::optional<std::string> saved_from_hub_id(const nlohmann::json& config);

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
