#include "registry/entry.hpp"

#include "registry/json_text.hpp"

#include <hubcache/error.hpp>
#include <hubcache/util/hash.hpp>

#include <algorithm>

namespace registry {

const std::vector<std::string>& cache_white_list()
{
  static const std::vector<std::string> keys = {"_name_or_path",
                                                "transformers_version",
                                                "_diffusers_version",
                                                "eos_token_id",
                                                "bos_token_id",
                                                "pad_token_id",
                                                "torchscript",
                                                "torch_dtype",
                                                "_commit_hash",
                                                "sample_size",
                                                "projection_dim",
                                                "_use_default_values",
                                                "_attn_implementation_autoset",
                                                "return_dict"};
  return keys;
}

const std::vector<std::string>& neuron_config_white_list()
{
  static const std::vector<std::string> keys = {"input_names", "output_names", "model_type"};
  return keys;
}

bool is_unchecked_component(std::string_view name)
{
  return name == "vae" || name == "vae_encoder" || name == "vae_decoder";
}

nlohmann::json clean_config(nlohmann::json config)
{
  if (config.is_object()) {
    for (const auto& key : cache_white_list()) {
      config.erase(key);
    }
  }
  return config;
}

std::string_view to_string(EntryClass entry_class)
{
  return entry_class == EntryClass::single_model ? "SingleModelCacheEntry" : "MultiModelCacheEntry";
}

nlohmann::json CacheEntry::neuron_config() const
{
  if (entry_class == EntryClass::single_model) {
    return neuron;
  }
  for (const char* component : {"unet", "transformer", "encoder"}) {
    if (config.contains(component) && config[component].is_object() && config[component].contains("neuron")) {
      return config[component]["neuron"];
    }
  }
  return nullptr;
}

nlohmann::json CacheEntry::to_json() const
{
  nlohmann::json dict = config;
  if (entry_class == EntryClass::single_model) {
    dict["neuron"] = neuron;
  }
  dict["_entry_class"] = std::string(to_string(entry_class));
  dict["_model_id"] = model_id;
  dict["_task"] = task ? nlohmann::json(*task) : nlohmann::json(nullptr);
  return dict;
}

std::string CacheEntry::serialize() const
{
  return dumps_indented(to_json());
}

std::string CacheEntry::hash() const
{
  return hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha512, serialize()).substr(0, 20);
}

std::string CacheEntry::arch_digest() const
{
  if (entry_class == EntryClass::single_model) {
    return single_model_arch_digest(model_type, task, config);
  }
  return multi_model_arch_digest(model_type, config);
}

std::string single_model_arch_digest(const std::string& model_type, const std::optional<std::string>& task,
                                     const nlohmann::json& cleaned_config, bool live_config)
{
  nlohmann::json config = cleaned_config;
  config.erase("neuron");
  nlohmann::json arch = {
    {"model_type", model_type}, {"task", task ? nlohmann::json(*task) : nlohmann::json(nullptr)}, {"config", config}};
  return hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha256,
                                    live_config ? dumps_compact_live_config(arch) : dumps_compact(arch));
}

std::string multi_model_arch_digest(const std::string& model_type, const nlohmann::json& component_configs)
{
  nlohmann::json configs = nlohmann::json::object();
  for (const auto& [name, component] : component_configs.items()) {
    if (is_unchecked_component(name)) {
      continue;
    }
    // The entry's own keys share the dict with the components (as in optimum's serialize):
    // a folder of that name would be overwritten and the entry never read back as written.
    if (name == "_entry_class" || name == "_model_id" || name == "_task") {
      throw hubcache::InvalidArgument("the model has a component folder named '" + name
                                        + "', which a registry entry cannot hold (the name is the entry's own key)",
                                      "rename or remove that folder");
    }
    auto cleaned = clean_config(component);
    if (cleaned.is_object()) {
      cleaned.erase("neuron");
    }
    configs[name] = cleaned;
  }
  nlohmann::json arch = {{"model_type", model_type}, {"configs", configs}};
  return hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha256, dumps_compact(arch));
}

std::string multi_model_type(const nlohmann::json& component_configs)
{
  if (component_configs.contains("unet")) {
    return "stable-diffusion";
  }
  if (component_configs.contains("transformer")) {
    return "diffusion-transformer";
  }
  if (component_configs.contains("encoder") && component_configs["encoder"].is_object()
      && component_configs["encoder"].value("model_type", nlohmann::json()).is_string()) {
    return component_configs["encoder"]["model_type"].get<std::string>();
  }
  throw hubcache::InvalidArgument("multi-model configs have no unet, transformer or encoder component",
                                  "only diffusers pipelines and encoder-decoder models are supported");
}

