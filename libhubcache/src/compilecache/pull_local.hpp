#pragma once

#include "hubcache/compilecache/repo_layout.hpp"
#include "hubcache/storage/repository.hpp"

#include <filesystem>
#include <string>
#include <vector>

// What planning and applying a pull both read of the local tree. Internal to compilecache.
namespace hubcache::compilecache::pull_local {

// A repo file's name below its entry's folder.
std::string relative_name(const RepoEntry& entry, const storage::RepoFile& file);
// Files below an existing local entry dir (relative names; temp files ignored).
std::vector<std::string> local_names(const std::filesystem::path& dir);
// Throws IoError when the root exists and is not a directory.
void check_root(const std::filesystem::path& root);

} // namespace hubcache::compilecache::pull_local
