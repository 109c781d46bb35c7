#include <doctest/doctest.h>

#include <hubcache/error.hpp>
#include <registry/entry.hpp>
#include <registry/layout.hpp>

using registry::parse_registry_path;
using registry::RegistryPathKind;

namespace registry_layout_test {

namespace {
const std::string k_digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
}

TEST_CASE("registry: primary alias layout with and without org")
{
  auto path = parse_registry_path("neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.5/llama/meta-llama/Llama-3.1-8B/"
                                  "0123456789abcdef0123.json");
  REQUIRE(path);
  CHECK(path->kind == RegistryPathKind::alias);
  CHECK(path->compiler_version == "2.21.33363.0+82129205");
  CHECK(path->compiler_dir == "neuronxcc-2.21.33363.0+82129205");
  CHECK(path->registry_version == "0.4.5");
  CHECK(path->registry_root == "neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.5");
  CHECK(path->model_type == "llama");
  CHECK(path->model_id == "meta-llama/Llama-3.1-8B");
  CHECK(path->file_hash == "0123456789abcdef0123");
  CHECK(path->mode.empty());

  auto no_org = parse_registry_path("neuronxcc-2.12.54.0+f631c2365/0_REGISTRY/0.0.18/bert/bert-base-uncased/h.json");
  REQUIRE(no_org);
  CHECK(no_org->kind == RegistryPathKind::alias);
  CHECK(no_org->model_id == "bert-base-uncased");
}

TEST_CASE("registry: mode level and digest layouts")
{
  auto mode = parse_registry_path("neuronxcc-2.13.66.0/0_REGISTRY/0.0.19/inference/gpt2/openai/gpt2/abc.json");
  REQUIRE(mode);
  CHECK(mode->kind == RegistryPathKind::alias);
  CHECK(mode->mode == "inference");
  CHECK(mode->model_type == "gpt2");
  CHECK(mode->model_id == "openai/gpt2");
  auto training_no_org = parse_registry_path("neuronxcc-2.13.66.0/0_REGISTRY/0.0.19/training/gpt2/gpt2/abc.json");
  REQUIRE(training_no_org);
  CHECK(training_no_org->kind == RegistryPathKind::alias);
  CHECK(training_no_org->mode == "training");
  CHECK(training_no_org->model_id == "gpt2");

  auto digest = parse_registry_path("neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.5/" + k_digest + "/abc.json");
  REQUIRE(digest);
  CHECK(digest->kind == RegistryPathKind::digest);
  CHECK(digest->arch_digest == k_digest);
  CHECK(digest->file_hash == "abc");
}

TEST_CASE("registry: unexpected depths and names are reported, not thrown")
{
  CHECK_FALSE(parse_registry_path("neuronxcc-2.21/MODULE_1+2/model.neff"));
  CHECK_FALSE(parse_registry_path("registry.json"));
  CHECK_FALSE(parse_registry_path(""));
  for (const std::string bad : {
         "neuronxcc-2.21/0_REGISTRY",                                 // the dir itself as a file
         "neuronxcc-2.21/0_REGISTRY/0.4.5",                           // no entry
         "neuronxcc-2.21/0_REGISTRY/0.4.5/x.json",                    // directly in the version dir
         "neuronxcc-2.21/0_REGISTRY/0.4.5/llama/x.json",              // model type only
         "neuronxcc-2.21/0_REGISTRY/0.4.5/a/b/c/d/x.json",            // too deep
         "neuronxcc-2.21/0_REGISTRY/0.4.5/inference/llama/x.json",    // mode + model type only
         "neuronxcc-2.21/0_REGISTRY/0.4.5/llama/org/model/README.md", // not json
         "neuronxcc-2.21/0_REGISTRY/0.4.5/llama/org/model/.json",     // empty name
         "other/0_REGISTRY/0.4.5/llama/org/model/x.json",             // not a compiler dir
         "neuronxcc-/0_REGISTRY/0.4.5/llama/org/model/x.json",        // empty compiler version
         "a/neuronxcc-2.21/0_REGISTRY/0.4.5/llama/org/model/x.json",  // nested too deep
         "0_REGISTRY/0.4.5/llama/org/model/x.json",                   // at the repo root
       }) {
    CAPTURE(bad);
    auto parsed = parse_registry_path(bad);
    REQUIRE(parsed);
    CHECK(parsed->kind == RegistryPathKind::unexpected);
    CHECK_FALSE(parsed->problem.empty());
  }
}

TEST_CASE("registry: writing paths round-trip through the parser")
{
  auto entry = registry::make_registry_entry("meta-llama/Llama-3.1-8B", std::string("text-generation"),
                                             nlohmann::json{{"model_type", "llama"}, {"hidden_size", 64}},
                                             nlohmann::json{{"batch_size", 1}});
  auto path = registry::registry_path("2.21.33363.0+82129205", "0.4.5", entry);
  CHECK(path
        == "neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.5/llama/meta-llama/Llama-3.1-8B/" + entry.hash() + ".json");
  auto parsed = parse_registry_path(path);
  REQUIRE(parsed);
  CHECK(parsed->kind == RegistryPathKind::alias);
  CHECK(parsed->model_id == entry.model_id);
  CHECK(parsed->file_hash == entry.hash());

  auto digest_path = registry::digest_registry_path("2.21.33363.0+82129205", "0.4.5", entry);
  auto digest = parse_registry_path(digest_path);
  REQUIRE(digest);
  CHECK(digest->kind == RegistryPathKind::digest);
  CHECK(digest->arch_digest == entry.arch_digest());

  auto bad = entry;
  bad.model_id = "../escape";
  CHECK_THROWS_AS(registry::registry_path("2.21", "0.4.5", bad), hubcache::InvalidArgument);
  bad.model_id = "a/b/c";
  CHECK_THROWS_AS(registry::registry_path("2.21", "0.4.5", bad), hubcache::InvalidArgument);
}

// Found by fuzz_registry_layout: a version holding a '/' made a valid repo path that lookup
// reads as another layout (or not as the entry at all).
TEST_CASE("registry: versions that are not one path component cannot file an entry")
{
  auto entry =
    registry::make_registry_entry("org/model", std::string("text-generation"), nlohmann::json{{"model_type", "llama"}},
                                  nlohmann::json{{"batch_size", 1}});
  CHECK_THROWS_AS(registry::registry_path("2.21", "0.4.5/llama", entry), hubcache::InvalidArgument);
  CHECK_THROWS_AS(registry::registry_path("2.21/0_REGISTRY/x", "0.4.5", entry), hubcache::InvalidArgument);
  CHECK_THROWS_WITH_AS(registry::digest_registry_path("2.21", "0/model/extra", entry),
                       doctest::Contains("registry version '0/model/extra'"), hubcache::InvalidArgument);
  CHECK_THROWS_AS(registry::digest_registry_path("", "0.4.5", entry), hubcache::InvalidArgument);
  auto model_type_with_level = entry;
  model_type_with_level.model_id = "model";
  model_type_with_level.model_type = "llama/org";
  CHECK_THROWS_AS(registry::registry_path("2.21", "0.4.5", model_type_with_level), hubcache::InvalidArgument);
  CHECK(registry::parse_registry_path(registry::digest_registry_path("2.21", "0.4.5", entry))->registry_version
        == "0.4.5");
}

TEST_CASE("registry: compiler version filters accept the version without its +hash")
{
  CHECK(registry::compiler_version_matches("2.21.33363.0+82129205", "2.21.33363.0"));
  CHECK(registry::compiler_version_matches("2.21.33363.0+82129205", "2.21.33363.0+82129205"));
  // One rule with synchronize --pull: a prefix at a '.' or '+' boundary.
  CHECK(registry::compiler_version_matches("2.21.33363.0+82129205", "2.21"));
  CHECK_FALSE(registry::compiler_version_matches("2.21.33363.0+82129205", "2.2"));
  CHECK_FALSE(registry::compiler_version_matches("2.21.33363.0+82129205", "2.21.3"));
  CHECK_FALSE(registry::compiler_version_matches("2.21.33363.0", "2.21.33363.0+82129205"));
}

} // namespace registry_layout_test
