// to_diff_dict() emulation tables (what transformers 4.57 computes; see config_diff.hpp).
//
// Provenance (read through the public-code index, 2026-11; transformers' own main is v5 by now):
//   configuration_utils.py - PretrainedConfig.__init__, _get_global_generation_defaults, to_dict,
//     to_diff_dict, recursive_diff_dict, _remove_keys_not_serialized, dict_dtype_to_str,
//     get_text_config, from_dict: a 4.56-4.57 file (dtype argument beside torchscript and
//     pruned_heads, which v5 dropped); index file id 245946005, whose repository and commit
//     the index does not expose.
//   models/llama/configuration_llama.py - cyyever/transformers 2e772de3866593743c80cb7a0b5bb1cb6eb5820b
//     (pre-v5: rope_scaling + rope_config_validation); swiss-ai/transformers
//     83c688d3a6926dbdaaabdc6711acb71d6faa7335 is identical.
//   models/qwen2/configuration_qwen2.py - cyyever/transformers 2e772de3866593743c80cb7a0b5bb1cb6eb5820b (pre-v5).
//   models/mistral/configuration_mistral.py - feisenyu/transformers_4573 9c66b2210393d4bb7421896e6456d58fc369dfbf
//     (v5-dev rope_parameters form: every other default as here; rope_theta 10000.0 from 4.5x).
//   models/granite/configuration_granite.py - nishu-opsera/transformers-main 2b6079d76303a4157b1f3f104a45a7f89eae3d43
//     (v5 dataclass form; the same defaults, rope_theta 10000.0 from 4.5x).
//   models/mixtral/configuration_mixtral.py, models/t5/configuration_t5.py, models/gpt2/configuration_gpt2.py,
//     models/bert/configuration_bert.py - duyy97/transformers ebebfbf58043b749f47a2f701a161f0c12e5f107 (a 4.4x-era
//     fork); mixtral and granite also from zxy9657/transformers 1ff28dc623dbf2d41b68bd12db96fa3707829c03
//     (setup.py 4.52.0.dev0): MixtralConfig stores head_dim as given (None, as in v5 too), and
//     GraniteConfig has no rope_scaling "type" -> "rope_type" copy.
//   optimum-neuron cache/entries/cache_entry.py 1ca0561b21e3d26696c7fac56c409f599c3e657c (CACHE_WHITE_LIST,
//     14 keys with return_dict) and single_model.py 12817f200b34bd64415710d7bcefea50e5800b3e (to_diff_dict, the
//     whitelist, get_text_config for text-generation), huggingface/optimum-neuron.

#include "registry/config_diff.hpp"

#include <map>
#include <string>

