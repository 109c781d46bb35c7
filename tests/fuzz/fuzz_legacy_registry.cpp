// optimum <= 0.0.18's root registry.json as `list` reads it from a shared repo. Property:
// nothing throws (a bad part is a warning, the rest is listed), and every configuration
// read is one `list` can show: a model id, a compiler version, and a shape it can compute.
#include "fuzz_support.hpp"

#include <registry/json_text.hpp>
#include <registry/legacy_registry.hpp>
#include <registry/lookup.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  std::vector<std::string> warnings;
  auto configurations = registry::legacy_configurations(fuzz::text_of(data, size), warnings);
  for (const auto& configuration : configurations) {
    FUZZ_CHECK(configuration.entry != nullptr, "a configuration without its entry");
    FUZZ_CHECK(configuration.paths.size() == 1, "a configuration not tied to registry.json");
    (void)registry::entry_shape(*configuration.entry);
    (void)registry::python_str(configuration.entry->neuron_config());
  }
  FUZZ_CHECK(configurations.size() <= size, "more configurations than input bytes");
  return 0;
}
