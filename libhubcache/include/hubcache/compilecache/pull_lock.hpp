#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <sys/types.h>

// One pull at a time into a local compile cache: a second pull waits for the first, then
// plans against what it installed (instead of downloading everything again and meeting
// the first's entries as "created locally"). Advisory, for neuron-cache's own pulls only.
//
// Caches live on NFS and Lustre, where flock may be unsupported or local to one host: the
// lock is a file (`<root>/.neuron-cache-pull-lock`) written whole under a temp name and
// linked into place (link(2) fails on an existing name, on NFS too), naming its owner
// as temp names do (util/temp_owner.hpp: host, pid, node, start time), its mtime renewed
// while the owner lives. A waiter takes it over when the owner is provably gone (same
// node, pid gone or reused), when the owner's flock on it is free on a local file system
// (a live owner holds it: this covers owners in other pid namespaces of this host), or
// when an owner it cannot see has not renewed it for `stale_after`.
namespace hubcache::compilecache {

// Not "*.lock": that is a compiler's lock, which cleanup may remove.
inline constexpr std::string_view k_pull_lock_name = ".neuron-cache-pull-lock";

struct PullLockHolder {
  std::string host;
  pid_t pid = 0;
  bool this_host = false; // the same node: the pid means the same process here

  // "the pull of pid 42 on this host", "another pull on host h2": whom a waiter waits for.
  std::string describe() const;
};

struct PullLockOptions {
  std::chrono::milliseconds poll{500};
  std::chrono::seconds renew_every{30};
  std::chrono::seconds stale_after{600};
};

// Removes `root`'s pull lock when it is abandoned (judged as a waiter judges it), without
// taking it: a pull with nothing to download, which takes no lock, still leaves no dead
// pull's lock behind. True when it removed one.
bool clear_abandoned_pull_lock(const std::filesystem::path& root, const PullLockOptions& options = {});

class PullLock {
public:
  // Takes the lock of `root` (created when missing), waiting while another pull holds
  // it; `on_wait` is called once, with who holds it, when it has to wait.
  PullLock(const std::filesystem::path& root, const std::function<void(const PullLockHolder&)>& on_wait,
           const PullLockOptions& options = {});
  ~PullLock(); // removes the lock file (when it is still this one's)
  PullLock(const PullLock&) = delete;
  PullLock& operator=(const PullLock&) = delete;

private:
  struct State;
  std::unique_ptr<State> m_state;
};

} // namespace hubcache::compilecache
