#pragma once

#include "hubcache/compilecache/local_cache.hpp"
#include "hubcache/compilecache/pull.hpp"
#include "hubcache/compilecache/pull_lock.hpp"
#include "hubcache/compilecache/transfer_report.hpp"
#include "hubcache/error.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/progress.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

// A push or a pull of a local compile cache as one call: what it remembers (LocalCache)
// decides what to list, plan and hash; what the transfer learnt is remembered for the next.
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

// What the caller hears of while a pull runs, in this order; each may be empty.
struct PullSteps {
  // Not in a dry run: the plan, before the lock is taken and anything moves. The caller
  // refuses it by throwing (too large, no room, the user said no).
  std::function<void(const PullPlan&)> confirm;
  // Another pull holds the cache's lock: this one waits for it, then plans again.
  std::function<void(const PullLockHolder&)> waiting;
  // The entries the pull installs (a dry run: would install), before any download; the
  // caller may name their models (TransferEntry::model), which the report keeps.
  std::function<void(std::vector<TransferEntry>&)> planned;
  util::TransferCallback progress;
  // The pull is over and nothing is remembered yet: the caller may still refuse its
  // outcome by throwing, and then the remembered files stay as they were.
  std::function<void(const TransferReport&)> finished;
};

// Pulls `repo`'s entries (options.only_entries: those) into `local`'s root: lists the repo
// once and plans, hears the caller's confirmation, takes the cache's pull lock (a pull
// that waited for another plans again, against what the other installed), downloads and
// installs. The entries installed are recorded as used; `local` is saved once, at the end
// (nothing for a read-only LocalCache). The report names the head the pull read.
TransferReport pull_into(storage::Repository& repo, LocalCache& local, const PullOptions& options,
                         const PullSteps& steps);

} // namespace hubcache::compilecache
