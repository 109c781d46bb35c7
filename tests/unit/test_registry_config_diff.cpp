// to_diff_dict() parity: our emulation (registry/src/config_diff.cpp and its class table)
// against vectors computed by transformers' own config classes, run from the pinned
// 4.57 sources, and optimum-neuron's digest formula
// (tests/data/registry/generate_diff_vectors.py); the tests never run Python.
#include <doctest/doctest.h>

#include <hubcache/util/fs.hpp>
#include <registry/config_diff.hpp>
#include <registry/entry.hpp>
#include <registry/json_text.hpp>
#include <registry/layout.hpp>
#include <registry/lookup.hpp>

namespace registry_config_diff_test {

namespace {

const nlohmann::json& vectors()
{
  static const nlohmann::json data = nlohmann::json::parse(
    hubcache::util::read_file(std::string(NEURON_CACHE_TEST_DATA) + "/registry/diff_vectors.json"));
  return data;
}

nlohmann::json parse(const nlohmann::json& text)
{
  return registry::parse_json(text.get<std::string>(), "vector");
}

// SingleModelCacheEntry's config on the lookup side: get_text_config() for
// text-generation, to_diff_dict(), the whitelist.
nlohmann::json optimum_config(const nlohmann::json& config, const std::string& task)
{
  auto source = registry::diff_dict(config);
  if (task == "text-generation") {
    if (auto text = registry::text_config_diff_dict(config)) {
      source = *text;
    }
  }
  auto diff = registry::clean_config(source.config);
  diff.erase("neuron");
  return diff;
}

registry::LoadedEntry loaded(const nlohmann::json& file)
{
  auto location = registry::parse_registry_path(file["path"].get<std::string>());
  REQUIRE(location);
  REQUIRE(location->kind != registry::RegistryPathKind::unexpected);
  auto content = file["content"].get<std::string>();
  std::optional<std::string> legacy_id;
  if (location->kind == registry::RegistryPathKind::alias) {
    legacy_id = location->model_id;
  }
  return registry::LoadedEntry{*location, registry::CacheEntry::deserialize(content, location->path, legacy_id), "",
                               content.size()};
}

} // namespace

TEST_CASE("config diff: PretrainedConfig's defaults are transformers 4.57's")
{
  CHECK(vectors()["transformers_version"] == std::string(registry::k_transformers_defaults_version));
  CHECK(registry::pretrained_config_defaults() == parse(vectors()["base_defaults"]));
  // The class table states the version it was generated from.
  auto table =
    registry::parse_json(hubcache::util::read_file(std::string(NEURON_CACHE_TEST_DATA)
                                                   + "/../../registry/data/transformers_config_classes.json"),
                         "table");
  CHECK(table["transformers_version"] == std::string(registry::k_transformers_defaults_version));
  CHECK(table["transformers_revision"] == vectors()["transformers_revision"]);
}

// Every digest optimum computes for a vector: its to_diff_dict() and lookup's target.
void check_vector(const nlohmann::json& vector)
{
  auto config = parse(vector["config"]);
  auto task = vector["task"].get<std::string>();
  auto diff = optimum_config(config, task);
  // The vectors are json.dumps of the loaded config (id2label keys are ints there).
  CHECK(registry::dumps_compact_live_config(diff) == vector["diff_config"].get<std::string>());
  auto model_type = vector["model_type"].get<std::string>();
  CHECK(registry::single_model_arch_digest(model_type, task, diff, true) == vector["arch_digest"].get<std::string>());
  // lookup computes it too (without --task: every known task, image-text-to-text included).
  for (const auto& wanted : {std::optional<std::string>(task), std::optional<std::string>()}) {
    auto target = registry::make_lookup_target("acme/model", wanted, config);
    CHECK(target.digests.count(vector["arch_digest"].get<std::string>()) == 1);
  }
}

TEST_CASE("config diff: to_diff_dict() and the arch digest match optimum's for every vector")
{
  const auto& cases = vectors()["single"];
  REQUIRE(cases.size() >= 15);
  for (const auto& vector : cases) {
    auto name = vector["name"].get<std::string>();
    CAPTURE(name);
    check_vector(vector);
  }
}

TEST_CASE("config diff: public config.json files, their fine-tunes and local copies give optimum's digest")
{
  const auto& cases = vectors()["public"];
  REQUIRE(cases.size() >= 18);
  std::map<std::string, std::string> digests;
  for (const auto& vector : cases) {
    auto name = vector["name"].get<std::string>();
    CAPTURE(name);
    check_vector(vector);
    digests[name + " " + vector["task"].get<std::string>()] = vector["arch_digest"].get<std::string>();
  }
  // A fine-tune and a local copy are the same architecture: the same digest.
  for (const auto& entry : digests) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const auto& name = entry.first;
    const auto& digest = entry.second;
    auto plus = name.find('+');
    if (plus != std::string::npos) {
      CAPTURE(name);
      CHECK(digest == digests.at(name.substr(0, plus) + name.substr(name.find(' '))));
    }
  }
}

