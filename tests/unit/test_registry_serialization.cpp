// Serialization and hashes against vectors produced once by CPython's json module
// (tests/data/registry/generate_vectors.py); the tests never run Python.
#include <doctest/doctest.h>

#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>
#include <registry/entry.hpp>
#include <registry/json_text.hpp>

#include <cmath>
#include <limits>

namespace registry_serialization_test {

namespace {

const nlohmann::json& vectors()
{
  static const nlohmann::json data =
    nlohmann::json::parse(hubcache::util::read_file(std::string(NEURON_CACHE_TEST_DATA) + "/registry/vectors.json"));
  return data;
}

} // namespace

TEST_CASE("registry: json.dumps(indent=2, sort_keys=True) and compact form match CPython byte for byte")
{
  const auto& cases = vectors()["serialization"];
  REQUIRE(cases.size() >= 9);
  for (const auto& vector : cases) {
    CAPTURE(vector["name"].get<std::string>());
    auto value = registry::parse_json(vector["input"].get<std::string>(), "vector");
    auto indented = registry::dumps_indented(value);
    CHECK(indented == vector["indent2"].get<std::string>());
    CHECK(registry::dumps_compact(value) == vector["compact"].get<std::string>());
    CHECK(hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha512, indented).substr(0, 20)
          == vector["sha512_20"].get<std::string>());
    CHECK(hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha256, registry::dumps_compact(value))
          == vector["sha256_compact"].get<std::string>());
  }
}

TEST_CASE("registry: single-model entries serialize, hash and digest like optimum")
{
  for (const auto& vector : vectors()["entries"]) {
    CAPTURE(vector["model_id"].get<std::string>());
    auto config = registry::parse_json(vector["config"].get<std::string>(), "config");
    auto neuron = registry::parse_json(vector["neuron"].get<std::string>(), "neuron");
    auto entry = registry::make_registry_entry(vector["model_id"].get<std::string>(), vector["task"].get<std::string>(),
                                               config, neuron);
    CHECK(entry.serialize() == vector["serialized"].get<std::string>());
    CHECK(entry.hash() == vector["hash"].get<std::string>());
    CHECK(entry.arch_digest() == vector["arch_digest"].get<std::string>());
    CHECK(registry::dumps_indented(entry.config) == vector["cleaned_config"].get<std::string>());

    // Round trip: reading the file gives the same entry and the same bytes back.
    auto read_back = registry::CacheEntry::deserialize(vector["serialized"].get<std::string>());
    CHECK(read_back.entry_class == registry::EntryClass::single_model);
    CHECK(read_back.model_id == entry.model_id);
    CHECK(read_back.task == entry.task);
    CHECK(read_back.model_type == entry.model_type);
    CHECK(read_back.serialize() == vector["serialized"].get<std::string>());
    CHECK(read_back.arch_digest() == vector["arch_digest"].get<std::string>());
  }
}

TEST_CASE("registry: multi-model (diffusers) entries drop vae and neuron white-list keys")
{
  for (const auto& vector : vectors()["multi_entries"]) {
    auto configs = registry::parse_json(vector["configs"].get<std::string>(), "configs");
    auto entry = registry::make_multi_model_entry(vector["model_id"].get<std::string>(), configs);
    CHECK(entry.model_type == vector["model_type"].get<std::string>());
    CHECK(entry.serialize() == vector["serialized"].get<std::string>());
    CHECK(entry.hash() == vector["hash"].get<std::string>());
    CHECK(entry.arch_digest() == vector["arch_digest"].get<std::string>());
    CHECK_FALSE(entry.config.contains("vae_decoder"));
    CHECK(entry.neuron_config()["static_height"] == 64);
    auto read_back = registry::CacheEntry::deserialize(vector["serialized"].get<std::string>());
    CHECK(read_back.entry_class == registry::EntryClass::multi_model);
    CHECK_FALSE(read_back.task.has_value());
    CHECK(read_back.serialize() == vector["serialized"].get<std::string>());
  }
}

