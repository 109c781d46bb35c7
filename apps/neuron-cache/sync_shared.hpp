#pragma once
// What the push and pull halves of `synchronize` share (cmd_synchronize.cpp holds the
// pull and the command; sync_push.cpp the push).
#include "commands.hpp"

#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/transfer_report.hpp>
#include <hubcache/storage/repository.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace neuron_cache {

// Where a push follows symlinks leaving the cache: the Hugging Face Hub cache, into which
// optimum's compile-time proxy links what it downloaded.
std::vector<std::filesystem::path> followed_directories(const Invocation& invocation);
double seconds_since(std::chrono::steady_clock::time_point start);
// A push, or a copy between stores, that a signal stopped at the target's next safe point:
// the one line on stderr ("Interrupted: N of M entries published; ..."), the JSON document
// (in json mode) with stopped.reason "interrupted" and entries_left, and 128 + the signal.
// nullopt when no signal stopped it.
std::optional<int> report_interrupted_publish(Invocation& invocation,
                                              const hubcache::compilecache::TransferReport& report,
                                              const std::string& human, nlohmann::json& data);
// `synchronize` without --pull: the local cache's complete entries into `repo`.
int run_push(Invocation& invocation, const hubcache::compilecache::CacheRoot& root,
             hubcache::storage::Repository& repo);

} // namespace neuron_cache
