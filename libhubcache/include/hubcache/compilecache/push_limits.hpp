#pragma once

#include "hubcache/compilecache/push.hpp"
#include "hubcache/storage/repository.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

// What a push must respect on a store with limits (the Hub: entries per folder, commits
// per hour): how a push may be cut into commits, and the checks made before anything moves.
namespace hubcache::compilecache {

// The commit unit of a file of the cache (storage::CommitUnit): an entry
// (`neuronxcc-<v>/MODULE_...`, an exported model) lands whole; a registry file
// (`neuronxcc-<v>/0_REGISTRY/...`) is a unit of its own that lands only after every entry
// of the push, so a reader never finds a registry entry whose graphs are missing.
storage::CommitUnit commit_unit_of(std::string_view path_in_repo);

// For every folder the uploads add to, how many direct entries (files and sub-folders) it
// holds once they land: the remote listing's and the uploads' names together.
std::map<std::string, std::size_t> folder_entries_after(const std::vector<storage::RepoFile>& remote,
                                                        const std::vector<Upload>& uploads);

// Throws LimitExceeded, naming the folder and its count, when a folder would hold more
// entries than `repo` allows; nothing has moved yet.
void check_folder_limits(const storage::Repository& repo, const std::map<std::string, std::size_t>& folder_entries);

// The entries (first two path components; the registry counts as one) among `paths`, sorted.
std::vector<std::string> entries_of_paths(const std::vector<std::string>& paths);

// How far a push of `entries_total` entries got before the commit quota stopped it.
PushStopped stopped_by_quota(const storage::CommitQuotaReached& error, std::size_t entries_total);

} // namespace hubcache::compilecache
