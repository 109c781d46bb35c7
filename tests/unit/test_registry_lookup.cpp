// Candidate selection, matching and filters on a real directory repo.
#include "registry_test_repo.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <hubcache/error.hpp>
#include <hubcache/storage/directory_repository.hpp>
#include <registry/catalog.hpp>
#include <registry/layout.hpp>
#include <registry/lookup.hpp>

#include <atomic>

namespace registry_lookup_test {

namespace {

using registry_test::Seeded;

const std::string k_compiler = "2.21.33363.0+82129205";

nlohmann::json llama_config(int hidden_size = 4096)
{
  return {{"model_type", "llama"},     {"hidden_size", hidden_size},   {"num_hidden_layers", 32},
          {"torch_dtype", "bfloat16"}, {"_name_or_path", "somewhere"}, {"rms_norm_eps", 1e-05}};
}

nlohmann::json nxd_neuron(int batch, int sequence, int tp, const std::string& target = "trn1")
{
  return {{"batch_size", batch}, {"sequence_length", sequence},         {"tp_degree", tp}, {"torch_dtype", "bfloat16"},
          {"target", target},    {"_serialized_key", "NxDNeuronConfig"}};
}

} // namespace

TEST_CASE("registry: lookup selects digest, alias and sibling candidates only")
{
  Seeded seeded;
  auto mine = registry::make_registry_entry("meta-llama/Llama-3.1-8B", std::string("text-generation"), llama_config(),
                                            nxd_neuron(1, 4096, 8));
  auto mine_2 = registry::make_registry_entry("meta-llama/Llama-3.1-8B", std::string("text-generation"), llama_config(),
                                              nxd_neuron(4, 4096, 8));
  auto other = registry::make_registry_entry("org/other", std::string("text-generation"), llama_config(2048),
                                             nxd_neuron(1, 4096, 8));
  // A fine-tune with the same architecture, present only in the digest dir.
  auto finetune = registry::make_registry_entry("org/finetune", std::string("text-generation"), llama_config(),
                                                nxd_neuron(2, 2048, 2));
  seeded.add({
    {registry::registry_path(k_compiler, "0.4.5", mine), mine.serialize()},
    {registry::digest_registry_path(k_compiler, "0.4.5", mine), mine.serialize()},
    {registry::digest_registry_path(k_compiler, "0.4.5", mine_2), mine_2.serialize()},
    {registry::registry_path(k_compiler, "0.4.5", other), other.serialize()},
    {registry::digest_registry_path(k_compiler, "0.4.5", other), other.serialize()},
    {registry::digest_registry_path(k_compiler, "0.4.5", finetune), finetune.serialize()},
    {registry::registry_path("2.19.0.0", "0.3.0", mine_2), mine_2.serialize()},
    {"neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.5/too/deep/a/b/x.json", "{}"},
  });
  auto index = registry::index_registry(seeded.repo->list_files(""));
  CHECK(index.entries.size() == 7);
  CHECK(index.unexpected.size() == 1);

  auto target = registry::make_lookup_target("meta-llama/Llama-3.1-8B", std::nullopt, llama_config());
  auto candidates = registry::select_candidates(index, target);
  std::set<std::string> candidate_paths;
  for (const auto& candidate : candidates) {
    candidate_paths.insert(candidate.path);
  }
  CHECK(candidate_paths.count(registry::registry_path(k_compiler, "0.4.5", other)) == 0);
  CHECK(candidate_paths.count(registry::digest_registry_path(k_compiler, "0.4.5", other)) == 0);
  CHECK(candidate_paths.size() == 5);

  auto report = registry::load_entries(seeded.opener(), candidates, 4);
  CHECK(report.warnings.empty());
  std::vector<registry::LookupMatch> matches;
  for (auto& loaded : report.entries) {
    if (auto reason = registry::match_entry(loaded, target)) {
      matches.push_back({loaded, *reason});
    }
  }
  auto unique = registry::deduplicate(matches);
  REQUIRE(unique.size() == 4); // mine (alias+digest copies merged), mine_2 twice (two compilers), finetune
  CHECK(unique.front().loaded.location.compiler_version == "2.19.0.0");

  registry::Filters filters;
  filters.batch_size = 4;
  std::size_t passing = 0;
  for (const auto& match : unique) {
    passing += registry::passes_filters(match.loaded, filters) ? 1 : 0;
  }
  CHECK(passing == 2);
  filters.compiler_version = "2.21.33363.0";
  passing = 0;
  for (const auto& match : unique) {
    passing += registry::passes_filters(match.loaded, filters) ? 1 : 0;
  }
  CHECK(passing == 1);
}

TEST_CASE("registry: a digest computed for one task only matches that task")
{
  auto entry =
    registry::make_registry_entry("m", std::string("feature-extraction"), llama_config(), nxd_neuron(1, 1, 1));
  registry::LoadedEntry loaded{*registry::parse_registry_path(registry::digest_registry_path("2.1", "0.4.5", entry)),
                               entry, entry.hash(), 0};
  auto any_task = registry::make_lookup_target("x", std::nullopt, llama_config());
  CHECK(registry::match_entry(loaded, any_task) == registry::MatchReason::arch_digest);
  auto generation = registry::make_lookup_target("x", std::string("text-generation"), llama_config());
  // Still the same config: has_same_arch ignores the task.
  CHECK(registry::match_entry(loaded, generation) == registry::MatchReason::same_config);
  auto different = registry::make_lookup_target("x", std::string("text-generation"), llama_config(1024));
  CHECK_FALSE(registry::match_entry(loaded, different).has_value());
  auto same_id = registry::make_lookup_target("m", std::string("text-generation"), llama_config(1024));
  CHECK(registry::match_entry(loaded, same_id) == registry::MatchReason::same_model_id);
}

TEST_CASE("registry: legacy roots are searched by model type and compared by config")
{
  Seeded seeded;
  auto legacy_config = llama_config();
  legacy_config["neuron"] = {{"task", "text-generation"},
                             {"batch_size", 1},
                             {"num_cores", 24},
                             {"auto_cast_type", "fp16"},
                             {"sequence_length", 2048}};
  auto target_config = llama_config();
  target_config.erase("torch_dtype");
  // 0.0.19 layout with a mode level; content from before the "_" keys existed.
  nlohmann::json bare = registry::clean_config(legacy_config);
  seeded.add({
    {"neuronxcc-2.12.54.0+f631c2365/0_REGISTRY/0.0.19/inference/llama/meta-llama/Llama-2-7b/aaaa.json", bare.dump()},
    {"neuronxcc-2.12.54.0+f631c2365/0_REGISTRY/0.0.19/inference/gpt2/gpt2/bbbb.json",
     R"({"model_type": "gpt2", "neuron": {}})"},
    {"neuronxcc-2.12.54.0+f631c2365/0_REGISTRY/0.0.19/inference/llama/org/broken/cccc.json", "{broken"},
  });
  auto index = registry::index_registry(seeded.repo->list_files(""));
  auto target = registry::make_lookup_target("someone/copy-of-llama", std::nullopt, target_config);
  auto candidates = registry::select_candidates(index, target);
  CHECK(candidates.size() == 2); // both llama aliases, not gpt2
  auto report = registry::load_entries(seeded.opener(), candidates, 2);
  REQUIRE(report.entries.size() == 1);
  CHECK(report.warnings.size() == 2); // malformed file + name not matching content
  // No _task in pre-0.2 entries: the digest computed for "no task" matches; with a task the
  // config comparison (has_same_arch) still does.
  CHECK(registry::match_entry(report.entries[0], target) == registry::MatchReason::arch_digest);
  auto with_task = registry::make_lookup_target("someone/copy-of-llama", std::string("text-generation"), target_config);
  CHECK(registry::match_entry(report.entries[0], with_task) == registry::MatchReason::same_config);
  auto shape = registry::entry_shape(report.entries[0].entry);
  CHECK(shape.num_cores == 24);
  CHECK(shape.dtype == "float16");
  registry::Filters filters;
  filters.dtype = "fp16";
  filters.num_cores = 24;
  CHECK(registry::passes_filters(report.entries[0], filters));
  filters.dtype = "bfloat16";
  CHECK_FALSE(registry::passes_filters(report.entries[0], filters));
}

TEST_CASE("registry: instance types are normalized on both sides")
{
  CHECK(registry::normalize_instance_type("inf2") == "trn1");
  CHECK(registry::normalize_instance_type("trn1n") == "trn1");
  CHECK(registry::normalize_instance_type("trn2") == "trn2");
  auto entry =
    registry::make_registry_entry("m", std::string("text-generation"), llama_config(), nxd_neuron(1, 128, 2, "inf2"));
  registry::LoadedEntry loaded{*registry::parse_registry_path(registry::registry_path("2.1", "0.4.5", entry)), entry,
                               entry.hash(), 0};
  registry::Filters filters;
  for (const std::string wanted : {"inf2", "trn1", "trn1n"}) {
    filters.instance_type = wanted;
    CHECK(registry::passes_filters(loaded, filters));
  }
  filters.instance_type = "trn2";
  CHECK_FALSE(registry::passes_filters(loaded, filters));
  // An entry without the field never matches a filter on it.
  registry::Filters by_batch;
  by_batch.batch_size = 1;
  auto bare = entry;
  bare.neuron = nlohmann::json::object();
  registry::LoadedEntry bare_loaded{loaded.location, bare, bare.hash(), 0};
  CHECK_FALSE(registry::passes_filters(bare_loaded, by_batch));
}

TEST_CASE("registry: multi-model targets match by containment")
{
  auto configs = nlohmann::json::parse(R"({
    "unet": {"cross_attention_dim": 768, "sample_size": 64,
             "neuron": {"static_batch_size": 1, "input_names": ["a"], "auto_cast_type": "bf16"}},
    "text_encoder": {"model_type": "clip_text_model", "hidden_size": 768, "neuron": {"static_batch_size": 1}},
    "vae_decoder": {"latent_channels": 4}})");
  auto entry = registry::make_multi_model_entry("stabilityai/sd-turbo", configs);
  registry::LoadedEntry loaded{*registry::parse_registry_path(registry::registry_path("2.1", "0.4.5", entry)), entry,
                               entry.hash(), 0};
  auto raw = nlohmann::json::parse(R"({
    "unet": {"cross_attention_dim": 768, "_diffusers_version": "0.30"},
    "text_encoder": {"model_type": "clip_text_model", "hidden_size": 768, "extra": 1},
    "vae": {"whatever": true}})");
  auto target = registry::make_multi_model_lookup_target("local/sd", raw);
  CHECK(target.model_type == "stable-diffusion");
  CHECK(registry::match_entry(loaded, target) == registry::MatchReason::same_config);
  raw["unet"]["cross_attention_dim"] = 1024;
  CHECK_FALSE(registry::match_entry(loaded, registry::make_multi_model_lookup_target("local/sd", raw)).has_value());
  CHECK(registry::entry_shape(entry).batch_size == 1);
  CHECK(registry::entry_shape(entry).dtype == "bfloat16");
}

