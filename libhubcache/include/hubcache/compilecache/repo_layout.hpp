#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/layout/names.hpp"
#include "hubcache/storage/repository.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

// A repo listing read as compile-cache entries.
namespace hubcache::compilecache {

// A compile-cache entry as the repo holds it.
struct RepoEntry {
  EntryKind kind = EntryKind::module;
  std::string path;
  std::string compiler_version;
  std::vector<storage::RepoFile> files; // installable files (locks and temp files left out)
};

struct RepoLayout {
  std::vector<RepoEntry> entries;
  std::size_t other_files = 0; // files that are not compile-cache entries (legacy, configs)
};
// Groups a repo listing into entries; the registry of a version is one entry.
RepoLayout group_repo_files(const std::vector<storage::RepoFile>& files);
// The same, consuming the listing (its files move into the entries).
RepoLayout group_repo_files(std::vector<storage::RepoFile>&& files);

// The --compiler-version rule (layout/names.hpp).
using layout::version_matches;

} // namespace hubcache::compilecache