namespace registry {

namespace {

using nlohmann::json;

// transformers 4.57 PretrainedConfig.__init__ and _get_global_generation_defaults().
json make_base_defaults()
{
  json defaults = {
    {"output_hidden_states", false},
    {"output_attentions", false},
    {"return_dict", true},
    {"torchscript", false},
    {"dtype", nullptr},
    {"pruned_heads", json::object()},
    {"tie_word_embeddings", true},
    {"chunk_size_feed_forward", 0},
    {"is_encoder_decoder", false},
    {"is_decoder", false},
    {"cross_attention_hidden_size", nullptr},
    {"add_cross_attention", false},
    {"tie_encoder_decoder", false},
    {"architectures", nullptr},
    {"finetuning_task", nullptr},
    {"id2label", {{"0", "LABEL_0"}, {"1", "LABEL_1"}}},
    {"label2id", {{"LABEL_0", 0}, {"LABEL_1", 1}}},
    {"task_specific_params", nullptr},
    {"problem_type", nullptr},
    {"tokenizer_class", nullptr},
    {"prefix", nullptr},
    {"bos_token_id", nullptr},
    {"pad_token_id", nullptr},
    {"eos_token_id", nullptr},
    {"sep_token_id", nullptr},
    {"decoder_start_token_id", nullptr},
    {"tf_legacy_loss", false},
    {"use_bfloat16", false},
    // Generation parameters kept on configs for backward compatibility.
    {"max_length", 20},
    {"min_length", 0},
    {"do_sample", false},
    {"early_stopping", false},
    {"num_beams", 1},
    {"num_beam_groups", 1},
    {"diversity_penalty", 0.0},
    {"temperature", 1.0},
    {"top_k", 50},
    {"top_p", 1.0},
    {"typical_p", 1.0},
    {"repetition_penalty", 1.0},
    {"length_penalty", 1.0},
    {"no_repeat_ngram_size", 0},
    {"encoder_no_repeat_ngram_size", 0},
    {"bad_words_ids", nullptr},
    {"num_return_sequences", 1},
    {"output_scores", false},
    {"return_dict_in_generate", false},
    {"forced_bos_token_id", nullptr},
    {"forced_eos_token_id", nullptr},
    {"remove_invalid_values", false},
    {"exponential_decay_length_penalty", nullptr},
    {"suppress_tokens", nullptr},
    {"begin_suppress_tokens", nullptr},
  };
  return defaults;
}

// The __init__ defaults of the model config classes (transformers 4.57), base keys the
// class overrides included. Derived attributes are computed in derive().
const std::map<std::string, json, std::less<>>& class_defaults()
{
  static const std::map<std::string, json, std::less<>> table = {
    {"llama", {{"vocab_size", 32000},        {"hidden_size", 4096},
               {"intermediate_size", 11008}, {"num_hidden_layers", 32},
               {"num_attention_heads", 32},  {"num_key_value_heads", nullptr},
               {"hidden_act", "silu"},       {"max_position_embeddings", 2048},
               {"initializer_range", 0.02},  {"rms_norm_eps", 1e-6},
               {"use_cache", true},          {"pad_token_id", nullptr},
               {"bos_token_id", 1},          {"eos_token_id", 2},
               {"pretraining_tp", 1},        {"tie_word_embeddings", false},
               {"rope_theta", 10000.0},      {"rope_scaling", nullptr},
               {"attention_bias", false},    {"attention_dropout", 0.0},
               {"mlp_bias", false},          {"head_dim", nullptr}}},
    {"mistral",
     {{"vocab_size", 32000},
      {"hidden_size", 4096},
      {"intermediate_size", 14336},
      {"num_hidden_layers", 32},
      {"num_attention_heads", 32},
      {"num_key_value_heads", 8},
      {"head_dim", nullptr},
      {"hidden_act", "silu"},
      {"max_position_embeddings", 4096 * 32},
      {"initializer_range", 0.02},
      {"rms_norm_eps", 1e-6},
      {"use_cache", true},
      {"pad_token_id", nullptr},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"tie_word_embeddings", false},
      {"rope_theta", 10000.0},
      {"sliding_window", 4096},
      {"attention_dropout", 0.0}}},
    {"mixtral",
     {{"vocab_size", 32000},
      {"hidden_size", 4096},
      {"intermediate_size", 14336},
      {"num_hidden_layers", 32},
      {"num_attention_heads", 32},
      {"num_key_value_heads", 8},
      {"head_dim", nullptr},
      {"hidden_act", "silu"},
      {"max_position_embeddings", 4096 * 32},
      {"initializer_range", 0.02},
      {"rms_norm_eps", 1e-5},
      {"use_cache", true},
      {"pad_token_id", nullptr},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"tie_word_embeddings", false},
      {"rope_theta", 1e6},
      {"sliding_window", nullptr},
      {"attention_dropout", 0.0},
      {"num_experts_per_tok", 2},
      {"num_local_experts", 8},
      {"output_router_logits", false},
      {"router_aux_loss_coef", 0.001},
      {"router_jitter_noise", 0.0}}},
    {"qwen2",
     {{"vocab_size", 151936},
      {"hidden_size", 4096},
      {"intermediate_size", 22016},
      {"num_hidden_layers", 32},
      {"num_attention_heads", 32},
      {"num_key_value_heads", 32},
      {"hidden_act", "silu"},
      {"max_position_embeddings", 32768},
      {"initializer_range", 0.02},
      {"rms_norm_eps", 1e-6},
      {"use_cache", true},
      {"tie_word_embeddings", false},
      {"rope_theta", 10000.0},
      {"rope_scaling", nullptr},
      {"use_sliding_window", false},
      {"sliding_window", 4096},
      {"max_window_layers", 28},
      {"layer_types", nullptr},
      {"attention_dropout", 0.0}}},
    {"granite",
     {{"vocab_size", 32000},
      {"hidden_size", 4096},
      {"intermediate_size", 11008},
      {"num_hidden_layers", 32},
      {"num_attention_heads", 32},
      {"num_key_value_heads", nullptr},
      {"hidden_act", "silu"},
      {"max_position_embeddings", 2048},
      {"initializer_range", 0.02},
      {"rms_norm_eps", 1e-6},
      {"use_cache", true},
      {"pad_token_id", nullptr},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"tie_word_embeddings", false},
      {"rope_theta", 10000.0},
      {"rope_scaling", nullptr},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"mlp_bias", false},
      {"embedding_multiplier", 1.0},
      {"logits_scaling", 1.0},
      {"residual_multiplier", 1.0},
      {"attention_multiplier", 1.0}}},
    {"gpt2",
     {{"vocab_size", 50257},
      {"n_positions", 1024},
      {"n_embd", 768},
      {"n_layer", 12},
      {"n_head", 12},
      {"n_inner", nullptr},
      {"activation_function", "gelu_new"},
      {"resid_pdrop", 0.1},
      {"embd_pdrop", 0.1},
      {"attn_pdrop", 0.1},
      {"layer_norm_epsilon", 1e-5},
      {"initializer_range", 0.02},
      {"summary_type", "cls_index"},
      {"summary_use_proj", true},
      {"summary_activation", nullptr},
      {"summary_proj_to_labels", true},
      {"summary_first_dropout", 0.1},
      {"scale_attn_weights", true},
      {"use_cache", true},
      {"bos_token_id", 50256},
      {"eos_token_id", 50256},
      {"scale_attn_by_inverse_layer_idx", false},
      {"reorder_and_upcast_attn", false}}},
    {"bert",
     {{"vocab_size", 30522},
      {"hidden_size", 768},
      {"num_hidden_layers", 12},
      {"num_attention_heads", 12},
      {"intermediate_size", 3072},
      {"hidden_act", "gelu"},
      {"hidden_dropout_prob", 0.1},
      {"attention_probs_dropout_prob", 0.1},
      {"max_position_embeddings", 512},
      {"type_vocab_size", 2},
      {"initializer_range", 0.02},
      {"layer_norm_eps", 1e-12},
      {"pad_token_id", 0},
      {"position_embedding_type", "absolute"},
      {"use_cache", true},
      {"classifier_dropout", nullptr}}},
    {"t5",
     {{"vocab_size", 32128},
      {"d_model", 512},
      {"d_kv", 64},
      {"d_ff", 2048},
      {"num_layers", 6},
      {"num_decoder_layers", nullptr},
      {"num_heads", 8},
      {"relative_attention_num_buckets", 32},
      {"relative_attention_max_distance", 128},
      {"dropout_rate", 0.1},
      {"layer_norm_epsilon", 1e-6},
      {"initializer_factor", 1.0},
      {"feed_forward_proj", "relu"},
      {"is_encoder_decoder", true},
      {"use_cache", true},
      {"pad_token_id", 0},
      {"eos_token_id", 1},
      {"classifier_dropout", 0.0}}},
  };
  return table;
}

