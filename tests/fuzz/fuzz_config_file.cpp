// The cache repo config file ($HF_HOME/optimum_neuron_custom_cache, shared with
// optimum-neuron) and repo specs as users type them. Input: the file content. Properties:
// only ConfigError/InvalidArgument/NotSupported; a parsed spec's canonical form parses
// back to itself; what is written reads back the same.
#include "fuzz_support.hpp"

#include <hubcache/storage/repo_choice.hpp>

#include <fstream>

namespace {

hubcache::storage::RepoSpec check_spec(std::string_view text)
{
  auto spec = hubcache::storage::parse_repo_spec(text);
  auto canonical = spec.canonical();
  auto again = hubcache::storage::parse_repo_spec(canonical);
  FUZZ_CHECK(again.canonical() == canonical, "canonical form does not parse back: " + canonical);
  FUZZ_CHECK(again.kind == spec.kind, "kind changed on a round trip: " + canonical);
  if (spec.kind == hubcache::storage::RepoKind::hub) {
    FUZZ_CHECK(spec.hub_id == again.hub_id, "hub id changed on a round trip");
  } else if (spec.kind == hubcache::storage::RepoKind::directory) {
    FUZZ_CHECK(spec.directory.is_absolute(), "a relative directory repo: " + canonical);
  } else {
    FUZZ_CHECK(spec.s3_url == again.s3_url, "S3 URL changed on a round trip: " + canonical);
  }
  return spec;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  auto text = fuzz::text_of(data, size);
  fuzz::accepts([&] { check_spec(text); });

  auto file = fuzz::scratch_dir() / "optimum_neuron_custom_cache";
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  std::optional<std::string> stored;
  if (!fuzz::accepts([&] { stored = hubcache::storage::read_custom_cache_repo(file); })) {
    return 0;
  }
  FUZZ_CHECK(stored.has_value(), "an existing config file read as absent");
  FUZZ_CHECK(!stored->empty(), "an empty name was read");
  hubcache::storage::RepoSpec spec;
  if (!fuzz::accepts([&] { spec = check_spec(*stored); })) {
    return 0;
  }
  // What `set` writes, `read` gives back.
  hubcache::storage::write_custom_cache_repo(file, spec.canonical());
  FUZZ_CHECK(hubcache::storage::read_custom_cache_repo(file) == spec.canonical(),
             "written name reads back differently");
  return 0;
}