TEST_CASE("config diff: a config.json with default-valued keys, a fine-tuned copy and a local directory share a "
          "digest")
{
  std::map<std::string, std::string> digests;
  for (const auto& vector : vectors()["single"]) {
    digests[vector["name"].get<std::string>()] = vector["arch_digest"].get<std::string>();
  }
  // transformers 4.57 has no use_bfloat16 attribute any more (TensorFlow support went):
  // an older config.json that carries it keeps it in its diff dict.
  CHECK(digests.at("hub-llama-with-default-keys") != digests.at("hub-llama-as-4.57-saves-it"));
  const auto& hub = digests.at("hub-llama-with-default-keys");
  CHECK(digests.at("finetuned-copy") == hub);
  CHECK(digests.at("local-directory") == hub);
  CHECK(digests.at("vlm-text-generation") != digests.at("vlm-image-text-to-text"));
}

TEST_CASE("config diff: id2label keys order as numbers only in a loaded config")
{
  nlohmann::json config = {{"model_type", "bert"}, {"id2label", nlohmann::json::object()}};
  for (int i = 0; i < 11; ++i) {
    config["id2label"][std::to_string(i)] = "L";
  }
  config["pruned"] = {{"10", 1}, {"9", 2}}; // not an id2label: stays a string-keyed dict
  auto live = registry::dumps_compact_live_config(config);
  CHECK(live.find(R"("8": "L", "9": "L", "10": "L")") != std::string::npos);
  CHECK(live.find(R"("pruned": {"10": 1, "9": 2})") != std::string::npos);
  auto read_back = registry::dumps_compact(config);
  CHECK(read_back.find(R"("1": "L", "10": "L", "2": "L")") != std::string::npos);
  // Keys Python's int() reads differently are written as str(int(key)).
  CHECK(registry::dumps_compact_live_config({{"id2label", {{"01", "a"}, {"-0", "b"}}}})
        == R"({"id2label": {"0": "b", "1": "a"}})");
  // Not all ints: left as strings, as PretrainedConfig would have refused the config anyway.
  CHECK(registry::dumps_compact_live_config({{"id2label", {{"x", "a"}, {"10", "b"}, {"9", "c"}}}})
        == R"({"id2label": {"10": "b", "9": "c", "x": "a"}})");
}

TEST_CASE("config diff: the diffusers digest is over the raw component configs")
{
  for (const auto& vector : vectors()["multi"]) {
    auto components = parse(vector["components"]);
    auto target = registry::make_multi_model_lookup_target("acme/sd", components);
    CHECK(target.digests.count(vector["arch_digest"].get<std::string>()) == 1);
  }
}

TEST_CASE("config diff: lookup finds the entries of every optimum generation, for the model and its fine-tuned copy")
{
  const auto& files = vectors()["registries"];
  REQUIRE(files.size() == 4);
  nlohmann::json hub_config, finetuned_config;
  for (const auto& vector : vectors()["single"]) {
    if (vector["name"] == "hub-llama-with-default-keys") {
      hub_config = parse(vector["config"]);
    }
    if (vector["name"] == "finetuned-copy") {
      finetuned_config = parse(vector["config"]);
    }
  }
  auto model = registry::make_lookup_target("acme/old-llama", std::nullopt, hub_config);
  auto finetuned = registry::make_lookup_target("me/old-llama-ft", std::nullopt, finetuned_config);
  for (const auto& file : files) {
    auto generation = file["generation"].get<std::string>();
    CAPTURE(generation);
    auto entry = loaded(file);
    auto for_model = registry::match_entry(entry, model);
    REQUIRE(for_model);
    auto for_finetuned = registry::match_entry(entry, finetuned);
    if (generation == "0.0.18") {
      // Raw config.json compared whole, as optimum 0.0.18 did: only the model's own name.
      CHECK(*for_model == registry::MatchReason::same_model_id);
      CHECK_FALSE(for_finetuned);
    } else if (generation == "0.4.5") {
      CHECK(*for_model == registry::MatchReason::arch_digest);
      REQUIRE(for_finetuned);
      CHECK(*for_finetuned == registry::MatchReason::arch_digest);
    } else {
      // 0.0.21 - 0.4.4 stored the cleaned diff dict: its digest (computed from the
      // entry) is the model's, as has_same_arch would compare them equal.
      CHECK(*for_model == registry::MatchReason::arch_digest);
      REQUIRE(for_finetuned);
      CHECK(*for_finetuned == registry::MatchReason::arch_digest);
      auto stored = entry.entry.config;
      stored.erase("neuron");
      CHECK(stored == finetuned.diff_config);
    }
  }
}

