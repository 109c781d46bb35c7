// to_diff_dict() parity: our emulation (registry/src/config_diff.cpp) against vectors
// computed once by a class-based emulation of transformers 4.57 and optimum-neuron
// (tests/data/registry/generate_diff_vectors.py); the tests never run Python.
#include <doctest/doctest.h>

#include <hubcache/util/fs.hpp>
#include <registry/config_diff.hpp>
#include <registry/entry.hpp>
#include <registry/json_text.hpp>
#include <registry/layout.hpp>
#include <registry/lookup.hpp>

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
  auto source = config;
  if (task == "text-generation" && config.contains("text_config")) {
    source = config["text_config"];
  }
  auto diff = registry::clean_config(registry::to_diff_dict(source));
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
}

TEST_CASE("config diff: to_diff_dict() and the arch digest match optimum's for every vector")
{
  const auto& cases = vectors()["single"];
  REQUIRE(cases.size() >= 15);
  for (const auto& vector : cases) {
    auto name = vector["name"].get<std::string>();
    CAPTURE(name);
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
}

TEST_CASE("config diff: a config.json with default-valued keys, a fine-tuned copy and a local directory share the "
          "digest of the config transformers 4.57 saves")
{
  std::map<std::string, std::string> digests;
  for (const auto& vector : vectors()["single"]) {
    digests[vector["name"].get<std::string>()] = vector["arch_digest"].get<std::string>();
  }
  const auto& saved = digests.at("hub-llama-as-4.57-saves-it");
  CHECK(digests.at("hub-llama-with-default-keys") == saved);
  CHECK(digests.at("finetuned-copy") == saved);
  CHECK(digests.at("local-directory") == saved);
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
  CHECK_FALSE(registry::knows_model_type("phi3"));
  CHECK(registry::knows_model_type("llama"));
  // Only PretrainedConfig's keys at their defaults go; everything else stays.
  auto diff = registry::to_diff_dict(
    {{"model_type", "phi3"}, {"return_dict", true}, {"custom", false}, {"top_k", 50}, {"top_p", 0.9}});
  CHECK(diff == nlohmann::json({{"model_type", "phi3"}, {"custom", false}, {"top_p", 0.9}}));
}
