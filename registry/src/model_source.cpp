#include "registry/model_source.hpp"

#include "registry/json_text.hpp"

#include <hubcache/error.hpp>
#include <hubcache/storage/repo_spec.hpp>
#include <hubcache/util/fs.hpp>

#include <system_error>

namespace registry {

std::optional<nlohmann::json> read_model_config_if_exists(const std::filesystem::path& file)
{
  auto text = hubcache::util::read_file_if_exists(file, k_max_model_config_bytes);
  if (!text) {
    return std::nullopt;
  }
  return parse_json(*text, file.string());
}

nlohmann::json read_model_config(const std::filesystem::path& file)
{
  return parse_json(hubcache::util::read_file(file, k_max_model_config_bytes), file.string());
}

bool has_model_type(const nlohmann::json& config)
{
  auto type = config.is_object() ? config.find("model_type") : config.end();
  return config.is_object() && type != config.end() && type->is_string();
}

std::optional<std::string> saved_from_hub_id(const nlohmann::json& config)
{
  auto name = config.is_object() ? config.find("_name_or_path") : config.end();
  if (!config.is_object() || name == config.end() || !name->is_string()) {
    return std::nullopt;
  }
  const auto& text = name->get_ref<const std::string&>();
  // A path ("/models/x", "./x") is not an id, even where it reads as one.
  if (text.find('/') == std::string::npos || text.starts_with("/") || text.starts_with(".")
      || !hubcache::storage::is_valid_hub_repo_id(text)) {
    return std::nullopt;
  }
  return text;
}

ModelConfigs model_configs_from_text(const std::string& config_json, const std::string& origin)
{
  ModelConfigs configs;
  configs.config = parse_json(config_json, origin);
  configs.origin = origin;
  return configs;
}

std::optional<ModelConfigs> read_local_model(const std::filesystem::path& path)
{
  std::error_code error;
  auto status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) {
    return std::nullopt;
  }
  ModelConfigs configs;
  configs.local = true;
  if (std::filesystem::is_regular_file(status)) {
    configs.config = read_model_config(path);
    configs.origin = path.string();
    return configs;
  }
  if (!std::filesystem::is_directory(status)) {
    throw hubcache::InvalidArgument(path.string() + " is neither a file nor a directory");
  }
  if (auto config = read_model_config_if_exists(path / "config.json")) {
    configs.config = std::move(*config);
    configs.origin = (path / "config.json").string();
    return configs;
  }
  // Must be valid even though the components carry the configs.
  if (read_model_config_if_exists(path / "model_index.json")) {
    configs.multi_model = true;
    configs.origin = (path / "model_index.json").string();
    configs.components = nlohmann::json::object();
    for (const auto& child : std::filesystem::directory_iterator(path)) {
      if (!child.is_directory()) {
        continue;
      }
      if (auto config = read_model_config_if_exists(child.path() / "config.json")) {
        configs.components[child.path().filename().string()] = std::move(*config);
      }
    }
    return configs;
  }
  throw hubcache::InvalidArgument(path.string() + " holds neither config.json nor model_index.json",
                                  "give a transformers or diffusers model directory, or a config.json file");
}

std::string model_id_of(const std::string& model, const ModelConfigs& configs)
{
  if (!configs.local || configs.multi_model) {
    return model;
  }
  return saved_from_hub_id(configs.config).value_or(model);
}

LookupTarget make_lookup_target(const std::string& model_id, const std::optional<std::string>& task,
                                const ModelConfigs& configs)
{
  if (configs.multi_model) {
    try {
      return make_multi_model_lookup_target(model_id, configs.components);
    } catch (const hubcache::InvalidArgument& error) {
      throw hubcache::InvalidArgument(configs.origin + ": " + error.what(), error.hint());
    }
  }
  if (!has_model_type(configs.config)) {
    throw hubcache::InvalidArgument(configs.origin + " has no model_type",
                                    "lookup needs a transformers config.json (or a diffusers model_index.json)");
  }
  return make_lookup_target(model_id, task, configs.config);
}

} // namespace registry
