// Reads the compiled-in config-class table once (see config_classes.hpp).
#include "config_classes.hpp"

#include <stdexcept>

namespace registry::config_classes {

extern const std::string_view k_table_json;

namespace {

using nlohmann::json;

ValueSpec value_spec(const json& spec)
{
  ValueSpec result;
  if (spec.contains("argument")) {
    result.argument = spec.at("argument").get<std::string>();
  } else {
    result.value = spec.at("value");
  }
  return result;
}

std::map<std::string, ValueSpec> value_specs(const json& specs)
{
  std::map<std::string, ValueSpec> result;
  for (const auto& [name, spec] : specs.items()) {
    result.emplace(name, value_spec(spec));
  }
  return result;
}

Operation operation(const json& op)
{
  static const std::map<std::string, Operation::Kind, std::less<>> kinds = {
    {"store", Operation::Kind::store},      {"const", Operation::Kind::constant},
    {"super", Operation::Kind::call_super}, {"sub_config", Operation::Kind::sub_config},
    {"rule", Operation::Kind::rule},
  };
  Operation result;
  auto kind = kinds.find(op.at("op").get<std::string>());
  if (kind == kinds.end()) {
    throw std::logic_error("config class table: unknown operation " + op.at("op").dump());
  }
  result.kind = kind->second;
  auto text = [&](const char* key) {
    return op.contains(key) && op[key].is_string() ? op[key].get<std::string>() : "";
  };
  result.attribute = text("attribute");
  result.argument = text("argument");
  result.key = text("key");
  result.sub_class = text("class");
  result.default_type = text("default_type");
  result.dict_type_default = text("dict_type_default");
  result.rule = text("rule");
  if (op.contains("value")) {
    result.value = op["value"];
  }
  if (result.kind == Operation::Kind::call_super) {
    result.arguments = value_specs(op.at("arguments"));
  } else if (result.kind == Operation::Kind::sub_config) {
    result.arguments = value_specs(op.at("default_arguments"));
  }
  return result;
}

struct Table {
  json base_defaults;
  std::string transformers_version;
  std::map<std::string, ConfigClass, std::less<>> classes;
};

Table load()
{
  auto document = json::parse(k_table_json);
  Table table;
  table.base_defaults = document.at("base_defaults");
  table.transformers_version = document.at("transformers_version").get<std::string>();
  for (const auto& [model_type, entry] : document.at("classes").items()) {
    ConfigClass cls;
    cls.model_type = model_type;
    cls.class_name = entry.at("class").get<std::string>();
    cls.arguments = entry.at("arguments");
    cls.has_no_defaults_at_init = entry.value("has_no_defaults_at_init", false);
    for (const auto& op : entry.at("operations")) {
      cls.operations.push_back(operation(op));
    }
    for (const auto& [from, to] : entry.at("attribute_map").items()) {
      cls.attribute_map.emplace(from, to.get<std::string>());
    }
    for (const auto& [key, type] : entry.at("sub_configs").items()) {
      cls.sub_configs.emplace(key, type.get<std::string>());
    }
    table.classes.emplace(model_type, std::move(cls));
  }
  return table;
}

const Table& table()
{
  static const Table loaded = load();
  return loaded;
}

} // namespace

const ConfigClass* find(std::string_view model_type)
{
  const auto& classes = table().classes;
  auto it = classes.find(model_type);
  return it == classes.end() ? nullptr : &it->second;
}

const nlohmann::json& base_defaults()
{
  return table().base_defaults;
}

const std::string& table_transformers_version()
{
  return table().transformers_version;
}

} // namespace registry::config_classes