// Found by fuzz_registry_entry: a component whose config.json holds null (or a number)
// threw a JSON library error out of the lookup target.
TEST_CASE("registry: a diffusers component config that is not an object does not break the lookup")
{
  auto raw = nlohmann::json::parse(R"({"unet": {"cross_attention_dim": 768}, "scheduler": null, "safety": 5})");
  auto target = registry::make_multi_model_lookup_target("local/sd", raw);
  CHECK(target.model_type == "stable-diffusion");
  CHECK(target.config["unet"] == nlohmann::json{{"cross_attention_dim", 768}});
}

// Found by fuzz_registry_entry (UBSan: 1e+300 is outside the range of long long): a neuron
// config number no integer can hold is no shape, not a cast.
TEST_CASE("registry: shapes from floats out of the integer range are unknown")
{
  auto entry = registry::CacheEntry::deserialize(
    R"({"_entry_class": "SingleModelCacheEntry", "_model_id": "org/m", "_task": null, "model_type": "llama",
        "neuron": {"batch_size": 1e300, "sequence_length": -9.3e18, "num_cores": 2.0}})");
  auto shape = registry::entry_shape(entry);
  CHECK_FALSE(shape.batch_size.has_value());
  CHECK_FALSE(shape.sequence_length.has_value());
  CHECK(shape.num_cores == 2);
}

