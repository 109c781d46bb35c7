#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

// What transformers' `AutoConfig.from_pretrained(...).to_diff_dict()` returns for a
// config.json, without Python: optimum-neuron >= 0.4.5 files registry entries under
// sha256(json.dumps({model_type, task, config})) where `config` is that dict minus its
// whitelist, and 0.2 - 0.4.4 compared the same dicts. A config.json saved by another
// transformers version (or carrying keys at their default values) differs from it.
//
// The emulation, in transformers' order:
//   1. the model class's __init__ attributes (known model types only) with the
//      config.json values over them, and the attributes the class derives
//      (num_key_value_heads, head_dim, rope_type, layer_types, T5's activation...);
//      torch_dtype read as dtype, num_labels as id2label/label2id;
//   2. to_dict(): model_type, transformers_version;
//   3. to_diff_dict(): a key of PretrainedConfig's own defaults is dropped when its value
//      equals that default and the model class's default (keys the class does not
//      override are dropped on the base default alone); every other key is kept;
//      _name_or_path, _commit_hash and attn_implementation never appear.
// Sub-configs (text_config, vision_config...) follow recursive_diff_dict(): a key of
// PretrainedConfig's defaults stays only when it differs from the sub-config class's own
// default (the base default is not compared). Keys under a class's attribute_map names
// (T5's and GPT-2's hidden_size, num_hidden_layers...) land on the class's own attributes. The tables live in
// config_diff.cpp, with the transformers version they follow (k_transformers_defaults_version).
namespace registry {

inline constexpr std::string_view k_transformers_defaults_version = "4.57.1";

// PretrainedConfig().to_dict() without model_type and transformers_version.
const nlohmann::json& pretrained_config_defaults();
// True when the model type's class defaults are known (others get steps 2-3 only:
// exact for a config.json the same transformers version saved).
bool knows_model_type(std::string_view model_type);
// The diff dict of a config.json object (non-objects are returned unchanged).
nlohmann::json to_diff_dict(const nlohmann::json& config);

} // namespace registry