// Class attribute_map: a config.json key under the standard name is set (through
// PretrainedConfig.__setattr__) on the class's own attribute, after the class's __init__
// derived its attributes from its named arguments.
const std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>>& attribute_maps()
{
  static const std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>> table = {
    {"gpt2",
     {{"hidden_size", "n_embd"},
      {"max_position_embeddings", "n_positions"},
      {"num_attention_heads", "n_head"},
      {"num_hidden_layers", "n_layer"}}},
    {"t5", {{"hidden_size", "d_model"}, {"num_attention_heads", "num_heads"}, {"num_hidden_layers", "num_layers"}}},
  };
  return table;
}

// What each class's __init__ computes from its arguments.
void derive(std::string_view model_type, json& attributes)
{
  auto number = [&](const char* key) -> std::optional<long long> {
    auto it = attributes.find(key);
    return it != attributes.end() && it->is_number_integer() ? std::optional(it->get<long long>()) : std::nullopt;
  };
  bool decoder = model_type == "llama" || model_type == "mistral" || model_type == "mixtral" || model_type == "qwen2"
                 || model_type == "granite";
  if (decoder && attributes.contains("num_key_value_heads") && attributes["num_key_value_heads"].is_null()) {
    attributes["num_key_value_heads"] = attributes["num_attention_heads"];
  }
  // MixtralConfig stores head_dim as given (None stays None).
  if ((model_type == "llama" || model_type == "mistral") && attributes.contains("head_dim")
      && attributes["head_dim"].is_null()) {
    auto hidden = number("hidden_size");
    auto heads = number("num_attention_heads");
    if (hidden && heads && *heads > 0) {
      // Python's floor division.
      auto quotient = *hidden / *heads;
      if ((*hidden % *heads != 0) && ((*hidden < 0) != (*heads < 0))) {
        --quotient;
      }
      attributes["head_dim"] = quotient;
    }
  }
  // GraniteConfig has no such BC copy.
  if ((model_type == "llama" || model_type == "qwen2") && attributes.contains("rope_scaling")
      && attributes["rope_scaling"].is_object() && attributes["rope_scaling"].contains("type")) {
    attributes["rope_scaling"]["rope_type"] = attributes["rope_scaling"]["type"];
  }
  if (model_type == "qwen2") {
    if (!(attributes.contains("use_sliding_window") && attributes["use_sliding_window"] == true)) {
      attributes["sliding_window"] = nullptr;
    }
    if (attributes["layer_types"].is_null()) {
      auto layers = number("num_hidden_layers").value_or(0);
      auto window_layers = number("max_window_layers").value_or(0);
      json types = json::array();
      for (long long i = 0; i < layers && i < 100000; ++i) {
        types.push_back(!attributes["sliding_window"].is_null() && i >= window_layers ? "sliding_attention"
                                                                                      : "full_attention");
      }
      attributes["layer_types"] = types;
    }
  }
  if (model_type == "t5") {
    if (attributes["num_decoder_layers"].is_null()) {
      attributes["num_decoder_layers"] = attributes["num_layers"];
    }
    if (attributes["feed_forward_proj"].is_string()) {
      auto proj = attributes["feed_forward_proj"].get<std::string>();
      auto dash = proj.rfind('-');
      attributes["dense_act_fn"] = dash == std::string::npos ? proj : proj.substr(dash + 1);
      attributes["is_gated_act"] = proj.substr(0, proj.find('-')) == "gated";
      if (proj == "gated-gelu") {
        attributes["dense_act_fn"] = "gelu_new";
      }
    }
  }
}

