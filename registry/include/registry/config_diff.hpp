#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

// What transformers' `AutoConfig.from_pretrained(...).to_diff_dict()` returns for a
// config.json, without Python: optimum-neuron >= 0.4.5 files registry entries under
// sha256(json.dumps({model_type, task, config})) where `config` is that dict minus its
// whitelist, and 0.2 - 0.4.4 compared the same dicts. A config.json saved by another
// transformers version (or carrying keys at their default values) differs from it.
//
// The config classes are data: registry/data/transformers_config_classes.json, generated
// by tests/data/registry/generate_class_table.py from the configuration_<type>.py sources
// of the pinned transformers version (k_transformers_defaults_version): each class's
// __init__ arguments with their defaults, and its __init__ body as operations (store an
// argument, set a constant, call PretrainedConfig.__init__, build a sub-config, or apply a
// named rule such as head_dim = hidden_size // num_attention_heads; config_rules.cpp).
// config_diff.cpp runs those operations, then PretrainedConfig's own to_dict() and
// to_diff_dict() / recursive_diff_dict() with Python's equality (False == 0, 1 == 1.0).
// A model type outside the table gets PretrainedConfig's behaviour only: exact for a
// config.json the pinned transformers version saved, possibly not for older files.
namespace registry {

inline constexpr std::string_view k_transformers_defaults_version = "4.57.1";

// PretrainedConfig().to_dict() without model_type and transformers_version.
const nlohmann::json& pretrained_config_defaults();
// True when the model type's config class is in the table.
bool knows_model_type(std::string_view model_type);

struct DiffDict {
  std::string model_type;
  nlohmann::json config; // to_diff_dict()
  // False when the result rests on an approximation: a model type (or sub-config type)
  // outside the table, or a code path of a class the emulation does not follow.
  bool exact = true;
  std::string caveat; // why not exact
};

// The diff dict of a config.json object (non-objects are returned unchanged).
nlohmann::json to_diff_dict(const nlohmann::json& config);
DiffDict diff_dict(const nlohmann::json& config);
// to_diff_dict() of config.get_text_config() (what optimum hashes for text-generation):
// the text sub-config a composite config builds, or nullopt when the config has none.
std::optional<DiffDict> text_config_diff_dict(const nlohmann::json& config);

} // namespace registry
