#pragma once

#include "registry/lookup.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

// Which compiled graphs (MODULE_* folders) of a repo the registry names, and which none
// does: what `list` counts so every byte is accounted for, and what `cleanup --repo`
// keeps consistent when it removes graphs.
namespace registry {

// One registry entry (every copy of it in one registry root) and the graphs it names.
struct RegisteredEntry {
  std::string compiler_dir;
  std::string hash;
  std::vector<std::string> paths;  // the entry's registry files (alias and digest copies)
  std::string record;              // add's attribution record for it, empty when none
  std::vector<std::string> graphs; // "<compiler_dir>/MODULE_<x>" folders the repo holds
};

struct GraphMap {
  std::vector<RegisteredEntry> entries;
  // Graphs the repo holds that no registry entry names, sorted.
  std::vector<std::string> unregistered;
  // Compiler dirs holding registry entries that name no graphs the repo holds (optimum's
  // own entries of decoder models: its graphs are found by hash at compile time), or
  // whose record could not be read. Their "unregistered" graphs may be those entries'.
  std::set<std::string> unattributed_dirs;
};

// From the index of a listing: the MODULE_<entry hash> folder of each entry (traced
// models), and the folders add's attribution records name (each record read, up to
// `parallelism` at once; an unreadable record names nothing).
GraphMap map_graphs(const RegistryIndex& index, hubcache::storage::Repository& repo, unsigned parallelism = 8);

// "neuronxcc-2.21.0" -> "2.21.0".
std::string compiler_version_of(const std::string& compiler_dir);

} // namespace registry