TEST_CASE("registry: config without model_type is rejected with a clear error")
{
  CHECK_THROWS_AS(registry::make_lookup_target("m", std::nullopt, nlohmann::json::parse(R"({"a": 1})")),
                  hubcache::InvalidArgument);
  CHECK_THROWS_AS(registry::make_lookup_target("m", std::nullopt, nlohmann::json::parse("[1]")),
                  hubcache::InvalidArgument);
}

TEST_CASE("registry: MODULE_<hash> folders give traced entries a size")
{
  auto index = registry::index_registry({{"neuronxcc-2.1/MODULE_abc/model.neuron", 100, "", ""},
                                         {"neuronxcc-2.1/MODULE_abc/config.json", 20, "", ""},
                                         {"neuronxcc-2.1/MODULE_abd/x", 7, "", ""}});
  CHECK(registry::module_size(index, "neuronxcc-2.1", "abc") == 120U);
  CHECK_FALSE(registry::module_size(index, "neuronxcc-2.1", "zzz").has_value());
}

TEST_CASE("registry: the catalog reads only entries whose model id the paths do not tell")
{
  Seeded seeded;
  auto aliased =
    registry::make_registry_entry("org/a", std::string("text-generation"), llama_config(), nxd_neuron(1, 128, 2));
  auto digest_only =
    registry::make_registry_entry("org/b", std::string("text-generation"), llama_config(), nxd_neuron(2, 128, 2));
  seeded.add({
    {registry::registry_path(k_compiler, "0.4.5", aliased), aliased.serialize()},
    {registry::digest_registry_path(k_compiler, "0.4.5", aliased), aliased.serialize()},
    {registry::digest_registry_path(k_compiler, "0.4.5", digest_only), digest_only.serialize()},
    {registry::registry_path("2.19.0.0", "0.3.0", aliased), aliased.serialize()},
    {"neuronxcc-2.19.0.0/MODULE_" + aliased.hash() + "/model.neuron", std::string(1000, 'x')},
  });
  auto index = registry::index_registry(seeded.repo->list_files(""));
  auto catalog = registry::build_catalog(index, seeded.opener(), {});
  CHECK(catalog.files_read == 1);
  REQUIRE(catalog.models.size() == 2);
  CHECK(catalog.models[0].model_id == "org/a");
  CHECK(catalog.models[0].configurations == 2);
  CHECK(catalog.models[0].compiler_versions.size() == 2);
  CHECK(catalog.models[0].size == 1000U);
  CHECK(catalog.models[1].model_id == "org/b");
  CHECK_FALSE(catalog.models[1].size.has_value());

  registry::CatalogOptions one_model;
  one_model.model_id = "org/a";
  one_model.compiler_version = "2.21.33363.0";
  auto detail = registry::build_catalog(index, seeded.opener(), one_model);
  REQUIRE(detail.configurations.size() == 1);
  REQUIRE(detail.configurations[0].entry != nullptr);
  CHECK(detail.configurations[0].paths.size() == 2);
  CHECK(detail.configurations[0].paths.front().find("/llama/org/a/") != std::string::npos);
  CHECK(registry::entry_shape(*detail.configurations[0].entry).batch_size == 1);
}

