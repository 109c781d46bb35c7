#include "test_support.hpp"

#include <addjobs/add_manifest.hpp>
#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>

#include <doctest/doctest.h>

#include <sys/stat.h>

using namespace addjobs;

namespace addjobs_add_manifest_test {

namespace {

Manifest parse(const std::string& text)
{
  return parse_manifest_text(text, "ci.yaml");
}

// The message of the InvalidArgument parsing `text` throws.
std::string error_of(const std::string& text)
{
  try {
    parse(text);
  } catch (const hubcache::InvalidArgument& error) {
    return error.what();
  }
  return "(no error)";
}

const char* const k_valid = R"(repo: /fsx/cache-repo
cache_dir: /var/tmp/cc
command: "fake --model {model} --batch-size {batch_size}"
env:
  NEURON_CC_FLAGS: "--model-type=transformer"
timeout: 600
models:
  - model: org/gpt
    task: text-generation
    precision: bf16
    configurations:
      - {batch_size: 1, sequence_length: 128, num_cores: 2}
      - train_batch_size: 4
        eval_batch_size: 8
        sequence_length: 512
        num_cores: 8
        precision: fp
        max_steps: 20
  - model: org/t5
    command: [other, "{model}", "two words"]
    configurations:
      - task: text2text-generation
        precision: bf16
        num_cores: 1
        batch_size: 2
        encoder_sequence_length: 64
        decoder_sequence_length: 32
)";

} // namespace

TEST_CASE("manifest: a valid manifest, with model-level defaults")
{
  auto manifest = parse(k_valid);
  CHECK(manifest.repo == "/fsx/cache-repo");
  CHECK(manifest.cache_dir == "/var/tmp/cc");
  REQUIRE(manifest.command);
  CHECK(*manifest.command == std::vector<std::string>{"fake", "--model", "{model}", "--batch-size", "{batch_size}"});
  CHECK(manifest.environment.at("NEURON_CC_FLAGS") == "--model-type=transformer");
  CHECK(manifest.timeout == std::chrono::seconds(600));
  REQUIRE(manifest.models.size() == 2);
  const auto& gpt = manifest.models[0];
  CHECK(gpt.model == "org/gpt");
  CHECK_FALSE(gpt.command);
  REQUIRE(gpt.configurations.size() == 2);
  CHECK(gpt.configurations[0].task == "text-generation");
  CHECK(gpt.configurations[0].precision == "bf16");
  CHECK(gpt.configurations[0].train_batch_size == 1);
  CHECK(gpt.configurations[0].effective_eval_batch_size() == 1);
  CHECK(gpt.configurations[0].sequence_length == 128);
  CHECK(gpt.configurations[0].num_cores == 2);
  CHECK(gpt.configurations[0].max_steps == 10);
  CHECK(gpt.configurations[1].precision == "fp");
  CHECK(gpt.configurations[1].eval_batch_size == 8);
  CHECK(gpt.configurations[1].max_steps == 20);
  const auto& t5 = manifest.models[1];
  REQUIRE(t5.command);
  CHECK(*t5.command == std::vector<std::string>{"other", "{model}", "two words"});
  CHECK(t5.configurations[0].encoder_sequence_length == 64);
  CHECK(t5.configurations[0].decoder_sequence_length == 32);
  CHECK_FALSE(t5.configurations[0].sequence_length);
}

TEST_CASE("manifest: an inference configuration: batch_size, fp16 and an auto-cast type, no precision needed")
{
  auto manifest =
    parse("models:\n  - model: org/bert\n    configurations:\n"
          "      - {task: fill-mask, auto_cast_type: fp16, num_cores: 1, batch_size: 1, "
          "sequence_length: 8}\n"
          "      - {task: fill-mask, precision: fp16, num_cores: 1, batch_size: 2, sequence_length: 8}\n");
  const auto& configurations = manifest.models.at(0).configurations;
  CHECK(configurations.at(0).auto_cast_type == "fp16");
  CHECK(configurations.at(0).precision.empty());
  CHECK(configurations.at(0).train_batch_size == 1);
  CHECK(configurations.at(1).precision == "fp16");
  CHECK_FALSE(configurations.at(1).auto_cast_type);
}

