// Each rule restates, once, one computation a transformers 4.57 config class makes in
// __init__; the source text it stands for is in tests/data/registry/generate_class_table.py
// (RULES), and test_registry_config_diff.cpp checks each against transformers itself.
#include "config_rules.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace registry::config_rules {

namespace {

using nlohmann::json;

constexpr long long k_max_layers = 100000; // a hostile num_hidden_layers stays bounded

std::optional<long long> integer(const json& value)
{
  if (value.is_boolean()) {
    return value.get<bool>() ? 1 : 0;
  }
  if (value.is_number_integer()) {
    return value.get<long long>();
  }
  return std::nullopt;
}

const json& get(const json& object, const char* key)
{
  static const json null_value;
  auto it = object.find(key);
  return it == object.end() ? null_value : *it;
}

// Python's floor division and modulo on ints.
long long floor_div(long long a, long long b)
{
  auto quotient = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? quotient - 1 : quotient;
}
long long floor_mod(long long a, long long b)
{
  return a - floor_div(a, b) * b;
}

// range(count) as a bounded loop; nullopt when count is not an int.
std::optional<long long> layer_count(const json& value)
{
  auto count = integer(value);
  if (!count) {
    return std::nullopt;
  }
  return *count < 0 ? 0 : (*count > k_max_layers ? k_max_layers : *count);
}

using Rule = std::function<void(InitState&)>;

void kv_heads_from_heads(InitState& s)
{
  if (get(s.arguments, "num_key_value_heads").is_null()) {
    s.arguments["num_key_value_heads"] = get(s.arguments, "num_attention_heads");
  }
}

void head_dim_from_heads(InitState& s)
{
  const auto& given = get(s.arguments, "head_dim");
  if (!given.is_null()) {
    s.attributes["head_dim"] = given;
    return;
  }
  auto hidden = integer(get(s.attributes, "hidden_size"));
  auto heads = integer(get(s.attributes, "num_attention_heads"));
  if (hidden && heads && *heads != 0) {
    s.attributes["head_dim"] = floor_div(*hidden, *heads);
  } else {
    s.exact = false; // transformers raises or gives a float here
  }
}

void rope_type_from_type(InitState& s)
{
  auto& scaling = s.attributes["rope_scaling"];
  if (scaling.is_object() && scaling.contains("type")) {
    scaling["rope_type"] = scaling["type"];
  }
}

void sliding_window_if_used(InitState& s)
{
  s.attributes["sliding_window"] =
    python_truthy(get(s.arguments, "use_sliding_window")) ? get(s.arguments, "sliding_window") : json();
}

void layer_types_from_max_window(InitState& s)
{
  if (!get(s.attributes, "layer_types").is_null()) {
    return;
  }
  auto layers = layer_count(get(s.attributes, "num_hidden_layers"));
  auto window_layers = integer(get(s.attributes, "max_window_layers"));
  bool sliding = !get(s.attributes, "sliding_window").is_null();
  if (!layers || (sliding && !window_layers)) {
    s.exact = false;
    return;
  }
  json types = json::array();
  for (long long i = 0; i < *layers; ++i) {
    types.push_back(sliding && i >= *window_layers ? "sliding_attention" : "full_attention");
  }
  s.attributes["layer_types"] = types;
}

void bidirectional_sliding_window(InitState& s)
{
  if (!python_truthy(get(s.arguments, "use_bidirectional_attention"))) {
    return;
  }
  auto window = integer(get(s.attributes, "sliding_window"));
  if (window) {
    s.attributes["sliding_window"] = floor_div(*window, 2) + 1;
  } else {
    s.exact = false;
  }
}

void sliding_window_pattern(InitState& s)
{
  s.attributes["_sliding_window_pattern"] =
    s.kwargs.contains("sliding_window_pattern") ? s.kwargs["sliding_window_pattern"] : json(6);
}

void layer_types_from_sliding_pattern(InitState& s)
{
  if (!get(s.attributes, "layer_types").is_null()) {
    return;
  }
  auto layers = layer_count(get(s.attributes, "num_hidden_layers"));
  auto pattern = integer(get(s.attributes, "_sliding_window_pattern"));
  if (!layers || !pattern || *pattern == 0) {
    s.exact = false;
    return;
  }
  json types = json::array();
  for (long long i = 0; i < *layers; ++i) {
    types.push_back(floor_mod(i + 1, *pattern) != 0 ? "sliding_attention" : "full_attention");
  }
  s.attributes["layer_types"] = types;
}

// [int((i + 1) % interval != 0) for i in range(layers)]
std::optional<json> rope_layer_flags(const json& layers_value, const json& interval_value)
{
  auto layers = layer_count(layers_value);
  auto interval = integer(interval_value);
  if (!layers || !interval || *interval == 0) {
    return std::nullopt;
  }
  json flags = json::array();
  for (long long i = 0; i < *layers; ++i) {
    flags.push_back(floor_mod(i + 1, *interval) != 0 ? 1 : 0);
  }
  return flags;
}

void no_rope_layers_from_interval(InitState& s)
{
  const auto& given = get(s.arguments, "no_rope_layers");
  if (!given.is_null()) {
    s.attributes["no_rope_layers"] = given;
    return;
  }
  auto flags = rope_layer_flags(get(s.arguments, "num_hidden_layers"), get(s.arguments, "no_rope_layer_interval"));
  if (flags) {
    s.attributes["no_rope_layers"] = *flags;
  } else {
    s.exact = false;
  }
}

void layer_types_from_no_rope_sliding(InitState& s)
{
  if (!get(s.arguments, "layer_types").is_null()) {
    return;
  }
  auto layers = layer_count(get(s.arguments, "num_hidden_layers"));
  const auto& no_rope = get(s.attributes, "no_rope_layers");
  if (!layers || !no_rope.is_array() || static_cast<long long>(no_rope.size()) < *layers) {
    s.exact = false;
    return;
  }
  bool sliding = python_truthy(get(s.arguments, "use_sliding_window")) && !get(s.arguments, "sliding_window").is_null();
  json types = json::array();
  for (long long i = 0; i < *layers; ++i) {
    bool has_rope = python_truthy(no_rope[static_cast<std::size_t>(i)]);
    types.push_back(sliding && !has_rope ? "sliding_attention" : "full_attention");
  }
  s.arguments["layer_types"] = types; // a local: stored by the next `self.layer_types = layer_types`
}

void llama4_no_rope_layers(InitState& s)
{
  auto given = get(s.arguments, "no_rope_layers");
  if (given.is_array() && given.empty()) {
    given = nullptr;
  }
  if (python_truthy(given)) {
    s.attributes["no_rope_layers"] = given;
    return;
  }
  auto flags = rope_layer_flags(get(s.attributes, "num_hidden_layers"), get(s.arguments, "no_rope_layer_interval"));
  if (flags) {
    s.attributes["no_rope_layers"] = *flags;
  } else {
    s.exact = false;
  }
}

void moe_layers_from_step(InitState& s)
{
  const auto& given = get(s.arguments, "moe_layers");
  if (!given.is_null()) {
    s.attributes["moe_layers"] = given;
    return;
  }
  auto step = integer(get(s.arguments, "interleave_moe_layer_step"));
  auto layers = layer_count(get(s.arguments, "num_hidden_layers"));
  if (!step || !layers || *step <= 0) {
    s.exact = false;
    return;
  }
  json layer_ids = json::array();
  for (long long i = *step - 1; i < *layers; i += *step) {
    layer_ids.push_back(i);
  }
  s.attributes["moe_layers"] = layer_ids;
}

void layer_types_chunked_from_no_rope(InitState& s)
{
  if (!get(s.arguments, "layer_types").is_null()) {
    return;
  }
  const auto& no_rope = get(s.attributes, "no_rope_layers");
  if (!no_rope.is_array()) {
    s.exact = false;
    return;
  }
  json types = json::array();
  for (const auto& flag : no_rope) {
    types.push_back(python_truthy(flag) ? "chunked_attention" : "full_attention");
  }
  s.attributes["layer_types"] = types;
}

void phi3_rope_scaling_longrope(InitState& s)
{
  auto& scaling = s.attributes["rope_scaling"];
  if (scaling.is_object() && scaling.contains("type") && (scaling["type"] == "su" || scaling["type"] == "yarn")) {
    scaling["type"] = "longrope";
  }
}

void mlp_only_layers_default_empty(InitState& s)
{
  const auto& given = get(s.arguments, "mlp_only_layers");
  s.attributes["mlp_only_layers"] = given.is_null() ? json::array() : given;
}

void projection_size_from_hidden(InitState& s)
{
  const auto& given = get(s.arguments, "projection_size");
  s.attributes["projection_size"] = given.is_null() ? get(s.arguments, "hidden_size") : given;
}

void num_decoder_layers_from_layers(InitState& s)
{
  const auto& given = get(s.arguments, "num_decoder_layers");
  s.attributes["num_decoder_layers"] = given.is_null() ? get(s.attributes, "num_layers") : given;
}

void t5_dense_act_fn(InitState& s)
{
  const auto& proj = get(s.attributes, "feed_forward_proj");
  if (!proj.is_string()) {
    s.exact = false;
    return;
  }
  const auto& text = proj.get_ref<const std::string&>();
  auto last_dash = text.rfind('-');
  s.attributes["dense_act_fn"] = last_dash == std::string::npos ? text : text.substr(last_dash + 1);
  s.attributes["is_gated_act"] = text.substr(0, text.find('-')) == "gated";
  if (get(s.arguments, "feed_forward_proj") == "gated-gelu") {
    s.attributes["dense_act_fn"] = "gelu_new";
  }
}

void llama4_vision_feature_layer(InitState& s)
{
  s.attributes["_vision_feature_layer"] =
    s.kwargs.contains("vision_feature_layer") ? s.kwargs["vision_feature_layer"] : json(-1);
}

void clip_legacy_config_dicts(InitState& s)
{
  // CLIPConfig's text_config_dict / vision_config_dict (pre-4.27 files) merge into the
  // sub-configs; not followed here.
  if (s.kwargs.contains("text_config_dict") || s.kwargs.contains("vision_config_dict")) {
    s.exact = false;
  }
}

const std::map<std::string, Rule, std::less<>>& rules()
{
  static const std::map<std::string, Rule, std::less<>> table = {
    {"kv_heads_from_heads", kv_heads_from_heads},
    {"head_dim_from_heads", head_dim_from_heads},
    {"rope_type_from_type", rope_type_from_type},
    {"sliding_window_if_used", sliding_window_if_used},
    {"layer_types_from_max_window", layer_types_from_max_window},
    {"bidirectional_sliding_window", bidirectional_sliding_window},
    {"sliding_window_pattern", sliding_window_pattern},
    {"layer_types_from_sliding_pattern", layer_types_from_sliding_pattern},
    {"no_rope_layers_from_interval", no_rope_layers_from_interval},
    {"layer_types_from_no_rope_sliding", layer_types_from_no_rope_sliding},
    {"llama4_no_rope_layers", llama4_no_rope_layers},
    {"moe_layers_from_step", moe_layers_from_step},
    {"layer_types_chunked_from_no_rope", layer_types_chunked_from_no_rope},
    {"phi3_rope_scaling_longrope", phi3_rope_scaling_longrope},
    {"mlp_only_layers_default_empty", mlp_only_layers_default_empty},
    {"projection_size_from_hidden", projection_size_from_hidden},
    {"num_decoder_layers_from_layers", num_decoder_layers_from_layers},
    {"t5_dense_act_fn", t5_dense_act_fn},
    {"llama4_vision_feature_layer", llama4_vision_feature_layer},
    {"clip_legacy_config_dicts", clip_legacy_config_dicts},
  };
  return table;
}

} // namespace

