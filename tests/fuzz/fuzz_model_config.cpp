// A model's config.json (a local file, or the Hub model's) as lookup and add read it:
// parsed, turned into a lookup target and into the registry entry add writes. Properties:
// only InvalidArgument for bad configs; an entry add accepts reads back as itself and
// matches a lookup for the same model.
#include "fuzz_support.hpp"

#include <registry/entry.hpp>
#include <registry/lookup.hpp>
#include <registry/model_source.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  std::string text(fuzz::text_of(data, size));
  registry::ModelConfigs configs;
  if (!fuzz::accepts([&] { configs = registry::model_configs_from_text(text, "config.json"); })) {
    return 0;
  }
  std::optional<std::string> task;
  if (size % 2 == 1) {
    task = "text-generation";
  }
  registry::LookupTarget target;
  bool has_target = fuzz::accepts([&] { target = registry::make_lookup_target("org/model", task, configs); });

  registry::CacheEntry entry;
  bool has_entry = fuzz::accepts([&] {
    entry = registry::make_registry_entry("org/model", task, configs.config, {{"batch_size", 1}});
  });
  FUZZ_CHECK(has_entry == has_target, "add and lookup disagree on whether the config is usable");
  if (!has_entry) {
    return 0;
  }
  std::string serialized;
  if (!fuzz::accepts([&] { serialized = entry.serialize(); })) {
    return 0;
  }
  auto again = registry::CacheEntry::deserialize(serialized, "re-read");
  FUZZ_CHECK(again.serialize() == serialized, "the entry add writes does not read back as itself");
  registry::LoadedEntry loaded;
  loaded.entry = again;
  // optimum's format stores the entry's own metadata under these keys of the config dict:
  // a config.json holding them (none does) cannot keep them through a registry file.
  for (const char* metadata : {"_entry_class", "_model_id", "_task"}) {
    if (configs.config.contains(metadata)) {
      return 0;
    }
  }
  FUZZ_CHECK(registry::match_entry(loaded, target) == registry::MatchReason::arch_digest,
             "lookup does not find the entry add wrote for the same config by its arch digest");
  return 0;
}
