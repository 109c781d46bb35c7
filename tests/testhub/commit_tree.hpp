#pragma once

// A commit's tree, worked out from the files a commit changes: the Hub's work per commit is
// proportional to the commit and to the folders it touches (git rewrites those tree objects
// too), never to the whole repo. A test Hub whose commits slow down as the repo grows would
// charge a many-commit push for a cost the real Hub does not have; the cost the Hub does have
// is modelled on purpose (--commit-cost-us-per-file).

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "storage.hpp"

namespace testhub {

using FileMap = std::map<std::string, FileEntry>;

std::string parent_dir(const std::string& path);
std::string base_name(const std::string& path);

// Calls `visit(name, is_directory)` for each direct entry of `folder` ("" is the root), in
// name order, skipping each sub-folder's contents: O(entries x log files).
void for_each_child(const FileMap& files, const std::string& folder,
                    const std::function<void(std::string_view name, bool is_directory)>& visit);
std::size_t count_children(const FileMap& files, const std::string& folder);

// Brings `commit.directory_oids` (its parent's, or empty) up to date for the folders holding
// `changed` paths (added, replaced or deleted files) and their ancestors, deepest first.
// A folder left empty disappears.
void update_directory_oids(Commit& commit, const std::vector<std::string>& changed);
// Every folder's git tree id, from the file list alone.
void compute_directory_oids(Commit& commit);

// Throws HubError(400) when one of `added` (now in `files`) is also a folder, or lies under a file.
void check_files_are_not_folders(const FileMap& files, const std::vector<std::string>& added);

} // namespace testhub
