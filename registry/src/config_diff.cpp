// to_diff_dict() emulation (see config_diff.hpp): the config classes come from the
// generated table (config_classes.hpp); PretrainedConfig itself (its __init__, to_dict,
// to_diff_dict, recursive_diff_dict, get_text_config) is restated here from transformers
// 4.57's configuration_utils.py, pinned in tests/data/registry/transformers_source.py.
#include "registry/config_diff.hpp"

#include "config_classes.hpp"
#include "config_rules.hpp"

#include <map>
#include <memory>
#include <string>

namespace registry {

namespace {

using config_classes::ConfigClass;
using config_classes::Operation;
using config_rules::python_equal;
using nlohmann::json;

constexpr int k_max_depth = 8; // sub-configs of sub-configs: bounded for hostile input

// A config object as transformers holds it after from_dict().
struct Loaded {
  std::string model_type;
  const ConfigClass* cls = nullptr;
  json attributes = json::object();                           // __dict__ but sub-configs
  std::map<std::string, std::shared_ptr<Loaded>> sub_configs; // attributes that are configs
  bool exact = true;
  std::string caveat;

  void inexact(const std::string& why)
  {
    if (exact) {
      caveat = why;
    }
    exact = false;
  }
};

std::shared_ptr<Loaded> load(std::string_view model_type, json given, int depth);

// PretrainedConfig.__init__'s named parameters that are not attributes of the same name.
const json& generation_defaults()
{
  static const json defaults = [] {
    json d = json::object();
    for (const auto* key : {"max_length",
                            "min_length",
                            "do_sample",
                            "early_stopping",
                            "num_beams",
                            "num_beam_groups",
                            "diversity_penalty",
                            "temperature",
                            "top_k",
                            "top_p",
                            "typical_p",
                            "repetition_penalty",
                            "length_penalty",
                            "no_repeat_ngram_size",
                            "encoder_no_repeat_ngram_size",
                            "bad_words_ids",
                            "num_return_sequences",
                            "output_scores",
                            "return_dict_in_generate",
                            "forced_bos_token_id",
                            "forced_eos_token_id",
                            "remove_invalid_values",
                            "exponential_decay_length_penalty",
                            "suppress_tokens",
                            "begin_suppress_tokens"}) {
      d[key] = config_classes::base_defaults().at(key);
    }
    return d;
  }();
  return defaults;
}

// Python's {int(key): value for key, value in d.items()}: keys become ints, which
// json.dumps writes back as decimal strings ("01" -> "1").
json int_keyed(const json& map, Loaded& config)
{
  if (!map.is_object()) {
    return map;
  }
  json result = json::object();
  for (const auto& [key, value] : map.items()) {
    try {
      std::size_t used = 0;
      auto number = std::stoll(key, &used);
      if (used != key.size()) {
        throw std::invalid_argument(key);
      }
      result[std::to_string(number)] = value;
    } catch (const std::exception&) {
      config.inexact("a label map key is not an integer");
      result[key] = value;
    }
  }
  return result;
}

// setattr(self, key, value) as PretrainedConfig.__setattr__ and its properties do it.
void set_attribute(Loaded& config, std::string key, const json& value)
{
  if (config.cls != nullptr) {
    if (auto mapped = config.cls->attribute_map.find(key); mapped != config.cls->attribute_map.end()) {
      key = mapped->second;
    }
  }
  if (key == "_attn_implementation") {
    return; // a property: stored as _attn_implementation_internal, never serialized
  }
  if (key == "torch_dtype") {
    key = "dtype"; // a property setting dtype
  }
  if (key == "name_or_path") {
    key = "_name_or_path";
  }
  config.attributes[key] = value;
}

json resolve(const config_classes::ValueSpec& spec, const json& arguments)
{
  if (spec.argument.empty()) {
    return spec.value;
  }
  auto it = arguments.find(spec.argument);
  return it == arguments.end() ? json() : *it;
}

// PretrainedConfig.__init__(**explicit, **kwargs).
void base_init(Loaded& config, const json& explicit_arguments, json kwargs)
{
  const auto& defaults = config_classes::base_defaults();
  auto take = [&](const char* name) -> json {
    if (auto it = explicit_arguments.find(name); it != explicit_arguments.end()) {
      return *it;
    }
    if (auto it = kwargs.find(name); it != kwargs.end()) {
      json value = *it;
      kwargs.erase(it);
      return value;
    }
    if (std::string_view(name) == "num_labels" || std::string_view(name) == "dtype") {
      return nullptr;
    }
    return defaults.at(name);
  };
  json dtype = take("dtype");
  if (auto torch_dtype = kwargs.find("torch_dtype"); torch_dtype != kwargs.end()) {
    if (!torch_dtype->is_null() && dtype.is_null()) {
      dtype = *torch_dtype;
    }
    kwargs.erase(torch_dtype);
  }
  auto& a = config.attributes;
  for (const auto* key : {"return_dict", "output_hidden_states", "torchscript"}) {
    a[key] = take(key);
  }
  a["dtype"] = dtype;
  a["_output_attentions"] = take("output_attentions");
  json pruned = take("pruned_heads");
  a["pruned_heads"] = pruned.is_null() ? json::object() : pruned;
  for (const auto* key : {"tie_word_embeddings", "chunk_size_feed_forward", "is_encoder_decoder", "is_decoder",
                          "cross_attention_hidden_size", "add_cross_attention", "tie_encoder_decoder", "architectures",
                          "finetuning_task"}) {
    a[key] = take(key);
  }
  json id2label = explicit_arguments.contains("id2label") || kwargs.contains("id2label") ? take("id2label") : json();
  json label2id = explicit_arguments.contains("label2id") || kwargs.contains("label2id") ? take("label2id") : json();
  json num_labels = take("num_labels");
  a["task_specific_params"] = take("task_specific_params");
  a["problem_type"] = take("problem_type");
  if (id2label.is_null()) {
    auto count = num_labels.is_number_integer() ? num_labels.get<long long>() : 2;
    id2label = json::object();
    label2id = json::object();
    for (long long i = 0; i < count && i < 100000; ++i) {
      id2label[std::to_string(i)] = "LABEL_" + std::to_string(i);
      label2id["LABEL_" + std::to_string(i)] = i;
    }
  } else {
    id2label = int_keyed(id2label, config); // label2id stays as given, None included
  }
  a["id2label"] = id2label;
  a["label2id"] = label2id;
  for (const auto* key : {"tokenizer_class", "prefix", "bos_token_id", "pad_token_id", "eos_token_id", "sep_token_id",
                          "decoder_start_token_id"}) {
    a[key] = take(key);
  }
  for (const auto& [key, value] : generation_defaults().items()) {
    auto it = kwargs.find(key);
    a[key] = it == kwargs.end() ? value : *it;
    if (it != kwargs.end()) {
      kwargs.erase(it);
    }
  }
  auto name = kwargs.find("name_or_path");
  a["_name_or_path"] = name != kwargs.end() && name->is_string() ? *name : json("");
  if (name != kwargs.end()) {
    kwargs.erase(name);
  }
  kwargs.erase("_commit_hash");
  kwargs.erase("attn_implementation");
  a["transformers_version"] = kwargs.contains("transformers_version") ? kwargs["transformers_version"] : json();
  kwargs.erase("transformers_version");
  for (const auto& [key, value] : kwargs.items()) {
    set_attribute(config, key, value);
  }
}

void build_sub_config(Loaded& config, const Operation& op, const json& arguments, int depth)
{
  json given = arguments.contains(op.key) ? arguments[op.key] : json();
  std::string type;
  json source;
  if (given.is_object()) {
    source = given;
    if (op.sub_class == "auto") {
      auto model_type = given.find("model_type");
      type =
        model_type != given.end() && model_type->is_string() ? model_type->get<std::string>() : op.dict_type_default;
      source["model_type"] = type;
    } else {
      type = op.sub_class;
    }
  } else if (given.is_null()) {
    type = op.default_type;
    source = json::object();
    for (const auto& [name, spec] : op.arguments) {
      source[name] = resolve(spec, arguments);
    }
  } else {
    config.inexact(op.key + " is neither an object nor null");
    return;
  }
  auto sub = load(type, source, depth + 1);
  if (!sub->exact) {
    config.inexact(sub->caveat);
  }
  config.sub_configs[op.key] = std::move(sub);
}

// cls(**config_dict) for a class of the table.
void run_class_init(Loaded& config, json given, int depth)
{
  const auto& cls = *config.cls;
  json arguments = cls.arguments;
  json kwargs = json::object();
  for (auto& [key, value] : given.items()) {
    if (arguments.contains(key)) {
      arguments[key] = value;
    } else {
      kwargs[key] = value;
    }
  }
  config_rules::InitState state{arguments, config.attributes, kwargs};
  for (const auto& op : cls.operations) {
    switch (op.kind) {
    case Operation::Kind::store: {
      auto it = arguments.find(op.argument);
      set_attribute(config, op.attribute, it == arguments.end() ? json() : *it);
      break;
    }
    case Operation::Kind::constant: set_attribute(config, op.attribute, op.value); break;
    case Operation::Kind::call_super: {
      json explicit_arguments = json::object();
      for (const auto& [name, spec] : op.arguments) {
        explicit_arguments[name] = resolve(spec, arguments);
      }
      base_init(config, explicit_arguments, kwargs);
      break;
    }
    case Operation::Kind::sub_config: build_sub_config(config, op, arguments, depth); break;
    case Operation::Kind::rule:
      if (!config_rules::apply(op.rule, state)) {
        config.inexact("rule " + op.rule + " of " + cls.class_name + " is not implemented");
      }
      break;
    }
  }
  if (!state.exact) {
    config.inexact(cls.class_name + " computes an attribute from a value of an unexpected form");
  }
}

std::shared_ptr<Loaded> load(std::string_view model_type, json given, int depth)
{
  auto config = std::make_shared<Loaded>();
  config->model_type = std::string(model_type);
  config->cls = config_classes::find(model_type);
  if (depth > k_max_depth) {
    config->inexact("sub-configs nest too deeply");
    return config;
  }
  given.erase("attn_implementation"); // from_dict passes attn_implementation=None
  if (config->cls != nullptr) {
    run_class_init(*config, std::move(given), depth);
  } else {
    // A class outside the table: PretrainedConfig's behaviour, its object-valued keys
    // with a model_type built as configs of that type.
    config->inexact("model type \"" + std::string(model_type) + "\" is not in the transformers "
                    + config_classes::table_transformers_version() + " class table");
    json kwargs = json::object();
    for (auto& [key, value] : given.items()) {
      if (value.is_object() && value.contains("model_type") && value["model_type"].is_string()) {
        auto sub = load(value["model_type"].get<std::string>(), value, depth + 1);
        config->sub_configs[key] = std::move(sub);
      } else {
        kwargs[key] = value;
      }
    }
    base_init(*config, json::object(), kwargs);
  }
  return config;
}

// _remove_keys_not_serialized(), recursively.
void remove_keys_not_serialized(json& d)
{
  for (const auto* key :
       {"_auto_class", "_commit_hash", "_attn_implementation_internal", "base_model_tp_plan", "base_model_pp_plan"}) {
    d.erase(key);
  }
  if (auto it = d.find("_output_attentions"); it != d.end()) {
    json value = *it;
    d.erase(it);
    d["output_attentions"] = value;
  }
  for (auto& [key, value] : d.items()) {
    if (value.is_object()) {
      remove_keys_not_serialized(value);
    }
  }
}

json to_dict(const Loaded& config)
{
  json output = config.attributes;
  for (const auto& [key, sub] : config.sub_configs) {
    json value = to_dict(*sub);
    value.erase("transformers_version");
    output[key] = value;
  }
  output["model_type"] = config.model_type; // the class's model_type
  output["transformers_version"] = std::string(k_transformers_defaults_version);
  remove_keys_not_serialized(output);
  return output;
}

// PretrainedConfig().to_dict().
const json& base_config_dict()
{
  static const json dict = [] {
    json d = config_classes::base_defaults();
    d["model_type"] = "";
    d["transformers_version"] = std::string(k_transformers_defaults_version);
    return d;
  }();
  return dict;
}

json class_default_dict(const Loaded& config)
{
  if (config.cls == nullptr) {
    json base = base_config_dict();
    base["model_type"] = config.model_type;
    return base;
  }
  if (config.cls->has_no_defaults_at_init) {
    return json::object();
  }
  return to_dict(*load(config.model_type, json::object(), 0));
}

json recursive_diff_dict(const json& dict_a, const json& dict_b, const Loaded* config)
{
  json diff = json::object();
  json defaults = config != nullptr ? class_default_dict(*config) : json::object();
  for (const auto& [key, value] : dict_a.items()) {
    const Loaded* nested = nullptr;
    if (config != nullptr) {
      if (auto it = config->sub_configs.find(key); it != config->sub_configs.end()) {
        nested = it->second.get();
      }
    }
    auto base = dict_b.find(key);
    if (nested != nullptr && base != dict_b.end() && base->is_object()) {
      diff[key] = recursive_diff_dict(value, *base, nested);
    } else if (base == dict_b.end() || !defaults.contains(key) || !python_equal(value, defaults[key])) {
      diff[key] = value;
    }
  }
  return diff;
}

json diff_of(const Loaded& config)
{
  json config_dict = to_dict(config);
  const auto& defaults = base_config_dict();
  json class_dict = class_default_dict(config);
  json diff = json::object();
  for (const auto& [key, value] : config_dict.items()) {
    bool is_sub_config =
      config.sub_configs.count(key) != 0U
      && ((class_dict.contains(key) && class_dict[key].is_object())
          || (config.cls != nullptr && config.cls->sub_configs.count(key) != 0U) || config.cls == nullptr);
    if (is_sub_config) {
      json sub_diff = recursive_diff_dict(value, defaults, config.sub_configs.at(key).get());
      if (value.contains("model_type")) {
        sub_diff["model_type"] = value["model_type"];
      }
      diff[key] = sub_diff;
      continue;
    }
    auto base = defaults.find(key);
    bool keep = base == defaults.end() || key == "transformers_version" || key == "vocab_file"
                || !python_equal(value, *base) || (class_dict.contains(key) && !python_equal(value, class_dict[key]));
    if (keep) {
      diff[key] = value;
    }
  }
  remove_keys_not_serialized(diff);
  diff.erase("_name_or_path");
  return diff;
}

std::shared_ptr<Loaded> from_config_json(const json& config)
{
  auto model_type = config.find("model_type");
  std::string type = model_type != config.end() && model_type->is_string() ? model_type->get<std::string>() : "";
  auto loaded = load(type, config, 0);
  // from_dict(): pruned_heads keys become ints.
  if (auto pruned = loaded->attributes.find("pruned_heads"); pruned != loaded->attributes.end()) {
    *pruned = int_keyed(*pruned, *loaded);
  }
  return loaded;
}

DiffDict result_of(const Loaded& config)
{
  return DiffDict{config.model_type, diff_of(config), config.exact, config.caveat};
}

} // namespace

const nlohmann::json& pretrained_config_defaults()
{
  return config_classes::base_defaults();
}

bool knows_model_type(std::string_view model_type)
{
  return config_classes::find(model_type) != nullptr;
}

DiffDict diff_dict(const nlohmann::json& config)
{
  if (!config.is_object()) {
    return DiffDict{"", config, false, "the config is not a JSON object"};
  }
  return result_of(*from_config_json(config));
}

nlohmann::json to_diff_dict(const nlohmann::json& config)
{
  return diff_dict(config).config;
}

std::optional<DiffDict> text_config_diff_dict(const nlohmann::json& config)
{
  if (!config.is_object()) {
    return std::nullopt;
  }
  auto loaded = from_config_json(config);
  // get_text_config(): the one of these attributes that is set, else the config itself.
  const Loaded* text = nullptr;
  for (const auto* name : {"text_encoder", "decoder", "generator", "text_config"}) {
    if (auto it = loaded->sub_configs.find(name); it != loaded->sub_configs.end()) {
      if (text != nullptr) {
        return std::nullopt; // transformers raises: ambiguous
      }
      text = it->second.get();
    }
  }
  if (text == nullptr) {
    return std::nullopt;
  }
  auto result = result_of(*text);
  if (!loaded->exact) {
    result.exact = false;
    result.caveat = loaded->caveat;
  }
  return result;
}

} // namespace registry