TEST_CASE("manifest: a relative model directory is resolved next to the manifest")
{
  test_support::TempDir dir;
  std::filesystem::create_directories(dir / "models/tiny");
  hubcache::util::write_file_atomically(dir / "ci.yaml",
                                        "models:\n  - model: models/tiny\n    configurations:\n"
                                        "      - {task: t, precision: fp, num_cores: 1, batch_size: 1, "
                                        "sequence_length: 8}\n");
  auto manifest = parse_manifest(dir / "ci.yaml");
  CHECK(manifest.models[0].model == (dir / "models/tiny").string());
}

TEST_CASE("manifest: not YAML gives line and column")
{
  auto message = error_of("models: [\n  - {a: 1\n");
  CHECK(message.starts_with("ci.yaml:"));
  CHECK(message.find("not valid YAML") != std::string::npos);
  CHECK(error_of("key: \"unterminated\n").find("ci.yaml:1:") == 0);
  CHECK(error_of("just some text")
        == "ci.yaml:1:1: a manifest must be a YAML mapping with a 'models' list, got 'just some text'");
}

TEST_CASE("manifest: missing required keys")
{
  CHECK(error_of("repo: /x\n")
        == "ci.yaml:1:1: missing required key 'models' (a list of models with their configurations)");
  CHECK(error_of("models: []\n") == "ci.yaml:1:9: 'models' must be a non-empty list, got a list");
  CHECK(error_of("models:\n  - task: t\n    configurations: []\n")
        == "ci.yaml:2:5: missing required key 'model' (a Hub model id or a directory)");
  CHECK(error_of("models:\n  - model: org/m\n")
        == "ci.yaml:2:5: missing required key 'configurations' for model 'org/m'");
  CHECK(error_of("models:\n  - model: org/m\n    configurations:\n      - {task: t, precision: fp, batch_size: 1, "
                 "sequence_length: 8}\n")
        == "ci.yaml:4:9: missing required key 'num_cores' in a configuration of 'org/m'");
  CHECK(error_of("models:\n  - model: org/m\n    configurations:\n      - {task: t, precision: fp, num_cores: 1, "
                 "sequence_length: 8}\n")
        == "ci.yaml:4:9: missing required key 'train_batch_size' in a configuration of 'org/m' (or batch_size)");
  CHECK(error_of("models:\n  - model: org/m\n    configurations:\n      - {task: t, num_cores: 1, batch_size: 1, "
                 "sequence_length: 8}\n")
        == "ci.yaml:4:9: missing required key 'precision' in a configuration of 'org/m' (or auto_cast_type)");
  // optimum's own message for the sequence lengths.
  CHECK(error_of("models:\n  - model: org/m\n    configurations:\n      - {task: t, precision: fp, num_cores: 1, "
                 "batch_size: 1}\n")
        == "ci.yaml:4:9: You need to specify either sequence_length or encoder_sequence_length and "
           "decoder_sequence_length");
  CHECK(error_of("models:\n  - model: org/m\n    configurations:\n      - {task: t, precision: fp, num_cores: 1, "
                 "batch_size: 1, encoder_sequence_length: 4}\n")
        == "ci.yaml:4:9: Both the encoder_sequence_length and the decoder_sequence_length must be provided.");
}

TEST_CASE("manifest: unknown and duplicate keys")
{
  auto message = error_of("repo: /x\nmodles: []\n");
  CHECK(message.starts_with("ci.yaml:2:1: unknown key 'modles' in the manifest (expected one of: repo, cache_dir,"));
  CHECK(error_of("models:\n  - model: org/m\n    configurations:\n      - task: t\n        batch: 3\n")
          .starts_with("ci.yaml:5:9: unknown key 'batch' in a configuration"));
  CHECK(error_of("repo: /x\nrepo: /y\nmodels: []\n") == "ci.yaml:2:1: key 'repo' appears twice in the manifest");
  CHECK(error_of("models:\n  - model: m\n    configurations:\n      - {task: t, batch_size: 1, train_batch_size: 2}\n")
        == "ci.yaml:4:31: give either 'batch_size' or 'train_batch_size' in a configuration, not both");
}

