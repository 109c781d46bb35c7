#include "test_support.hpp"

#include <addjobs/add_job.hpp>
#include <hubcache/error.hpp>
#include <hubcache/storage/directory_repository.hpp>
#include <hubcache/util/fs.hpp>
#include <registry/entry.hpp>
#include <registry/lookup.hpp>

#include <doctest/doctest.h>

#include <limits>

#include <sys/stat.h>

using namespace addjobs;

namespace addjobs_add_job_test {

namespace {

Configuration sample_configuration()
{
  Configuration configuration;
  configuration.task = "text-generation";
  configuration.precision = "bf16";
  configuration.num_cores = 2;
  configuration.train_batch_size = 4;
  configuration.sequence_length = 128;
  return configuration;
}

Model sample_model()
{
  Model model;
  model.spec = "org/tiny";
  model.model_id = "org/tiny";
  model.config = {
    {"model_type", "gpt2"}, {"n_layer", 2}, {"_name_or_path", "org/tiny"}, {"transformers_version", "4.0"}};
  return model;
}

// A compile command that writes one generation-C entry per run, keyed by its argument,
// the way the compiler would: inputs, then neff, then model.done last.
std::vector<std::string> entry_writing_command(const std::string& key)
{
  return {"/bin/sh", "-c",
          "d=\"$NEURON_COMPILE_CACHE_URL/neuronxcc-2.15.1.0+abc/MODULE_" + key
            + "+d41d8cd9\"; mkdir -p \"$d\" && : > \"$d/compile_flags.json\" && echo hlo > \"$d/model.hlo_module.pb\" "
              "&& echo neff > \"$d/model.neff\" && : > \"$d/model.done\" && echo \"flags=$NEURON_CC_FLAGS\""};
}

} // namespace

TEST_CASE("add: configuration validation uses optimum's messages")
{
  auto configuration = sample_configuration();
  CHECK_NOTHROW(configuration.validate());
  configuration.sequence_length.reset();
  CHECK_THROWS_WITH_AS(
    configuration.validate(),
    "You need to specify either sequence_length or encoder_sequence_length and decoder_sequence_length",
    hubcache::InvalidArgument);
  configuration.encoder_sequence_length = 64;
  CHECK_THROWS_WITH_AS(configuration.validate(),
                       "Both the encoder_sequence_length and the decoder_sequence_length must be provided.",
                       hubcache::InvalidArgument);
  configuration.decoder_sequence_length = 32;
  CHECK_NOTHROW(configuration.validate());
  CHECK(configuration.summary() == "bs=4 seq=64/32 cores=2 bf16");
  configuration.precision = "fp16"; // inference models are often compiled in fp16
  CHECK_NOTHROW(configuration.validate());
  configuration.precision = "fp8";
  CHECK_THROWS_WITH_AS(configuration.validate(), "precision must be fp, bf16 or fp16 (got 'fp8')",
                       hubcache::InvalidArgument);
  // An auto-cast type alone says the dtype; one of the values optimum records.
  configuration.precision.clear();
  CHECK_THROWS_WITH_AS(configuration.validate(), doctest::Contains("needs a precision"), hubcache::InvalidArgument);
  configuration.auto_cast_type = "fp16";
  CHECK_NOTHROW(configuration.validate());
  CHECK(configuration.summary() == "bs=4 seq=64/32 cores=2 cast=fp16");
  configuration.auto_cast_type = "int8";
  CHECK_THROWS_WITH_AS(configuration.validate(), "auto_cast_type must be bf16, fp16, tf32 or fp32 (got 'int8')",
                       hubcache::InvalidArgument);
}

TEST_CASE("add: an inference configuration records its auto-cast type, and lookup reads it as the dtype")
{
  auto configuration = sample_configuration();
  configuration.precision.clear();
  configuration.auto_cast_type = "fp16";
  auto neuron = neuron_config(configuration, "org/tiny", "2.15.1.0+abc", {});
  CHECK(neuron["auto_cast_type"] == "fp16");
  CHECK_FALSE(neuron.contains("precision"));
  CHECK_FALSE(neuron.contains("torch_dtype"));
  auto entry = registry::make_registry_entry("org/tiny", configuration.task, sample_model().config, neuron);
  CHECK(registry::entry_shape(entry).dtype == "float16");
  CHECK(registry::entry_shape(entry).batch_size == 4);
  // Another cast type is another configuration; fp16 weights record float16.
  auto bf16 = configuration;
  bf16.auto_cast_type = "bf16";
  CHECK_FALSE(same_configuration(neuron, neuron_config(bf16, "org/tiny", "", {}), std::nullopt));
  auto weights = sample_configuration();
  weights.precision = "fp16";
  CHECK(neuron_config(weights, "org/tiny", "", {})["torch_dtype"] == "float16");
  auto values = template_values(sample_model(), configuration, "/cache");
  CHECK(values.at("auto_cast_type") == "fp16");
  CHECK_FALSE(values.contains("precision"));
  CHECK_THROWS_AS(expand_command({"{precision}"}, values), hubcache::InvalidArgument);
}

TEST_CASE("add: command templates")
{
  auto values = template_values(sample_model(), sample_configuration(), "/cache");
  CHECK(
    expand_command({"run", "--model={model}", "{batch_size}x{sequence_length}", "{cache_dir}", "{precision}"}, values)
    == std::vector<std::string>{"run", "--model=org/tiny", "4x128", "/cache", "bf16"});
  // Literal braces: doubled, or around something that is not a name (JSON).
  CHECK(expand_command({"{{model}}", "{\"a\": 1}", "{}", "{1}"}, values)
        == std::vector<std::string>{"{model}", "{\"a\": 1}", "{}", "{1}"});
  CHECK_THROWS_WITH_AS(expand_command({"{batchsize}"}, values),
                       "unknown placeholder {batchsize} in the command template", hubcache::InvalidArgument);
  CHECK_THROWS_WITH_AS(expand_command({"{encoder_sequence_length}"}, values),
                       "placeholder {encoder_sequence_length} has no value for this configuration",
                       hubcache::InvalidArgument);
  // A value with spaces stays one argument.
  auto model = sample_model();
  model.directory = "/models/my model";
  auto spaced = template_values(model, sample_configuration(), "/cache");
  CHECK(expand_command({"--model", "{model}"}, spaced) == std::vector<std::string>{"--model", "/models/my model"});
}

TEST_CASE("add: compiler flags and NEURON_CC_FLAGS without the cache dir")
{
  CHECK(compiler_flags("--model-type=transformer --cache_dir=/x -O1 --retry_failed_compilation --log_level 3")
        == std::vector<std::string>{"--model-type=transformer", "-O1"});
  CHECK(compiler_flags("--cache_dir /x --enable-mixed-precision-accumulation")
        == std::vector<std::string>{"--enable-mixed-precision-accumulation"});
  CHECK(compiler_flags("").empty());
  CHECK(without_cache_dir("--cache_dir /x -O1 --cache_dir=/y --model-type transformer")
        == "-O1 --model-type transformer");
  CHECK(without_cache_dir("--cache_dir=/x").empty());
  // The same splitter as synchronize's cache-root lookup: both refuse what the compiler refuses.
  CHECK_THROWS_WITH_AS(compiler_flags("--cache_dir='/x -O1"), doctest::Contains("NEURON_CC_FLAGS cannot be read"),
                       hubcache::InvalidArgument);
  CHECK_THROWS_AS(without_cache_dir("-O1 \"--x"), hubcache::InvalidArgument);
}

TEST_CASE("add: the neuron config and configuration matching")
{
  auto configuration = sample_configuration();
  auto neuron = neuron_config(configuration, "org/tiny", "2.15.1.0+abc", {"-O1"});
  CHECK(neuron["batch_size"] == 4);
  CHECK(neuron["train_batch_size"] == 4);
  CHECK(neuron["eval_batch_size"] == 4);
  CHECK(neuron["sequence_length"] == 128);
  CHECK(neuron["num_cores"] == 2);
  CHECK(neuron["torch_dtype"] == "bfloat16");
  CHECK(neuron["precision"] == "bf16");
  CHECK(neuron["compiler_version"] == "2.15.1.0+abc");
  CHECK(neuron["compiler_flags"] == nlohmann::json::array({"-O1"}));
  CHECK(neuron["checkpoint_id"] == "org/tiny");
  CHECK_FALSE(neuron.contains("encoder_sequence_length"));

  auto same = neuron_config(configuration, "org/tiny", "", {"-O1"});
  CHECK(same_configuration(neuron, same, std::nullopt));
  CHECK(same_configuration(neuron, same, std::string("2.15.1.0")));
  CHECK_FALSE(same_configuration(neuron, same, std::string("2.16.0.0")));
  auto other_flags = neuron_config(configuration, "org/tiny", "", {});
  CHECK_FALSE(same_configuration(neuron, other_flags, std::nullopt));
  auto longer = configuration;
  longer.max_steps = 50; // does not change the graphs
  CHECK(same_configuration(neuron, neuron_config(longer, "org/tiny", "", {"-O1"}), std::nullopt));
  auto bigger = configuration;
  bigger.train_batch_size = 8;
  CHECK_FALSE(same_configuration(neuron, neuron_config(bigger, "org/tiny", "", {"-O1"}), std::nullopt));

  // The registry entry built from it keeps the cleaned model config.
  auto entry = registry::make_registry_entry("org/tiny", configuration.task, sample_model().config, neuron);
  CHECK_FALSE(entry.config.contains("_name_or_path"));
  CHECK(entry.neuron_config()["num_cores"] == 2);
}

TEST_CASE("add: local model directories")
{
  test_support::TempDir dir;
  auto env = hubcache::util::Environment::from_map({});
  std::filesystem::create_directories(dir / "tiny");
  CHECK_THROWS_AS(load_model((dir / "tiny").string(), env, std::nullopt), hubcache::InvalidArgument);
  hubcache::util::write_file_atomically(dir / "tiny/config.json",
                                        R"({"model_type": "bert", "_name_or_path": "org/bert"})");
  auto model = load_model((dir / "tiny").string(), env, std::nullopt);
  CHECK(model.model_id == "org/bert");
  CHECK(model.directory == dir / "tiny");
  hubcache::util::write_file_atomically(dir / "tiny/config.json",
                                        R"({"model_type": "bert", "_name_or_path": "/tmp/x"})");
  CHECK(load_model((dir / "tiny").string(), env, std::nullopt).model_id == "tiny");
  hubcache::util::write_file_atomically(dir / "tiny/config.json", R"({"hidden_size": 2})");
  CHECK_THROWS_AS(load_model((dir / "tiny").string(), env, std::nullopt), hubcache::InvalidArgument);
  hubcache::util::write_file_atomically(dir / "tiny/config.json", "not json");
  CHECK_THROWS_AS(load_model((dir / "tiny").string(), env, std::nullopt), hubcache::InvalidArgument);
  CHECK_THROWS_AS(load_model((dir / "absent").string(), env, std::nullopt), hubcache::InvalidArgument);
  // Read by registry's one model-config reader: a FIFO is refused, never waited on.
  std::filesystem::remove(dir / "tiny/config.json");
  REQUIRE(::mkfifo((dir / "tiny/config.json").c_str(), 0600) == 0);
  CHECK_THROWS_AS(load_model((dir / "tiny").string(), env, std::nullopt), hubcache::IoError);
}

TEST_CASE("add: a run pushes its new entries and the registry entry in one commit, then skips")
{
  test_support::TempDir dir;
  hubcache::storage::DirectoryRepository repo(dir / "repo");
  repo.create({});
  auto head_before = repo.revision();
  Settings settings;
  settings.cache_root = dir / "cache";
  settings.cc_flags = "--cache_dir=/elsewhere -O1";
  std::filesystem::create_directories(settings.cache_root / "neuronxcc-2.15.1.0+abc/MODULE_old+d41d8cd9");
  for (const auto* name : {"model.neff", "model.done", "model.hlo_module.pb"}) {
    hubcache::util::write_file_atomically(settings.cache_root / "neuronxcc-2.15.1.0+abc/MODULE_old+d41d8cd9" / name,
                                          "x");
  }
  std::vector<std::string> lines;
  settings.on_line = [&lines](const Job&, hubcache::util::ProcessStream, std::string_view line) {
    lines.emplace_back(line);
  };
  Runner runner(repo, settings);
  Job job{sample_model(), sample_configuration(), entry_writing_command("1234"), {}, std::nullopt};

  auto result = runner.run(job);
  REQUIRE_MESSAGE(result.status == JobStatus::added, result.message);
  CHECK(lines == std::vector<std::string>{"flags=-O1"});
  // Only what this run created: not the entry that was there before.
  CHECK(result.entries == std::vector<std::string>{"neuronxcc-2.15.1.0+abc/MODULE_1234+d41d8cd9"});
  CHECK(result.compiler_version == "2.15.1.0+abc");
  REQUIRE(result.registry_files.size() == 2);
  CHECK(result.registry_files[0].starts_with("neuronxcc-2.15.1.0+abc/0_REGISTRY/neuron-cache-add-1/gpt2/org/tiny/"));
  // One commit on top of the creation.
  CHECK(repo.revision() == result.revision);
  CHECK(repo.file_exists("neuronxcc-2.15.1.0+abc/MODULE_1234+d41d8cd9/model.done"));
  CHECK_FALSE(repo.file_exists("neuronxcc-2.15.1.0+abc/MODULE_old+d41d8cd9/model.done"));
  auto entry = registry::CacheEntry::deserialize(repo.read_file(result.registry_files[0]));
  CHECK(entry.model_id == "org/tiny");
  CHECK(entry.neuron_config()["compiler_flags"] == nlohmann::json::array({"-O1"}));
  CHECK(entry.neuron_config()["compiler_version"] == "2.15.1.0+abc");
  CHECK(head_before != result.revision);

  // Registered now: a new runner (fresh registry read) skips it without running anything.
  Runner again(repo, settings);
  CHECK(again.is_registered(job));
  auto second = again.run(job);
  CHECK(second.status == JobStatus::already_registered);
  CHECK(repo.revision() == result.revision);
}

TEST_CASE("add: failures push nothing")
{
  test_support::TempDir dir;
  hubcache::storage::DirectoryRepository repo(dir / "repo");
  repo.create({});
  auto head = repo.revision();
  Settings settings;
  settings.cache_root = dir / "cache";
  settings.on_line = [](const Job&, hubcache::util::ProcessStream, std::string_view) {};
  Runner runner(repo, settings);

  Job failing{sample_model(), sample_configuration(), {"/bin/sh", "-c", "echo compiling; exit 7"}, {}, std::nullopt};
  auto failed = runner.run(failing);
  CHECK(failed.status == JobStatus::failed);
  CHECK(failed.message == "the command exited with status 7; nothing was pushed");
  CHECK(failed.output_tail == std::vector<std::string>{"compiling"});

  Job idle{sample_model(), sample_configuration(), {"/bin/true"}, {}, std::nullopt};
  auto nothing = runner.run(idle);
  CHECK(nothing.status == JobStatus::failed);
  CHECK(nothing.message.starts_with("the command succeeded but created no new compile-cache entry in "));

  // A timeout of 2^63-1 seconds (a manifest may say so) is no limit, not an instant one.
  Job endless{sample_model(),
              sample_configuration(),
              {"/bin/sh", "-c", "exit 7"},
              {},
              std::chrono::seconds(std::numeric_limits<std::chrono::seconds::rep>::max())};
  CHECK(runner.run(endless).message == "the command exited with status 7; nothing was pushed");

  Job bad_template{sample_model(), sample_configuration(), {"run", "{nope}"}, {}, std::nullopt};
  CHECK(runner.run(bad_template).status == JobStatus::failed);
  CHECK(repo.revision() == head);
}

TEST_CASE("add: manifest runs compile each job in its own root and install results into the shared one")
{
  test_support::TempDir dir;
  hubcache::storage::DirectoryRepository repo(dir / "repo");
  repo.create({});
  Settings settings;
  settings.cache_root = dir / "cache";
  settings.staging_directory = dir / "staging";
  std::filesystem::create_directories(*settings.staging_directory);
  settings.on_line = [](const Job&, hubcache::util::ProcessStream, std::string_view) {};
  Runner runner(repo, settings);
  auto second_configuration = sample_configuration();
  second_configuration.train_batch_size = 8;
  std::vector<Job> jobs = {
    {sample_model(), sample_configuration(), entry_writing_command("1"), {}, std::nullopt},
    {sample_model(), second_configuration, entry_writing_command("2"), {}, std::nullopt},
    {sample_model(), sample_configuration(), {"/bin/sh", "-c", "exit 1"}, {}, std::nullopt},
  };
  // The third is the first one again: registered once the first lands... or failing when
  // it runs first; with continue_on_error both others still land.
  auto results = runner.run_all(jobs, 2, true);
  CHECK(results[0].status == JobStatus::added);
  CHECK(results[1].status == JobStatus::added);
  CHECK((results[2].status == JobStatus::already_registered || results[2].status == JobStatus::failed));
  CHECK(results[0].entries == std::vector<std::string>{"neuronxcc-2.15.1.0+abc/MODULE_1+d41d8cd9"});
  CHECK(results[1].entries == std::vector<std::string>{"neuronxcc-2.15.1.0+abc/MODULE_2+d41d8cd9"});
  CHECK(std::filesystem::exists(settings.cache_root / "neuronxcc-2.15.1.0+abc/MODULE_1+d41d8cd9/model.done"));
  CHECK(std::filesystem::exists(settings.cache_root / "neuronxcc-2.15.1.0+abc/MODULE_2+d41d8cd9/model.done"));
  CHECK(std::filesystem::is_empty(*settings.staging_directory));
}

TEST_CASE("add: preconditions come from the repo: it must exist and take new files")
{
  test_support::TempDir dir;
  hubcache::storage::DirectoryRepository repo(dir / "repo");
  CHECK_THROWS_AS(check_preconditions(repo), hubcache::RepoNotFound);
  repo.create({});
  CHECK_FALSE(check_preconditions(repo).public_default_repo);
  // A regular file where commits stage: no process, root included, can create files below it.
  std::filesystem::remove_all(dir / "repo/.neuron-cache/staging");
  hubcache::util::write_file_atomically(dir / "repo/.neuron-cache/staging", "");
  CHECK_THROWS_AS(check_preconditions(repo), hubcache::WriteAccessDenied);
}

} // namespace addjobs_add_job_test
