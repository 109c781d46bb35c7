// Registry files as read from a shared cache repo (lookup, list -m, add): deserialize, then
// everything lookup and list do with an entry. Properties: only InvalidArgument for bad
// files; an accepted entry serializes, and reading that text back gives the same bytes
// (the file name is a hash of them).
#include "fuzz_support.hpp"

#include <registry/entry.hpp>
#include <registry/json_text.hpp>
#include <registry/lookup.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  auto text = fuzz::text_of(data, size);
  // Half the inputs are read as pre-0.0.21 entries, whose model id comes from the path.
  std::optional<std::string> legacy_model_id;
  if (size % 2 == 1) {
    legacy_model_id = "org/legacy-model";
  }
  registry::CacheEntry entry;
  if (!fuzz::accepts([&] { entry = registry::CacheEntry::deserialize(text, "fuzz.json", legacy_model_id); })) {
    return 0;
  }
  std::string serialized;
  if (!fuzz::accepts([&] { serialized = entry.serialize(); })) {
    return 0;
  }
  auto again = registry::CacheEntry::deserialize(serialized, "re-read");
  FUZZ_CHECK(again.serialize() == serialized, "serialize(deserialize(serialize(e))) differs");
  FUZZ_CHECK(again.hash() == entry.hash(), "the file hash changed on a round trip");
  FUZZ_CHECK(again.arch_digest() == entry.arch_digest(), "the arch digest changed on a round trip");

  // What lookup and list read from an entry.
  registry::LoadedEntry loaded;
  loaded.entry = entry;
  (void)registry::entry_shape(entry);
  (void)registry::python_str(entry.neuron_config());
  (void)registry::passes_filters(loaded, registry::Filters{});
  registry::Filters filters;
  filters.batch_size = 1;
  filters.sequence_length = 128;
  filters.num_cores = 2;
  filters.dtype = "bfloat16";
  filters.task = "text-generation";
  (void)registry::passes_filters(loaded, filters);
  // A lookup for another model of the same architecture compares configs.
  fuzz::accepts([&] {
    auto target = entry.entry_class == registry::EntryClass::single_model
                    ? registry::make_lookup_target("fuzz/other", entry.task, entry.config)
                    : registry::make_multi_model_lookup_target("fuzz/other", entry.config);
    (void)registry::match_entry(loaded, target);
  });
  return 0;
}
