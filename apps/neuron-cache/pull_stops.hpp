#pragma once

#include "cli.hpp"

#include <hubcache/compilecache/store_copy.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/storage/repository.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

// How a pull fails early and stops short, in words (pull_guard.hpp has the facts): the
// free space checked before anything moves, the one line a full disk gets, and the
// account of an interrupted run.
namespace neuron_cache {

// Refuses a pull the cache's file system has no room for, naming what it needs, what is
// free and what to do; on a terminal it asks instead. --yes goes ahead with a warning
// (statvfs may not tell the truth: quotas, compression, another writer freeing space).
void confirm_free_space(Invocation& invocation, const std::filesystem::path& root,
                        const hubcache::compilecache::PullPlan& plan);

// The same for a store-to-store copy (an s3:// compile cache): its scratch space ($TMPDIR)
// must hold a batch, and a directory repo it copies into the whole plan. --yes is accepted
// only when `pull` (a push has no --yes).
void confirm_copy_space(Invocation& invocation, const hubcache::storage::Repository& target,
                        const hubcache::compilecache::CopyPlan& plan,
                        const hubcache::compilecache::CopyOptions& options, bool pull);

// A pull that stopped short (a full disk, an interrupt): one line on stderr instead of a
// warning per entry, the JSON document (in json mode) with a "stopped" object, and the
// exit code (1, or 128 + the signal). nullopt when the pull did not stop short.
std::optional<int> report_stopped_pull(Invocation& invocation, const std::filesystem::path& root,
                                       const hubcache::compilecache::TransferReport& report, const std::string& human,
                                       nlohmann::json& data);

} // namespace neuron_cache
