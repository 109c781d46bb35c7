#pragma once

// The transformers config-class table (registry/data/transformers_config_classes.json,
// compiled in), read once. Private to the registry library.

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace registry::config_classes {

// How an __init__ operation names a value: one of the arguments, or a constant.
struct ValueSpec {
  std::string argument; // empty: `value`
  nlohmann::json value;
};

struct Operation {
  enum class Kind { store, constant, call_super, sub_config, rule };
  Kind kind = Kind::store;
  std::string attribute;                      // store, constant
  std::string argument;                       // store
  nlohmann::json value;                       // constant
  std::map<std::string, ValueSpec> arguments; // call_super; sub_config: default's arguments
  std::string key;                            // sub_config
  std::string sub_class;                      // sub_config: a model type, or "auto"
  std::string default_type;                   // sub_config: built when the argument is None
  std::string dict_type_default;              // sub_config: model_type of a dict without one
  std::string rule;                           // rule
};

struct ConfigClass {
  std::string model_type;
  std::string class_name;
  nlohmann::json arguments; // __init__ argument -> default
  std::vector<Operation> operations;
  std::map<std::string, std::string, std::less<>> attribute_map;
  std::map<std::string, std::string, std::less<>> sub_configs; // key -> model type or "auto"
  bool has_no_defaults_at_init = false;
};

// nullptr when the model type is not in the table.
const ConfigClass* find(std::string_view model_type);
// PretrainedConfig().to_dict() minus model_type and transformers_version.
const nlohmann::json& base_defaults();
const std::string& table_transformers_version();

} // namespace registry::config_classes
