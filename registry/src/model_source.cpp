#include "registry/model_source.hpp"

#include "registry/json_text.hpp"

#include <hubcache/error.hpp>
#include <hubcache/storage/repo_spec.hpp>
#include <hubcache/util/fs.hpp>

#include <system_error>

namespace registry {

namespace {

nlohmann::json read_json_file(const std::filesystem::path& path)
{
  return parse_json(hubcache::util::read_file(path), path.string());
}

} // namespace

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
    configs.config = read_json_file(path);
    configs.origin = path.string();
    return configs;
  }
  if (!std::filesystem::is_directory(status)) {
    throw hubcache::InvalidArgument(path.string() + " is neither a file nor a directory");
  }
  if (std::filesystem::exists(path / "config.json", error)) {
    configs.config = read_json_file(path / "config.json");
    configs.origin = (path / "config.json").string();
    return configs;
  }
  if (std::filesystem::exists(path / "model_index.json", error)) {
    configs.multi_model = true;
    configs.origin = (path / "model_index.json").string();
    read_json_file(path / "model_index.json"); // must be valid even though components carry the configs
    configs.components = nlohmann::json::object();
    for (const auto& child : std::filesystem::directory_iterator(path)) {
      if (child.is_directory() && std::filesystem::exists(child.path() / "config.json")) {
        configs.components[child.path().filename().string()] = read_json_file(child.path() / "config.json");
      }
    }
    return configs;
  }
  throw hubcache::InvalidArgument(path.string() + " holds neither config.json nor model_index.json",
                                  "give a transformers or diffusers model directory, or a config.json file");
}

std::string model_id_of(const std::string& model, const ModelConfigs& configs)
{
  if (!configs.local || configs.multi_model || !configs.config.is_object()) {
    return model;
  }
  auto name = configs.config.find("_name_or_path");
  if (name == configs.config.end() || !name->is_string()) {
    return model;
  }
  const auto& text = name->get_ref<const std::string&>();
  return text.find('/') != std::string::npos && !text.starts_with("/") && !text.starts_with(".")
             && hubcache::storage::is_valid_hub_repo_id(text)
           ? text
           : model;
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
  if (!configs.config.is_object() || !configs.config.contains("model_type")
      || !configs.config["model_type"].is_string()) {
    throw hubcache::InvalidArgument(configs.origin + " has no model_type",
                                    "lookup needs a transformers config.json (or a diffusers model_index.json)");
  }
  return make_lookup_target(model_id, task, configs.config);
}

} // namespace registry