namespace {

std::string model_type_of(const nlohmann::json& config, const std::string& what)
{
  if (!config.is_object()) {
    throw hubcache::InvalidArgument(what + " is not a JSON object");
  }
  auto model_type = config.contains("model_type") ? config["model_type"] : nlohmann::json();
  if (!model_type.is_string() || model_type.get_ref<const std::string&>().empty()) {
    throw hubcache::InvalidArgument(what + " has no model_type", "is it a transformers config.json?");
  }
  return model_type.get<std::string>();
}

} // namespace

CacheEntry make_registry_entry(const std::string& model_id, const std::optional<std::string>& task,
                               const nlohmann::json& model_config, const nlohmann::json& neuron_config)
{
  CacheEntry entry;
  entry.entry_class = EntryClass::single_model;
  entry.model_id = model_id;
  entry.task = task;
  entry.model_type = model_type_of(model_config, "the model config");
  entry.config = clean_config(model_config);
  entry.config.erase("neuron");
  entry.neuron = neuron_config;
  return entry;
}

CacheEntry make_multi_model_entry(const std::string& model_id, const nlohmann::json& component_configs)
{
  if (!component_configs.is_object()) {
    throw hubcache::InvalidArgument("multi-model configs must be a JSON object of components");
  }
  CacheEntry entry;
  entry.entry_class = EntryClass::multi_model;
  entry.model_id = model_id;
  entry.model_type = multi_model_type(component_configs);
  for (const auto& [name, component] : component_configs.items()) {
    if (is_unchecked_component(name)) {
      continue;
    }
    // The entry's own keys share the dict with the components (as in optimum's serialize):
    // a folder of that name would be overwritten and the entry never read back as written.
    if (name == "_entry_class" || name == "_model_id" || name == "_task") {
      throw hubcache::InvalidArgument("the model has a component folder named '" + name
                                        + "', which a registry entry cannot hold (the name is the entry's own key)",
                                      "rename or remove that folder");
    }
    auto cleaned = clean_config(component);
    if (cleaned.is_object() && cleaned.contains("neuron") && cleaned["neuron"].is_object()) {
      for (const auto& key : neuron_config_white_list()) {
        cleaned["neuron"].erase(key);
      }
    }
    entry.config[name] = cleaned;
  }
  return entry;
}

CacheEntry CacheEntry::deserialize(std::string_view text, const std::string& what,
                                   const std::optional<std::string>& legacy_model_id)
{
  auto dict = parse_json(text, what);
  if (!dict.is_object()) {
    throw hubcache::InvalidArgument(what + " is not a JSON object");
  }
  if (!dict.contains("_entry_class") && legacy_model_id && dict.contains("model_type")) {
    dict["_entry_class"] = std::string(to_string(EntryClass::single_model));
    dict["_model_id"] = *legacy_model_id;
  }
  // Copies, not iterators: g++ 12 -Wnull-dereference misreads nlohmann's find() here.
  nlohmann::json entry_class = dict.contains("_entry_class") ? dict["_entry_class"] : nlohmann::json();
  nlohmann::json model_id = dict.contains("_model_id") ? dict["_model_id"] : nlohmann::json();
  if (!entry_class.is_string() || !model_id.is_string()) {
    throw hubcache::InvalidArgument(what + " lacks _entry_class or _model_id");
  }
  CacheEntry entry;
  entry.model_id = model_id.get<std::string>();
  if (dict.contains("_task") && dict["_task"].is_string()) {
    entry.task = dict["_task"].get<std::string>();
  }
  auto class_name = entry_class.get<std::string>();
  dict.erase("_entry_class");
  dict.erase("_model_id");
  dict.erase("_task");
  if (class_name == to_string(EntryClass::single_model)) {
    entry.entry_class = EntryClass::single_model;
    entry.neuron = dict.contains("neuron") ? dict["neuron"] : nlohmann::json(nullptr);
    dict.erase("neuron");
    entry.model_type = model_type_of(dict, what);
    entry.config = std::move(dict);
  } else if (class_name == to_string(EntryClass::multi_model)) {
    entry.entry_class = EntryClass::multi_model;
    try {
      entry.model_type = multi_model_type(dict);
    } catch (const hubcache::InvalidArgument&) {
      throw hubcache::InvalidArgument(what + " is a multi-model entry without unet, transformer or encoder");
    }
    entry.config = std::move(dict);
  } else {
    throw hubcache::InvalidArgument(what + ": invalid cache entry of type " + class_name);
  }
  return entry;
}

} // namespace registry
