// Registry paths from a repo listing (every file name in a shared repo reaches this):
// parse_registry_path classifies without throwing (add's attribution records aside), and
// what it extracts puts the path back together exactly.
#include "fuzz_support.hpp"

#include <registry/layout.hpp>

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  auto path = fuzz::text_of(data, size);
  auto parsed = registry::parse_registry_path(path);
  bool has_registry_component = false;
  for (std::size_t start = 0; start <= path.size();) {
    auto slash = std::min(path.find('/', start), path.size());
    has_registry_component = has_registry_component || path.substr(start, slash - start) == registry::k_registry_dir;
    start = slash + 1;
  }
  if (!parsed) {
    // Not a registry path at all, or one of add's attribution records, which sit under
    // 0_REGISTRY but are not entries: neuronxcc-<cv>/0_REGISTRY/neuron-cache-modules/<file>.
    auto attribution_dir =
      "/" + std::string(registry::k_registry_dir) + "/" + std::string(registry::k_attribution_version) + "/";
    auto at = path.find(attribution_dir);
    bool attribution_record =
      at != std::string::npos && path.find('/') == at
      && path.compare(0, registry::k_compiler_dir_prefix.size(), registry::k_compiler_dir_prefix) == 0
      && at > registry::k_compiler_dir_prefix.size();
    FUZZ_CHECK(!has_registry_component || attribution_record,
               "a path with a 0_REGISTRY component is neither classified nor an attribution record");
    return 0;
  }
  FUZZ_CHECK(has_registry_component, "classified without a 0_REGISTRY component");
  FUZZ_CHECK(parsed->path == path, "the path is not kept as listed");
  if (parsed->kind == registry::RegistryPathKind::unexpected) {
    FUZZ_CHECK(!parsed->problem.empty(), "an unexpected path without a reason");
    return 0;
  }
  FUZZ_CHECK(parsed->compiler_dir == std::string(registry::k_compiler_dir_prefix) + parsed->compiler_version,
             "compiler dir and version disagree");
  FUZZ_CHECK(!parsed->compiler_version.empty(), "empty compiler version");
  FUZZ_CHECK(parsed->registry_root == registry::registry_root(parsed->compiler_version, parsed->registry_version),
             "registry root is not rebuilt from the versions");
  std::string rebuilt = parsed->registry_root + "/";
  if (parsed->kind == registry::RegistryPathKind::digest) {
    FUZZ_CHECK(registry::is_arch_digest(parsed->arch_digest), "digest path without a digest");
    rebuilt += parsed->arch_digest;
  } else {
    if (!parsed->mode.empty()) {
      rebuilt += parsed->mode + "/";
    }
    rebuilt += parsed->model_type + "/" + parsed->model_id;
  }
  rebuilt += "/" + parsed->file_hash + ".json";
  FUZZ_CHECK(rebuilt == path, "the parts do not rebuild the path: " + rebuilt);

  // Version filters compare against the parsed compiler version.
  FUZZ_CHECK(registry::compiler_version_matches(parsed->compiler_version, parsed->compiler_version),
             "a version does not match itself");
  auto plus = parsed->compiler_version.find('+');
  if (plus != std::string::npos) {
    FUZZ_CHECK(registry::compiler_version_matches(parsed->compiler_version, parsed->compiler_version.substr(0, plus)),
               "a version does not match its release part");
  }
  return 0;
}
