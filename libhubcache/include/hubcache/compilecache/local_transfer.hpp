#pragma once

#include "hubcache/compilecache/local_cache.hpp"
#include "hubcache/compilecache/transfer_report.hpp"
#include "hubcache/error.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/progress.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

// A push of a local compile cache as one call: what it remembers (LocalCache) decides what
// to list, plan and hash; what the push learnt is remembered for the next one.
namespace hubcache::compilecache {

// What the caller hears of while a push runs, in this order; each may be empty.
struct PushSteps {
  bool dry_run = false;
  std::function<void()> listed;                                   // the repo was listed (its odd paths are known)
  std::function<void(const AuthError&)> refused;                  // a dry run's: the repo would refuse the push
  std::function<void(const std::vector<TransferEntry>&)> planned; // before anything is uploaded
  util::TransferCallback progress;
};

// Pushes `scan` (released once planned) to `repo`, whose head was `head` when the scan began.
// While neither the head nor the files to publish moved since a push left the repo whole,
// nothing is planned; while the head did not move, the remembered listing stands for the
// repo's. Write access is checked while the repo is listed, before anything is hashed. The
// digests and the repo's listing after the push go to `local` (saved by the caller).
TransferReport push_scan(storage::Repository& repo, LocalCache& local, Scan scan,
                         const std::optional<std::string>& head, const PushSteps& steps);

} // namespace hubcache::compilecache