TEST_CASE("registry: Python float repr")
{
  CHECK(registry::python_float_repr(1e-05) == "1e-05");
  CHECK(registry::python_float_repr(0.0001) == "0.0001");
  CHECK(registry::python_float_repr(10000.0) == "10000.0");
  CHECK(registry::python_float_repr(1e16) == "1e+16");
  CHECK(registry::python_float_repr(1e15) == "1000000000000000.0");
  CHECK(registry::python_float_repr(-0.0) == "-0.0");
  CHECK(registry::python_float_repr(0.0) == "0.0");
  CHECK(registry::python_float_repr(0.1) == "0.1");
  CHECK(registry::python_float_repr(123.456) == "123.456");
  CHECK(registry::python_float_repr(std::numeric_limits<double>::infinity()) == "Infinity");
  CHECK(registry::python_float_repr(-std::numeric_limits<double>::infinity()) == "-Infinity");
  CHECK(registry::python_float_repr(std::nan("")) == "NaN");
  // Built in C++ (the parser cannot read them): json.dumps writes the bare words.
  nlohmann::json special = {{"a", std::numeric_limits<double>::infinity()}, {"b", std::nan("")}};
  CHECK(registry::dumps_compact(special) == R"({"a": Infinity, "b": NaN})");
}

TEST_CASE("registry: python_str renders values as optimum prints them")
{
  CHECK(registry::python_str(nlohmann::json("text")) == "text");
  CHECK(registry::python_str(nlohmann::json(true)) == "True");
  CHECK(registry::python_str(nlohmann::json(nullptr)) == "None");
  CHECK(registry::python_str(nlohmann::json(2.0)) == "2.0");
  CHECK(registry::python_str(nlohmann::json::parse(R"([1, "a", null, false])")) == "[1, 'a', None, False]");
  CHECK(registry::python_str(nlohmann::json::parse(R"({"k": [1.5]})")) == "{'k': [1.5]}");
}

TEST_CASE("registry: malformed entries are InvalidArgument, never a crash")
{
  using registry::CacheEntry;
  CHECK_THROWS_AS(CacheEntry::deserialize("{not json"), hubcache::InvalidArgument);
  CHECK_THROWS_AS(CacheEntry::deserialize("[1, 2]"), hubcache::InvalidArgument);
  CHECK_THROWS_AS(CacheEntry::deserialize(R"({"_model_id": "x"})"), hubcache::InvalidArgument);
  CHECK_THROWS_AS(CacheEntry::deserialize(R"({"_entry_class": "Other", "_model_id": "x", "model_type": "t"})"),
                  hubcache::InvalidArgument);
  CHECK_THROWS_AS(CacheEntry::deserialize(R"({"_entry_class": "SingleModelCacheEntry", "_model_id": "x"})"),
                  hubcache::InvalidArgument);
  CHECK_THROWS_AS(CacheEntry::deserialize(R"({"_entry_class": "MultiModelCacheEntry", "_model_id": "x"})"),
                  hubcache::InvalidArgument);
  CHECK_THROWS_AS(registry::make_registry_entry("m", "t", nlohmann::json::parse(R"({"a": 1})"), nullptr),
                  hubcache::InvalidArgument);
  // optimum <= 0.0.20 wrote bare configs; the path supplies the model id.
  auto legacy = CacheEntry::deserialize(R"({"model_type": "gpt2", "neuron": {"batch_size": 1}})", "legacy",
                                        std::string("org/gpt2"));
  CHECK(legacy.model_id == "org/gpt2");
  CHECK(legacy.neuron["batch_size"] == 1);
}

TEST_CASE("registry: clean_config removes exactly the CACHE_WHITE_LIST keys")
{
  auto config = nlohmann::json::parse(
    R"({"model_type": "llama", "torch_dtype": "bfloat16", "_name_or_path": "x", "return_dict": true,
        "eos_token_id": 2, "hidden_size": 64, "sample_size": 8, "_attn_implementation_autoset": true})");
  auto cleaned = registry::clean_config(config);
  CHECK(cleaned == nlohmann::json::parse(R"({"model_type": "llama", "hidden_size": 64})"));
}

TEST_CASE("registry: a pipeline component named like an entry key is refused, not silently overwritten")
{
  nlohmann::json components = {{"unet", {{"_class_name", "UNet2DConditionModel"}, {"sample_size", 64}}},
                               {"_entry_class", {{"model_type", "clip_text_model"}}}};
  CHECK_THROWS_AS(registry::make_multi_model_entry("org/pipeline", components), hubcache::InvalidArgument);
  components.erase("_entry_class");
  auto entry = registry::make_multi_model_entry("org/pipeline", components);
  CHECK(registry::CacheEntry::deserialize(entry.serialize(), "entry").serialize() == entry.serialize());
}

} // namespace registry_serialization_test