TEST_CASE("registry: attribution records name only safe graphs of their own compiler dir")
{
  const std::string dir = "neuronxcc-2.21.33363.0+82129205";
  auto modules = registry::attributed_modules(R"({"modules": [")" + dir
                                                + R"(/MODULE_1+d41d8cd9", "neuronxcc-2.19.1.0/MODULE_2+d41d8cd9", ")"
                                                + dir + R"(/MODULE_3/../../etc", 7]})",
                                              "record.json", dir);
  CHECK(modules == std::vector<std::string>{dir + "/MODULE_1+d41d8cd9"});
  CHECK(registry::attributed_modules("not json", "record.json", dir).empty());
  CHECK(registry::attributed_modules(R"({"modules": {}})", "record.json", dir).empty());

  auto index = registry::index_registry({{.path = dir + "/MODULE_1+d41d8cd9/model.neff", .size = 100},
                                         {.path = dir + "/MODULE_1+d41d8cd9/model.done", .size = 0},
                                         {.path = dir + "/MODULE_2+d41d8cd9/model.neff", .size = 50},
                                         {.path = dir + "/MODULE_10+d41d8cd9/model.neff", .size = 7},
                                         {.path = dir + "/MODULE_10+d41d8cd9.neff", .size = 9}});
  CHECK(registry::folders_size(index, {dir + "/MODULE_1+d41d8cd9"}) == 100U);
  CHECK(registry::folders_size(index, {dir + "/MODULE_1+d41d8cd9", dir + "/MODULE_2+d41d8cd9"}) == 150U);
  CHECK_FALSE(registry::folders_size(index, {dir + "/MODULE_9+d41d8cd9"}).has_value());
}