bool python_equal(const json& a, const json& b)
{
  bool a_number = a.is_number() || a.is_boolean();
  bool b_number = b.is_number() || b.is_boolean();
  if (a_number && b_number) {
    auto ai = integer(a);
    auto bi = integer(b);
    if (ai && bi) {
      // Unsigned values above INT64_MAX only equal themselves.
      auto huge = [](const json& v) {
        return v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX);
      };
      if (huge(a) || huge(b)) {
        return huge(a) && huge(b) && a.get<std::uint64_t>() == b.get<std::uint64_t>();
      }
      return *ai == *bi;
    }
    auto as_double = [](const json& v) { return v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>(); };
    return as_double(a) == as_double(b);
  }
  if (a.type() != b.type()) {
    return false;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) {
      return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!python_equal(a[i], b[i])) {
        return false;
      }
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) {
      return false;
    }
    for (const auto& [key, value] : a.items()) {
      auto other = b.find(key);
      if (other == b.end() || !python_equal(value, *other)) {
        return false;
      }
    }
    return true;
  }
  return a == b;
}

bool python_truthy(const json& value)
{
  switch (value.type()) {
  case json::value_t::null: return false;
  case json::value_t::boolean: return value.get<bool>();
  case json::value_t::number_integer:
  case json::value_t::number_unsigned: return value.get<long long>() != 0;
  case json::value_t::number_float: return value.get<double>() != 0.0;
  case json::value_t::string:
  case json::value_t::array:
  case json::value_t::object: return !value.empty();
  default: return false;
  }
}

bool apply(std::string_view rule, InitState& state)
{
  auto it = rules().find(rule);
  if (it == rules().end()) {
    return false;
  }
  it->second(state);
  return true;
}

} // namespace registry::config_rules
