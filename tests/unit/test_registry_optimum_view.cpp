// `lookup --optimum`: optimum-neuron main's lookup (hub_cache.py, commands/neuron/cache.py
// at 213224e6) on a real directory repo: its digest (against transformers' own vectors),
// task inference, registry root, raw filters, table and failures.
#include "registry_test_repo.hpp"

#include <doctest/doctest.h>

#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <registry/json_text.hpp>
#include <registry/layout.hpp>
#include <registry/optimum_view.hpp>

namespace registry_optimum_view_test {

namespace {

using registry_test::Seeded;

const std::string k_compiler = "2.21.33363.0+82129205";
const std::string k_version = std::string(registry::k_optimum_main_registry_version);

const nlohmann::json& vectors()
{
  static const nlohmann::json data = nlohmann::json::parse(
    hubcache::util::read_file(std::string(NEURON_CACHE_TEST_DATA) + "/registry/diff_vectors.json"));
  return data;
}

registry::ModelConfigs single(const nlohmann::json& config)
{
  registry::ModelConfigs configs;
  configs.config = config;
  configs.origin = "config.json";
  return configs;
}

nlohmann::json llama()
{
  return {{"model_type", "llama"}, {"hidden_size", 64}, {"num_hidden_layers", 2}, {"rms_norm_eps", 1e-05}};
}

// An entry as optimum's export files it: <root>/<digest>/<hash>.json.
std::pair<std::string, std::string> filed(const std::string& digest, const nlohmann::json& neuron,
                                          const std::string& root = registry::registry_root(k_compiler, k_version))
{
  auto entry = registry::make_registry_entry("org/tiny", std::string("text-generation"), llama(), neuron);
  return {root + "/" + digest + "/" + entry.hash() + ".json", entry.serialize()};
}

nlohmann::json nxd(nlohmann::json batch, int sequence, nlohmann::json tp, const std::string& target = "trn1")
{
  return {{"batch_size", batch},
          {"sequence_length", sequence},
          {"tp_degree", tp},
          {"torch_dtype", "bfloat16"},
          {"target", target}};
}

registry::OptimumAnswer ask(Seeded& seeded, const std::string& digest, const registry::OptimumFilters& filters = {},
                            const registry::OptimumPins& pins = {})
{
  return registry::optimum_main_lookup(*seeded.repo, seeded.opener(), "repo", digest, pins, filters, 2);
}

} // namespace

TEST_CASE("optimum view: the digest is the one transformers and optimum compute, for every vector")
{
  std::size_t checked = 0;
  for (const char* set : {"single", "public"}) {
    for (const auto& vector : vectors()[set]) {
      if (!vector["task"].is_string()) {
        continue;
      }
      CAPTURE(vector["name"].get<std::string>());
      auto config = registry::parse_json(vector["config"].get<std::string>(), "vector");
      CHECK(registry::optimum_arch_digest(single(config), vector["task"].get<std::string>())
            == vector["arch_digest"].get<std::string>());
      ++checked;
    }
  }
  for (const auto& vector : vectors()["multi"]) {
    CAPTURE(vector["name"].get<std::string>());
    registry::ModelConfigs configs;
    configs.multi_model = true;
    configs.components = vector["components"].is_string()
                           ? registry::parse_json(vector["components"].get<std::string>(), "vector")
                           : vector["components"];
    CHECK(registry::optimum_arch_digest(configs, "text-to-image") == vector["arch_digest"].get<std::string>());
    ++checked;
  }
  CHECK(checked > 40);
}

TEST_CASE("optimum view: the task as TasksManager infers it from the Hub")
{
  nlohmann::json config = llama();
  std::vector<std::string> files = {"config.json", "model.safetensors"};
  CHECK(registry::infer_optimum_task({{"pipeline_tag", "text-generation"}}, files, config) == "text-generation");
  CHECK(registry::infer_optimum_task({{"pipeline_tag", "summarization"}}, files, config) == "text2text-generation");
  CHECK(registry::infer_optimum_task({{"pipeline_tag", "sentence-similarity"}}, files, config) == "feature-extraction");
  CHECK(registry::infer_optimum_task({{"pipeline_tag", nullptr}, {"transformersInfo", {{"pipeline_tag", "fill-mask"}}}},
                                     files, config)
        == "fill-mask");
  CHECK(registry::infer_optimum_task({{"transformersInfo", {{"auto_model", "AutoModelForCausalLM"}}}}, files, config)
        == "text-generation");
  CHECK(registry::infer_optimum_task({{"transformersInfo", {{"auto_model", "TFAutoModelForSeq2SeqLM"}}}}, files, config)
        == "text2text-generation");
  // Nothing to infer from: optimum raises.
  CHECK_FALSE(registry::infer_optimum_task({{"pipeline_tag", nullptr}}, files, config));
  CHECK_FALSE(
    registry::infer_optimum_task({{"transformersInfo", {{"auto_model", "AutoModelForNothing"}}}}, files, config));
  CHECK_FALSE(registry::infer_optimum_task(nlohmann::json::object(), {"README.md"}, nullptr));
  // The library comes first: sentence-transformers and timm repos have fixed tasks.
  CHECK(registry::infer_optimum_task({{"pipeline_tag", "sentence-similarity"}},
                                     {"config.json", "config_sentence_transformers.json"}, config)
        == "feature-extraction");
  CHECK(
    registry::infer_optimum_task({{"pipeline_tag", "fill-mask"}}, {"config.json", "sentence_bert_config.json"}, config)
    == "feature-extraction");
  CHECK(registry::infer_optimum_task({}, files, {{"architecture", "resnet50"}}) == "image-classification");
  CHECK(registry::infer_optimum_task({{"pipeline_tag", "text-to-image"}}, {"model_index.json"}, nullptr)
        == "text-to-image");
}

TEST_CASE("optimum view: only the pinned compiler's first root and registry version, only the digest folder")
{
  Seeded seeded;
  const std::string digest(64, 'a');
  const std::string other(64, 'b');
  seeded.add({filed(digest, nxd(4, 512, 2)),
              filed(digest, nxd(8, 512, 2), registry::registry_root(k_compiler, "0.4.5")),    // other version
              filed(digest, nxd(16, 512, 2), registry::registry_root("2.19.1.0", k_version)), // other compiler
              filed(other, nxd(32, 512, 2)),                                                  // other digest
              {registry::registry_root(k_compiler, k_version) + "/" + digest + "/nested/x.json", "not read"}});
  auto answer = ask(seeded, digest);
  CHECK(answer.compiler_dir == "neuronxcc-" + k_compiler);
  CHECK(answer.registry_root == registry::registry_root(k_compiler, k_version));
  REQUIRE(answer.entries.size() == 1);
  CHECK(answer.entries[0].entry.neuron["batch_size"] == 4);

  registry::OptimumPins pins;
  pins.registry_version = "0.4.5";
  CHECK(ask(seeded, digest, {}, pins).entries.size() == 1);
  pins.compiler_version = "2.19";
  pins.registry_version = k_version;
  REQUIRE(ask(seeded, digest, {}, pins).entries.size() == 1);
  CHECK(ask(seeded, digest, {}, pins).entries[0].entry.neuron["batch_size"] == 16);
  // A digest folder that does not exist: no entries, not an error.
  CHECK(ask(seeded, std::string(64, 'c')).entries.empty());
  // No compiler dir with the pin: optimum's ValueError.
  pins.compiler_version = "2.26.6360.0";
  CHECK_THROWS_WITH_AS(ask(seeded, digest, {}, pins),
                       doctest::Contains("No hub cache registry found in repo for neuronx-cc-2.26.6360.0"),
                       hubcache::EntryNotFound);
}

TEST_CASE("optimum view: filters compare raw stored values")
{
  Seeded seeded;
  const std::string digest(64, 'a');
  seeded.add({filed(digest, nxd(4, 512, 2, "trn1")), filed(digest, nxd(4.0, 1024, 8, "trn2")),
              filed(digest, {{"batch_size", 1},
                             {"sequence_length", 128},
                             {"tensor_parallel_size", 2},
                             {"dtype", "bf16"},
                             {"target", "trn1"}})});
  registry::OptimumFilters filters;
  filters.instance_type = "inf2"; // stored as trn1: optimum's filter does not map it
  CHECK(ask(seeded, digest, filters).entries.empty());
  filters.instance_type = "trn1";
  CHECK(ask(seeded, digest, filters).entries.size() == 2);
  filters = {};
  filters.batch_size = 4; // 4.0 == 4 in Python
  CHECK(ask(seeded, digest, filters).entries.size() == 2);
  filters = {};
  filters.tensor_parallel_size = 2; // tp_degree only, never tensor_parallel_size
  CHECK(ask(seeded, digest, filters).entries.size() == 1);
  filters = {};
  filters.dtype = "bfloat16"; // DTYPE_MAPPER: bf16 and bfloat16 are one dtype
  CHECK(ask(seeded, digest, filters).entries.size() == 3);
  filters.dtype = "float16";
  CHECK(ask(seeded, digest, filters).entries.empty());
}

TEST_CASE("optimum view: where optimum-cli fails, so does the view")
{
  Seeded seeded;
  const std::string digest(64, 'a');
  const auto root = registry::registry_root(k_compiler, k_version);
  seeded.add({filed(digest, {{"batch_size", 1}, {"torch_dtype", "torch.bfloat16"}, {"target", "trn1"}})});
  registry::OptimumFilters filters;
  filters.dtype = "bfloat16";
  CHECK_THROWS_WITH_AS(ask(seeded, digest, filters), doctest::Contains("not in optimum's dtype mapping"),
                       hubcache::InvalidArgument);
  // A traced model's entry has no batch_size: optimum's table raises KeyError.
  auto answer = ask(seeded, digest);
  CHECK_THROWS_WITH_AS(registry::optimum_main_output("m", answer.entries), doctest::Contains("no sequence_length"),
                       hubcache::InvalidArgument);
  seeded.add({{root + "/" + digest + "/0123456789abcdef0123.json", "{not json"}});
  CHECK_THROWS_AS(ask(seeded, digest), hubcache::InvalidArgument);
}

TEST_CASE("optimum view: the output is optimum-cli's, str() of the raw values")
{
  Seeded seeded;
  const std::string digest(64, 'a');
  seeded.add({filed(digest, nxd(4, 512, 2)), filed(digest, nxd(1, 4096, 8)), filed(digest, nxd(1, 128, 2))});
  auto answer = ask(seeded, digest);
  CHECK(registry::optimum_main_output("org/m", {}) == "No cached entries found for org/m.\n");
  CHECK(registry::optimum_main_output("org/m", answer.entries)
        == "Cached entries for org/m\n"
           "   batch size   sequence length tensor parallel      dtype       instance type  \n"
           "       1              128              2            bfloat16          trn1      \n"
           "       4              512              2            bfloat16          trn1      \n"
           "       1              4096             8            bfloat16          trn1      \n");
  // str(4.0) is "4.0", and int("4.0") raises in optimum's sort: it crashes, the view fails.
  seeded.add({filed(digest, nxd(4.0, 512, 2))});
  CHECK_THROWS_WITH_AS(registry::optimum_main_output("org/m", ask(seeded, digest).entries),
                       doctest::Contains("'4.0' is not an integer"), hubcache::InvalidArgument);
}

TEST_CASE("lookup: the wider view's table names the task when tasks mix")
{
  auto match_of = [](const std::optional<std::string>& task, int batch) {
    registry::LookupMatch match;
    match.loaded.entry = registry::make_registry_entry("org/m", task, llama(), nxd(batch, 512, 2));
    return match;
  };
  std::vector<registry::LookupMatch> one_task = {match_of("text-generation", 1), match_of("text-generation", 4)};
  CHECK_FALSE(registry::tasks_mix(one_task));
  CHECK(registry::optimum_table("m", one_task).find("task") == std::string::npos);
  std::vector<registry::LookupMatch> mixed = {match_of("text-generation", 4), match_of("feature-extraction", 4)};
  CHECK(registry::tasks_mix(mixed));
  CHECK(registry::optimum_table("m", mixed)
        == "Cached entries for m\n"
           "   batch size   sequence length tensor parallel      dtype       instance type        task      \n"
           "       4              512              2            bfloat16          trn1      feature-extraction\n"
           "       4              512              2            bfloat16          trn1      text-generation \n");
}

TEST_CASE("lookup: --registry-version keeps one optimum-neuron version's entries")
{
  registry::LoadedEntry loaded;
  loaded.entry = registry::make_registry_entry("org/m", std::string("text-generation"), llama(), nxd(1, 128, 2));
  loaded.location.registry_version = "0.4.4.dev0";
  registry::Filters filters;
  CHECK(registry::passes_filters(loaded, filters));
  filters.registry_version = "0.4.4.dev0";
  CHECK(registry::passes_filters(loaded, filters));
  filters.registry_version = "0.4.4";
  CHECK_FALSE(registry::passes_filters(loaded, filters));
}

} // namespace registry_optimum_view_test
