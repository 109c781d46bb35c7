#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

// Who wrote an in-flight name, and whether that writer is provably gone: the one rule
// every sweep (a directory repo's staging, a pull's staging, cleanup's leftovers) uses.
//
// A temp name is `<target>.tmp.nc.<host>.<pid>.<node>-<start>-<random>`:
//   host    the host name, for people reading a listing (dots made '_');
//   pid     the writer's pid in its own pid namespace;
//   node    12 hex digits of a hash of the boot id and the pid namespace: two processes
//           share it only when one's pid means the same process to the other. Containers
//           with host networking share a host name but not this;
//   start   the writer's start time (clock ticks after boot, /proc/<pid>/stat), so a pid
//           reused by another process after the writer died is not taken for the writer.
// Names of the older form `<host>.<pid>.<random>` (no node) are judged by age alone: a
// host name does not say which pid namespace the pid belongs to.
namespace hubcache::util {

inline constexpr std::string_view k_temp_infix = ".tmp.nc.";

struct TempOwner {
  std::string host;
  pid_t pid = 0;
  std::string node;        // empty for names of the older form
  std::uint64_t start = 0; // 0: unknown
};

// The owner named in `name` (a file name, not a path); nullopt when it holds no temp infix
// or the part after it does not parse.
std::optional<TempOwner> parse_temp_owner(std::string_view name);

// `<host>.<pid>.<node>-<start>-` for this process: unique_temp_path appends the random part.
std::string this_process_temp_owner();

// This process's node (see above), and the start time of `pid` as /proc says (nullopt when
// it cannot be read: no such process, or no procfs).
const std::string& this_node();
std::optional<std::uint64_t> process_start(pid_t pid);

// True when this process sees every process of its node: it runs in the initial pid
// namespace. Inside a container, a compiler of the host or of another container is
// invisible to /proc, so "no compiler runs" cannot be known.
bool sees_every_process_of_this_node();

enum class OwnerState { alive, gone, unknown };
// `gone` only when provable: same node, and the pid runs no more or runs a process that
// started at another time. Another node, or an older name, is `unknown`.
OwnerState owner_state(const TempOwner& owner);

// A temp name whose writer is gone: provably (owner_state), or unknown and its status
// changed more than `unsure_age` before `now`. `changed` is the item's ctime or mtime.
bool is_abandoned(std::string_view name, std::chrono::system_clock::time_point changed, std::chrono::seconds unsure_age,
                  std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

} // namespace hubcache::util
