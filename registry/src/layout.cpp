#include "registry/layout.hpp"

#include <hubcache/error.hpp>
#include <hubcache/layout/names.hpp>
#include <hubcache/storage/repository.hpp>

#include <vector>

namespace registry {

namespace {

std::vector<std::string_view> split_path(std::string_view path)
{
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      parts.push_back(path.substr(start));
      break;
    }
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

bool ends_with(std::string_view text, std::string_view suffix)
{
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string join(const std::vector<std::string_view>& parts, std::size_t from, std::size_t to)
{
  std::string out;
  for (std::size_t i = from; i < to; ++i) {
    out += (i == from ? "" : "/");
    out += parts[i];
  }
  return out;
}

} // namespace

bool is_arch_digest(std::string_view text) noexcept
{
  if (text.size() != 64) {
    return false;
  }
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

bool compiler_version_matches(std::string_view version, std::string_view filter) noexcept
{
  return hubcache::layout::version_matches(version, filter);
}

std::optional<RegistryPath> parse_registry_path(std::string_view path)
{
  auto parts = split_path(path);
  std::size_t registry_at = parts.size();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == k_registry_dir) {
      registry_at = i;
      break;
    }
  }
  if (registry_at == parts.size()) {
    return std::nullopt;
  }
  RegistryPath result;
  result.path = std::string(path);
  auto unexpected = [&](std::string problem) {
    result.kind = RegistryPathKind::unexpected;
    result.problem = std::move(problem);
    return result;
  };
  if (registry_at != 1 || parts[0].substr(0, k_compiler_dir_prefix.size()) != k_compiler_dir_prefix
      || parts[0].size() == k_compiler_dir_prefix.size()) {
    return unexpected("0_REGISTRY is not directly below a neuronxcc-<version> directory");
  }
  result.compiler_dir = std::string(parts[0]);
  result.compiler_version = std::string(parts[0].substr(k_compiler_dir_prefix.size()));
  if (parts.size() < 4) {
    return unexpected("no registry version and entry below 0_REGISTRY");
  }
  result.registry_version = std::string(parts[2]);
  if (result.registry_version == k_attribution_version) {
    return std::nullopt; // add's attribution records, not entries
  }
  result.registry_root = join(parts, 0, 3);
  auto file = parts.back();
  if (!ends_with(file, ".json") || file.size() == 5) {
    return unexpected("not a .json entry file");
  }
  result.file_hash = std::string(file.substr(0, file.size() - 5));
  // Directories between the registry version and the file.
  std::vector<std::string_view> dirs(parts.begin() + 3, parts.end() - 1);
  if (dirs.size() == 1 && is_arch_digest(dirs[0])) {
    result.kind = RegistryPathKind::digest;
    result.arch_digest = std::string(dirs[0]);
    return result;
  }
  if (!dirs.empty() && (dirs[0] == "inference" || dirs[0] == "training")) {
    result.mode = std::string(dirs[0]);
    dirs.erase(dirs.begin());
  }
  if (dirs.size() == 2 || dirs.size() == 3) {
    result.kind = RegistryPathKind::alias;
    result.model_type = std::string(dirs[0]);
    result.model_id = join(dirs, 1, dirs.size());
    return result;
  }
  return unexpected("entry at depth " + std::to_string(parts.size() - 3)
                    + " below the registry version (expected <digest>/<hash>.json or "
                      "<model_type>/[<org>/]<model>/<hash>.json)");
}

std::string registry_root(const std::string& compiler_version, const std::string& registry_version)
{
  return std::string(k_compiler_dir_prefix) + compiler_version + "/" + std::string(k_registry_dir) + "/"
         + registry_version;
}

namespace {

// What add writes must read back as what it files: a version holding a '/' (or a model id
// or type with extra levels) would put the entry where lookup reads something else.
std::optional<RegistryPath> filed_as(const std::string& path, RegistryPathKind kind,
                                     const std::string& compiler_version, const std::string& registry_version)
{
  auto parsed = parse_registry_path(path);
  if (!hubcache::storage::is_valid_path_in_repo(path) || !parsed || parsed->kind != kind
      || parsed->compiler_version != compiler_version || parsed->registry_version != registry_version) {
    return std::nullopt;
  }
  return parsed;
}

} // namespace

std::string registry_path(const std::string& compiler_version, const std::string& registry_version,
                          const CacheEntry& entry)
{
  auto path = registry_root(compiler_version, registry_version) + "/" + entry.model_type + "/" + entry.model_id + "/"
              + entry.hash() + ".json";
  auto parsed = filed_as(path, RegistryPathKind::alias, compiler_version, registry_version);
  if (!parsed || parsed->model_id != entry.model_id || parsed->model_type != entry.model_type) {
    throw hubcache::InvalidArgument("cannot file a registry entry for model '" + entry.model_id + "' (model type '"
                                      + entry.model_type + "', compiler " + compiler_version + ")",
                                    "model ids are 'org/name' or 'name' without '..' or empty parts");
  }
  return path;
}

std::string digest_registry_path(const std::string& compiler_version, const std::string& registry_version,
                                 const CacheEntry& entry)
{
  auto path =
    registry_root(compiler_version, registry_version) + "/" + entry.arch_digest() + "/" + entry.hash() + ".json";
  if (!filed_as(path, RegistryPathKind::digest, compiler_version, registry_version)) {
    throw hubcache::InvalidArgument("cannot file a registry entry under compiler version '" + compiler_version
                                      + "' and registry version '" + registry_version + "'",
                                    "versions are single path components");
  }
  return path;
}

std::string attribution_path(const std::string& compiler_version, const std::string& entry_hash)
{
  return registry_root(compiler_version, std::string(k_attribution_version)) + "/" + entry_hash + ".json";
}

} // namespace registry
