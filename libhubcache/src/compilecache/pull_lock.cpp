#include "hubcache/compilecache/pull_lock.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fd.hpp"
#include "hubcache/util/file_system.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/temp_owner.hpp"

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

constexpr std::string_view k_header = "neuron-cache-pull-lock 1\n";

// The owner written in a lock file, parsed as a temp name's owner part.
std::optional<util::TempOwner> owner_in(const std::string& text)
{
  if (!text.starts_with(k_header)) {
    return std::nullopt;
  }
  auto owner = text.substr(k_header.size());
  if (auto end = owner.find('\n'); end != std::string::npos) {
    owner.resize(end);
  }
  return util::parse_temp_owner("lock" + std::string(util::k_temp_infix) + owner + "0");
}

// Whether the lock held open as `fd` (as found at `lock`) belongs to nobody any more.
bool abandoned(const util::Fd& fd, const std::string& text, const stdfs::path& lock, std::chrono::seconds stale_after)
{
  auto owner = owner_in(text);
  if (owner && util::owner_state(*owner) == util::OwnerState::gone) {
    return true;
  }
  // A live owner holds its flock; where flock is local to this host (not a shared file
  // system), a free one means the owner is gone, whatever pid namespace it ran in.
  if (util::shared_file_system_name(lock.parent_path()).empty() && ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
    ::flock(fd.get(), LOCK_UN);
    return true;
  }
  if (owner && util::owner_state(*owner) == util::OwnerState::alive) {
    return false;
  }
  // An owner this host cannot see (another host, an older writer): judged by its renewals.
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) {
    return false;
  }
  auto renewed = std::chrono::system_clock::time_point(std::chrono::seconds(status.st_mtim.tv_sec));
  return std::chrono::system_clock::now() - renewed > stale_after;
}

// Removes the lock judged abandoned (held open as `judged_fd`): moved aside, then checked to
// be the very file judged; a lock taken meanwhile by another pull goes back.
void remove_judged(const stdfs::path& lock, const util::Fd& judged_fd)
{
  struct stat judged {};
  ::fstat(judged_fd.get(), &judged);
  auto aside = util::unique_temp_path(lock);
  if (::rename(lock.c_str(), aside.c_str()) == 0) {
    struct stat moved {};
    if (::stat(aside.c_str(), &moved) == 0 && moved.st_ino == judged.st_ino && moved.st_dev == judged.st_dev) {
      ::unlink(aside.c_str());
    } else if (!util::rename_no_replace(aside, lock)) {
      ::unlink(aside.c_str());
    }
  }
}

} // namespace

bool clear_abandoned_pull_lock(const stdfs::path& root, const PullLockOptions& options)
{
  const auto lock = root / std::string(k_pull_lock_name);
  util::Fd held(::open(lock.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!held) {
    return false;
  }
  char buffer[512];
  auto size = ::pread(held.get(), buffer, sizeof buffer, 0);
  std::string text(buffer, size > 0 ? static_cast<std::size_t>(size) : 0);
  if (!abandoned(held, text, lock, options.stale_after)) {
    return false;
  }
  remove_judged(lock, held);
  return true;
}

std::string PullLockHolder::describe() const
{
  std::string whose = pid > 0 ? "the pull of pid " + std::to_string(pid) : std::string("another pull");
  return whose + " on "
         + (this_host      ? std::string("this host")
            : host.empty() ? std::string("another host")
                           : "host " + host);
}

struct PullLock::State {
  stdfs::path lock;
  util::Fd fd;
  std::mutex mutex;
  std::condition_variable stop_changed;
  bool stop = false;
  std::thread renewer;
};

PullLock::PullLock(const stdfs::path& root, const std::function<void(const PullLockHolder&)>& on_wait,
                   const PullLockOptions& options)
  : m_state(std::make_unique<State>())
{
  std::error_code ec;
  stdfs::create_directories(root, ec);
  auto& lock = m_state->lock = root / std::string(k_pull_lock_name);
  // The lock appears whole: its owner is written under a temp name, then linked into place
  // (link(2) refuses an existing name, atomically on NFS too). Created in place, a waiter
  // could read it empty between open and write, see no owner, and take it over.
  util::TemporaryFile candidate(lock, 0644);
  ::flock(candidate.fd().get(), LOCK_EX | LOCK_NB); // where it works: see abandoned()
  candidate.write(std::string(k_header) + util::this_process_temp_owner() + "\n");
  ::fsync(candidate.fd().get());
  bool told = false;
  for (;;) {
    // Renewed as it appears: after a long wait, the candidate's own mtime would make the
    // lock look stale to a waiter on another host the moment it is taken.
    ::futimens(candidate.fd().get(), nullptr);
    if (util::create_exclusive_from(candidate.path(), lock)) {
      // The same open file as the lock: its flock and mtime are the lock's.
      m_state->fd = util::Fd(::fcntl(candidate.fd().get(), F_DUPFD_CLOEXEC, 0));
      if (!m_state->fd) {
        int error = errno;
        ::unlink(lock.c_str());
        throw IoError("cannot hold the pull lock " + lock.string() + ": " + std::strerror(error));
      }
      break;
    }
    int found = ::open(lock.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (found < 0) {
      if (errno == ENOENT) {
        continue; // released meanwhile
      }
      throw IoError("cannot read the pull lock " + lock.string() + ": " + std::strerror(errno));
    }
    util::Fd held(found);
    char buffer[512];
    auto size = ::pread(found, buffer, sizeof buffer, 0);
    std::string text(buffer, size > 0 ? static_cast<std::size_t>(size) : 0);
    if (abandoned(held, text, lock, options.stale_after)) {
      remove_judged(lock, held);
      continue;
    }
    if (!told && on_wait) {
      told = true;
      PullLockHolder holder;
      if (auto owner = owner_in(text)) {
        holder.host = owner->host;
        holder.pid = owner->pid;
        holder.this_host = !owner->node.empty() && owner->node == util::this_node();
      }
      on_wait(holder);
    }
    std::this_thread::sleep_for(options.poll);
  }
  // Renewed while held, so waiters elsewhere can tell a live pull from a dead one.
  m_state->renewer = std::thread([state = m_state.get(), every = options.renew_every] {
    std::unique_lock guard(state->mutex);
    while (!state->stop_changed.wait_for(guard, every, [state] { return state->stop; })) {
      ::futimens(state->fd.get(), nullptr);
    }
  });
}

PullLock::~PullLock()
{
  {
    std::lock_guard guard(m_state->mutex);
    m_state->stop = true;
  }
  m_state->stop_changed.notify_all();
  if (m_state->renewer.joinable()) {
    m_state->renewer.join();
  }
  // Removed only while it is still this file (a waiter may have judged it stale).
  struct stat mine {};
  struct stat now {};
  if (::fstat(m_state->fd.get(), &mine) == 0 && ::stat(m_state->lock.c_str(), &now) == 0 && mine.st_ino == now.st_ino
      && mine.st_dev == now.st_dev) {
    ::unlink(m_state->lock.c_str());
  }
}

} // namespace hubcache::compilecache