TEST_CASE("config diff: non-objects and unknown model types")
{
  CHECK(registry::to_diff_dict(nlohmann::json::array()) == nlohmann::json::array());
  CHECK_FALSE(registry::knows_model_type("olmo2"));
  for (const auto* type : {"llama", "gemma3_text", "gemma3", "granite", "llama4_text", "mixtral", "phi3", "qwen2",
                           "qwen3", "qwen3_moe", "smollm3", "idefics3", "siglip_vision_model", "clip_vision_model"}) {
    CAPTURE(type);
    CHECK(registry::knows_model_type(type));
  }
  // Only PretrainedConfig's keys at their defaults go; everything else stays.
  auto result = registry::diff_dict(
    {{"model_type", "olmo2"}, {"return_dict", true}, {"custom", false}, {"top_k", 50}, {"top_p", 0.9}});
  CHECK(result.config
        == nlohmann::json(
          {{"model_type", "olmo2"}, {"custom", false}, {"top_p", 0.9}, {"transformers_version", "4.57.1"}}));
  CHECK_FALSE(result.exact);
  CHECK(result.caveat.find("olmo2") != std::string::npos);
  CHECK(registry::diff_dict({{"model_type", "qwen3"}}).exact);
}

TEST_CASE("config diff: PretrainedConfig's edge cases follow transformers")
{
  std::map<std::string, nlohmann::json> diffs;
  for (const auto& vector : vectors()["single"]) {
    diffs[vector["name"].get<std::string>()] = parse(vector["diff_config"]);
  }
  // _attn_implementation goes through a property: never serialized.
  CHECK_FALSE(diffs.at("edge:attn-implementation-key").contains("_attn_implementation"));
  CHECK(diffs.at("edge:attn-implementation-key") == diffs.at("hub-llama-with-default-keys"));
  // id2label without label2id: label2id stays None, which differs from the default map.
  CHECK(diffs.at("edge:id2label-without-label2id")["label2id"].is_null());
  // False == 0, True == 1, 50.0 == 50: dropped like the defaults they equal.
  CHECK(diffs.at("edge:bool-for-int") == diffs.at("hub-llama-with-default-keys"));
  // pruned_heads has int keys: "9" before "10" in the digest's JSON.
  auto pruned = registry::to_diff_dict({{"model_type", "bert"}, {"pruned_heads", {{"10", {1}}, {"9", {2}}}}});
  CHECK(registry::dumps_compact_live_config(pruned).find(R"("pruned_heads": {"9": [2], "10": [1]})")
        != std::string::npos);
}

TEST_CASE("config diff: the class rules follow transformers 4.57")
{
  // LlamaConfig derives head_dim; MistralConfig (4.57) keeps None.
  CHECK(registry::to_diff_dict({{"model_type", "llama"}, {"hidden_size", 64}, {"num_attention_heads", 4}})["head_dim"]
        == 16);
  CHECK(registry::to_diff_dict({{"model_type", "mistral"}, {"hidden_size", 64}, {"num_attention_heads", 4}})["head_dim"]
          .is_null());
  // Qwen3: layer_types from max_window_layers when sliding is used.
  auto qwen3 = registry::to_diff_dict({{"model_type", "qwen3"},
                                       {"num_hidden_layers", 3},
                                       {"use_sliding_window", true},
                                       {"sliding_window", 8},
                                       {"max_window_layers", 1}});
  CHECK(qwen3["layer_types"] == nlohmann::json({"full_attention", "sliding_attention", "sliding_attention"}));
  // Gemma3: every sliding_window_pattern-th layer is full; bidirectional halves the window.
  auto gemma = registry::to_diff_dict({{"model_type", "gemma3_text"},
                                       {"num_hidden_layers", 4},
                                       {"sliding_window_pattern", 2},
                                       {"use_bidirectional_attention", true},
                                       {"sliding_window", 512}});
  CHECK(gemma["layer_types"]
        == nlohmann::json({"sliding_attention", "full_attention", "sliding_attention", "full_attention"}));
  CHECK(gemma["sliding_window"] == 257);
  CHECK(gemma["_sliding_window_pattern"] == 2);
  // SmolLM3: every no_rope_layer_interval-th layer has no RoPE.
  auto smol =
    registry::to_diff_dict({{"model_type", "smollm3"}, {"num_hidden_layers", 4}, {"no_rope_layer_interval", 2}});
  CHECK(smol["no_rope_layers"] == nlohmann::json({1, 0, 1, 0}));
  // Llama4 text: chunked attention on RoPE layers, MoE layers by step.
  auto llama4 =
    registry::to_diff_dict({{"model_type", "llama4_text"}, {"num_hidden_layers", 4}, {"interleave_moe_layer_step", 2}});
  CHECK(llama4["moe_layers"] == nlohmann::json({1, 3}));
  CHECK(llama4["layer_types"]
        == nlohmann::json({"chunked_attention", "chunked_attention", "chunked_attention", "full_attention"}));
  // Phi3: "su" / "yarn" rope scaling is read as "longrope".
  auto phi3 = registry::to_diff_dict({{"model_type", "phi3"}, {"rope_scaling", {{"type", "su"}}}});
  CHECK(phi3["rope_scaling"]["type"] == "longrope");
  // A hostile layer count stays bounded.
  auto huge = registry::diff_dict({{"model_type", "qwen3"}, {"num_hidden_layers", 1LL << 40}});
  CHECK(huge.config["layer_types"].size() == 100000);
}

} // namespace registry_config_diff_test
