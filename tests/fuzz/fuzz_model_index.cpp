// A local diffusers model directory as lookup reads it: model_index.json plus
// <component>/config.json files, written to a scratch directory from the input.
// Input: model_index.json, then component configs, separated by lines "--- <name>".
// Properties: only InvalidArgument; a usable pipeline yields a lookup target, and the
// entry add would write for it matches that target.
#include "fuzz_support.hpp"

#include <hubcache/util/fs.hpp>
#include <registry/entry.hpp>
#include <registry/lookup.hpp>
#include <registry/model_source.hpp>

#include <fstream>

namespace {

void write(const std::filesystem::path& path, std::string_view content)
{
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  auto text = fuzz::text_of(data, size);
  auto model = fuzz::scratch_dir() / "model";
  std::filesystem::remove_all(model);
  std::filesystem::create_directories(model);

  constexpr std::string_view separator = "\n--- ";
  auto cut = text.find(separator);
  write(model / "model_index.json", text.substr(0, cut));
  std::size_t components = 0;
  while (cut != std::string_view::npos && components < 8) {
    text.remove_prefix(cut + separator.size());
    auto end_of_name = text.find('\n');
    auto name = text.substr(0, end_of_name);
    text.remove_prefix(end_of_name == std::string_view::npos ? text.size() : end_of_name + 1);
    cut = text.find(separator);
    // Component names are directory names: keep the fuzzer inside the scratch dir.
    if (name.empty() || name == "." || name == ".." || name.find_first_of("/\\") != std::string_view::npos
        || name.find('\0') != std::string_view::npos || name.size() > 64) {
      continue;
    }
    std::filesystem::create_directories(model / name);
    write(model / name / "config.json", text.substr(0, cut));
    ++components;
  }

  std::optional<registry::ModelConfigs> configs;
  if (!fuzz::accepts([&] { configs = registry::read_local_model(model); })) {
    return 0;
  }
  FUZZ_CHECK(configs.has_value(), "an existing directory was not read");
  FUZZ_CHECK(configs->multi_model, "a model_index.json directory was not read as a pipeline");
  registry::LookupTarget target;
  if (!fuzz::accepts([&] { target = registry::make_lookup_target("org/other-pipeline", std::nullopt, *configs); })) {
    return 0;
  }
  registry::CacheEntry entry;
  if (!fuzz::accepts([&] { entry = registry::make_multi_model_entry("org/pipeline", configs->components); })) {
    return 0;
  }
  std::string serialized;
  if (!fuzz::accepts([&] { serialized = entry.serialize(); })) {
    return 0;
  }
  auto again = registry::CacheEntry::deserialize(serialized, "re-read");
  FUZZ_CHECK(again.serialize() == serialized, "the pipeline entry does not read back as itself");
  registry::LoadedEntry loaded;
  loaded.entry = again;
  FUZZ_CHECK(registry::match_entry(loaded, target).has_value(),
             "a lookup for the same pipeline does not find its entry");
  return 0;
}