TEST_CASE("manifest: wrong types")
{
  CHECK(error_of("models: {a: 1}\n") == "ci.yaml:1:9: 'models' must be a non-empty list, got a mapping");
  CHECK(error_of("models:\n  - model: m\n    configurations:\n      - {task: t, num_cores: two}\n")
        == "ci.yaml:4:30: 'num_cores' must be an integer, got 'two'");
  CHECK(error_of("models:\n  - model: m\n    configurations:\n      - {task: t, num_cores: \"2\"}\n")
        == "ci.yaml:4:30: 'num_cores' must be an integer, got '2'");
  CHECK(error_of("models:\n  - model: m\n    configurations:\n      - {task: t, num_cores: 1.5}\n")
        == "ci.yaml:4:30: 'num_cores' must be an integer, got '1.5'");
  CHECK(error_of("models:\n  - model: m\n    configurations:\n      - {task: t, num_cores: 0}\n")
        == "ci.yaml:4:30: 'num_cores' must be at least 1, got 0");
  CHECK(error_of("models:\n  - model: m\n    configurations:\n      - {task: t, precision: fp8}\n")
        == "ci.yaml:4:30: 'precision' must be one of fp, bf16, fp16, got 'fp8'");
  CHECK(error_of("models:\n  - model: m\n    configurations:\n      - {task: t, auto_cast_type: int8}\n")
        == "ci.yaml:4:35: 'auto_cast_type' must be one of bf16, fp16, tf32, fp32, got 'int8'");
  CHECK(error_of("models:\n  - model: [a, b]\n    configurations: []\n")
        == "ci.yaml:2:12: 'model' must be a non-empty string, got a list");
  CHECK(error_of("command: {a: 1}\nmodels: []\n")
        == "ci.yaml:1:10: 'command' must be a string or a non-empty list of strings, got a mapping");
  CHECK(error_of("env: [A]\nmodels: []\n")
        == "ci.yaml:1:6: 'env' must be a mapping of variable names to strings, got a list");
  CHECK(error_of("models:\n  - configurations\n") == "ci.yaml:2:5: a model must be a mapping, got 'configurations'");
  CHECK(error_of("models:\n  - model: m\n    configurations:\n      - 4\n")
        == "ci.yaml:4:9: a configuration must be a mapping, got '4'");
}

// Found while writing fuzz_add_manifest: a list or mapping as an env key escaped as a
// yaml-cpp conversion error instead of the manifest's own one-line message.
TEST_CASE("manifest: an env key that is not a name is refused with line and column")
{
  CHECK(error_of("env: {[a, b]: c}\nmodels: [{model: x, configurations: [{task: t}]}]\n")
        == "ci.yaml:1:7: keys of 'env' must be variable names, got a list");
  CHECK(
    error_of("env:\n  ? {A: 1}\n  : v\nmodels: []\n").starts_with("ci.yaml:2:5: keys of 'env' must be variable names"));
}

TEST_CASE("manifest: files that are missing or not files")
{
  test_support::TempDir dir;
  CHECK_THROWS_AS(parse_manifest(dir / "absent.yaml"), hubcache::InvalidArgument);
  CHECK_THROWS_AS(parse_manifest(dir.path()), hubcache::InvalidArgument);
}

TEST_CASE("manifest: the example under examples/ parses")
{
  auto manifest = parse_manifest(std::filesystem::path(NEURON_CACHE_TEST_DATA) / "../../examples/add-manifest.yaml");
  CHECK_FALSE(manifest.models.empty());
  CHECK(manifest.command.has_value());
}

TEST_CASE("manifest: hostile YAML is refused with one line: deep nesting, size, a FIFO")
{
  CHECK(error_of(std::string(300000, '[') + std::string(300000, ']')).find("ci.yaml:") == 0);
  CHECK(error_of(std::string(300000, '[') + std::string(300000, ']')).find("nested too deeply") != std::string::npos);
  std::string dashes;
  for (int i = 0; i < 100000; ++i) {
    dashes += "- ";
  }
  CHECK(error_of(dashes + "x\n").find("nested too deeply") != std::string::npos);
  CHECK(error_of("models: []\n# " + std::string(2 << 20, 'x') + "\n").find("larger than") != std::string::npos);
  // An alias that refers to its own node must not send the reader round in circles.
  CHECK(error_of("models: &a [*a]\n").find("ci.yaml") == 0);
  test_support::TempDir dir;
  REQUIRE(::mkfifo((dir / "fifo.yaml").c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(parse_manifest(dir / "fifo.yaml"), doctest::Contains("not a regular file"), hubcache::Error);
}

} // namespace addjobs_add_manifest_test