TEST_CASE("registry: 0.0.21 - 0.1.x roots match on the keys both configs hold")
{
  CHECK(registry::matches_by_key_intersection("0.0.21"));
  CHECK(registry::matches_by_key_intersection("0.0.25"));
  CHECK(registry::matches_by_key_intersection("0.1.0"));
  CHECK(registry::matches_by_key_intersection("0.1.3.dev0"));
  CHECK_FALSE(registry::matches_by_key_intersection("0.0.20")); // exact equality then
  CHECK_FALSE(registry::matches_by_key_intersection("0.2.0"));  // has_same_arch from here
  CHECK_FALSE(registry::matches_by_key_intersection("0.4.6.dev4"));
  CHECK_FALSE(registry::matches_by_key_intersection("neuron-cache-add-1"));
  CHECK_FALSE(registry::matches_by_key_intersection(""));

  nlohmann::json stored = {{"model_type", "llama"},
                           {"hidden_size", 64},
                           {"torch_dtype", "float16"},
                           {"eos_token_id", 2},
                           {"neuron", {{"batch_size", 1}}}};
  nlohmann::json target = {
    {"model_type", "llama"}, {"hidden_size", 64}, {"rope_theta", 500000.0}, {"torch_dtype", "bfloat16"}};
  CHECK(registry::same_common_keys(stored, target));
  target["hidden_size"] = 128;
  CHECK_FALSE(registry::same_common_keys(stored, target));

  // Through match_entry: only an entry read from such a root matches this way.
  auto entry = registry::CacheEntry::deserialize(
    R"({"model_type": "llama", "hidden_size": 64, "torch_dtype": "float16", "neuron": {"batch_size": 1}})", "x",
    std::string("acme/old-llama"));
  registry::LoadedEntry loaded{{}, entry, "", 0};
  loaded.location.registry_version = "0.0.25";
  auto lookup = registry::make_lookup_target("me/ft", std::string("text-generation"),
                                             {{"model_type", "llama"}, {"hidden_size", 64}, {"num_hidden_layers", 2}});
  CHECK(registry::match_entry(loaded, lookup) == registry::MatchReason::same_config);
  loaded.location.registry_version = "0.2.0";
  CHECK_FALSE(registry::match_entry(loaded, lookup));
}

} // namespace registry_lookup_test
