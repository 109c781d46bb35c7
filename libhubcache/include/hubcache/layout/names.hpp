#pragma once

#include <string_view>

// The compile cache's words as every store and the registry write them, below every floor
// that reads them (storage, compilecache, registry stand on it):
//   neuronxcc-<compiler version>/MODULE_<graph key>+<flags suffix>/...
//   neuronxcc-<compiler version>/0_REGISTRY/...
namespace hubcache::layout {

inline constexpr std::string_view k_registry_dir = "0_REGISTRY";
inline constexpr std::string_view k_version_prefix = "neuronxcc-";
inline constexpr std::string_view k_module_prefix = "MODULE_";

// The publish order within an entry: model.done last, model.neff just before it (the files
// a compiler trusts), every other file before them.
inline int install_rank(std::string_view file_name)
{
  return file_name == "model.done" ? 2 : file_name == "model.neff" ? 1 : 0;
}

// The one --compiler-version rule: `filter` matches the full version (2.15.128.0+56dc5a86)
// or a prefix of it ending at a '.' or '+' boundary (2.15.128.0, 2.15).
bool version_matches(std::string_view version, std::string_view filter);

// The compiler version a repo path is filed under: "neuronxcc-2.21.0+8/MODULE_x" ->
// "2.21.0+8"; empty for a path outside a version directory.
inline std::string_view compiler_version_of(std::string_view path)
{
  auto first = path.substr(0, path.find('/'));
  return first.starts_with(k_version_prefix) ? first.substr(k_version_prefix.size()) : std::string_view();
}

} // namespace hubcache::layout