// The loaded config's to_dict(), from config.json (step 1 and 2 above).
json loaded_attributes(const json& config, std::string_view model_type)
{
  json attributes = make_base_defaults();
  const auto& classes = class_defaults();
  auto known = classes.find(model_type);
  if (known != classes.end()) {
    for (const auto& [key, value] : known->second.items()) {
      attributes[key] = value;
    }
  }
  json given = config;
  // torch_dtype is read as dtype (dtype wins when both are given).
  if (auto torch_dtype = given.find("torch_dtype"); torch_dtype != given.end()) {
    if (!torch_dtype->is_null() && (!given.contains("dtype") || given["dtype"].is_null())) {
      given["dtype"] = *torch_dtype;
    }
    given.erase("torch_dtype");
  }
  if (given.contains("num_labels") && (!given.contains("id2label") || given["id2label"].is_null())) {
    if (given["num_labels"].is_number_integer()) {
      auto labels = given["num_labels"].get<long long>();
      json id2label = json::object();
      json label2id = json::object();
      for (long long i = 0; i < labels && i < 100000; ++i) {
        id2label[std::to_string(i)] = "LABEL_" + std::to_string(i);
        label2id["LABEL_" + std::to_string(i)] = i;
      }
      attributes["id2label"] = id2label;
      attributes["label2id"] = label2id;
    }
  }
  for (const auto* popped : {"num_labels", "attn_implementation", "name_or_path", "_commit_hash"}) {
    given.erase(popped);
  }
  json mapped = json::object();
  if (auto aliases = attribute_maps().find(model_type); aliases != attribute_maps().end()) {
    for (const auto& [alias, target] : aliases->second) {
      if (auto it = given.find(alias); it != given.end()) {
        mapped[target] = *it;
        given.erase(it);
      }
    }
  }
  for (const auto& [key, value] : given.items()) {
    attributes[key] = value;
  }
  if (known != classes.end()) {
    derive(model_type, attributes);
  }
  for (const auto& [key, value] : mapped.items()) {
    attributes[key] = value;
  }
  attributes["model_type"] = std::string(model_type);
  return attributes;
}

