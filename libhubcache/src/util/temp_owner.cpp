#include "hubcache/util/temp_owner.hpp"

#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"

#include <cerrno>
#include <charconv>
#include <csignal>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

namespace hubcache::util {

namespace {

// The initial pid namespace's inode number (PROC_PID_INIT_INO in the kernel).
constexpr std::uint64_t k_initial_pid_namespace = 0xEFFFFFFCU;
constexpr std::size_t k_node_digits = 12;

std::string read_small(const char* path)
{
  try {
    return read_file_if_exists(path, 4096).value_or("");
  } catch (const std::exception&) {
    return {};
  }
}

std::uint64_t pid_namespace_inode()
{
  struct stat status {};
  return ::stat("/proc/self/ns/pid", &status) == 0 ? static_cast<std::uint64_t>(status.st_ino) : 0;
}

template <typename T>
bool parse_number(std::string_view text, T& out)
{
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool is_hex(std::string_view text)
{
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

} // namespace

const std::string& this_node()
{
  static const std::string node = [] {
    auto boot = read_small("/proc/sys/kernel/random/boot_id");
    auto namespace_inode = pid_namespace_inode();
    if (boot.empty() || namespace_inode == 0) {
      return std::string(); // no procfs: this process cannot prove anyone gone
    }
    return hex_digest(HashAlgorithm::sha256, boot + "/" + std::to_string(namespace_inode)).substr(0, k_node_digits);
  }();
  return node;
}

std::optional<std::uint64_t> process_start(pid_t pid)
{
  auto stat = read_small(("/proc/" + std::to_string(pid) + "/stat").c_str());
  // pid (comm) state ppid ...: comm may hold spaces and parentheses; the fields after
  // the last ')' are plain. starttime is field 22, the 20th after the ')'.
  auto close = stat.rfind(')');
  if (close == std::string::npos) {
    return std::nullopt;
  }
  std::string_view rest = std::string_view(stat).substr(close + 1);
  for (int field = 3; field <= 22; ++field) {
    rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
    auto end = std::min(rest.find(' '), rest.size());
    if (field == 22) {
      std::uint64_t start = 0;
      return parse_number(rest.substr(0, end), start) ? std::optional(start) : std::nullopt;
    }
    rest.remove_prefix(end);
  }
  return std::nullopt;
}

bool sees_every_process_of_this_node()
{
  return pid_namespace_inode() == k_initial_pid_namespace;
}

std::string this_process_temp_owner()
{
  // Computed once per process: a forked child names itself, not its parent.
  static std::mutex mutex;
  static pid_t cached_pid = 0;
  static std::string cached;
  std::lock_guard lock(mutex);
  if (auto pid = ::getpid(); pid != cached_pid) {
    auto start = process_start(pid).value_or(0);
    cached = host_name() + "." + std::to_string(pid) + "." + this_node() + "-" + std::to_string(start) + "-";
    cached_pid = pid;
  }
  return cached;
}

std::optional<TempOwner> parse_temp_owner(std::string_view name)
{
  auto infix = name.find(k_temp_infix);
  if (infix == std::string_view::npos) {
    return std::nullopt;
  }
  // <host>.<pid>.<tail>: host names hold no dots here (host_name makes them '_').
  auto rest = name.substr(infix + k_temp_infix.size());
  auto host_end = rest.find('.');
  auto pid_end = host_end == std::string_view::npos ? std::string_view::npos : rest.find('.', host_end + 1);
  if (pid_end == std::string_view::npos) {
    return std::nullopt;
  }
  TempOwner owner;
  owner.host = std::string(rest.substr(0, host_end));
  if (!parse_number(rest.substr(host_end + 1, pid_end - host_end - 1), owner.pid) || owner.pid <= 0) {
    return std::nullopt;
  }
  // <node>-<start>-<random>; anything else is the older form.
  auto tail = rest.substr(pid_end + 1);
  auto first = tail.find('-');
  auto second = first == std::string_view::npos ? std::string_view::npos : tail.find('-', first + 1);
  if (second != std::string_view::npos && first == k_node_digits && is_hex(tail.substr(0, first))
      && parse_number(tail.substr(first + 1, second - first - 1), owner.start)) {
    owner.node = std::string(tail.substr(0, first));
  }
  return owner;
}

OwnerState owner_state(const TempOwner& owner)
{
  if (owner.node.empty() || this_node().empty() || owner.node != this_node()) {
    return OwnerState::unknown;
  }
  if (::kill(owner.pid, 0) != 0 && errno == ESRCH) {
    return OwnerState::gone;
  }
  auto start = process_start(owner.pid);
  if (owner.start != 0 && start && *start != owner.start) {
    return OwnerState::gone; // the pid now names another process
  }
  return OwnerState::alive;
}

bool is_abandoned(std::string_view name, std::chrono::system_clock::time_point changed, std::chrono::seconds unsure_age,
                  std::chrono::system_clock::time_point now)
{
  auto owner = parse_temp_owner(name);
  if (!owner) {
    // A temp name whose owner part does not parse: only time can tell.
    return name.find(k_temp_infix) != std::string_view::npos && now - changed > unsure_age;
  }
  switch (owner_state(*owner)) {
  case OwnerState::gone: return true;
  case OwnerState::alive: return false;
  case OwnerState::unknown: return now - changed > unsure_age;
  }
  return false;
}

} // namespace hubcache::util