json diff_of(const json& config, std::string_view model_type, bool top_level);

json diff_attributes(const json& attributes, std::string_view model_type, bool top_level)
{
  const auto& base = pretrained_config_defaults();
  const auto& classes = class_defaults();
  auto known = classes.find(model_type);
  json diff = json::object();
  for (const auto& [key, value] : attributes.items()) {
    if (value.is_object() && value.contains("model_type") && value["model_type"].is_string()) {
      // A sub-config (text_config, vision_config...): diffed as its own class.
      diff[key] = diff_of(value, value["model_type"].get_ref<const std::string&>(), false);
      continue;
    }
    auto base_value = base.find(key);
    if (base_value == base.end()) {
      diff[key] = value;
      continue;
    }
    auto class_value = *base_value;
    if (known != classes.end() && known->second.contains(key)) {
      class_value = known->second[key];
    }
    // to_diff_dict() keeps a base key that differs from either default; recursive_diff_dict()
    // (sub-configs) compares with the sub-config class's own default only.
    if ((top_level && value != *base_value) || value != class_value) {
      diff[key] = value;
    }
  }
  if (top_level) {
    diff.erase("_name_or_path"); // only to_diff_dict() itself drops it
  } else {
    diff.erase("transformers_version"); // a nested config's to_dict() loses it
    // A sub-config's _name_or_path (PretrainedConfig's default "") stays unless empty.
    if (auto name = diff.find("_name_or_path"); name != diff.end() && *name == "") {
      diff.erase(name);
    }
  }
  return diff;
}

json diff_of(const json& config, std::string_view model_type, bool top_level)
{
  return diff_attributes(loaded_attributes(config, model_type), model_type, top_level);
}

} // namespace

const nlohmann::json& pretrained_config_defaults()
{
  static const json defaults = make_base_defaults();
  return defaults;
}

bool knows_model_type(std::string_view model_type)
{
  return class_defaults().count(model_type) != 0U;
}

nlohmann::json to_diff_dict(const nlohmann::json& config)
{
  if (!config.is_object()) {
    return config;
  }
  auto model_type = config.find("model_type");
  std::string type = model_type != config.end() && model_type->is_string() ? model_type->get<std::string>() : "";
  return diff_of(config, type, true);
}

} // namespace registry
