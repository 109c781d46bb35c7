#include "hubcache/compilecache/cleanup.hpp"

#include "hubcache/compilecache/status.hpp"
#include "hubcache/compilecache/sync.hpp"
#include "hubcache/compilecache/wipe_guard.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/file_system.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/process.hpp"
#include "hubcache/util/text.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

constexpr std::int64_t k_max_age = 100ll * 366 * 24 * 3600;

using util::errno_text;

} // namespace

std::int64_t parse_age(std::string_view text)
{
  auto invalid = [&](const std::string& why) {
    return InvalidArgument("invalid age '" + printable(text) + "': " + why,
                           "give a whole number and a unit: s, m, h, d or w (e.g. 30d, 12h)");
  };
  if (text.empty()) {
    throw invalid("it is empty");
  }
  std::int64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error == std::errc::result_out_of_range) {
    throw invalid("too large");
  }
  if (error != std::errc() || end == text.data() || number < 0) {
    throw invalid("it does not start with a whole number");
  }
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  static const std::map<std::string_view, std::int64_t> units = {
    {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 7 * 86400}};
  auto it = units.find(unit);
  if (unit.empty()) {
    throw invalid("no unit");
  }
  if (it == units.end()) {
    throw invalid("unknown unit '" + printable(unit) + "'");
  }
  if (number > k_max_age / it->second) {
    throw invalid("more than 100 years");
  }
  return number * it->second;
}

std::uint64_t parse_size(std::string_view text)
{
  auto invalid = [&](const std::string& why) {
    return InvalidArgument("invalid size '" + printable(text) + "': " + why,
                           "give a number of bytes with an optional unit: K, M, G, T (powers of 1000) or "
                           "Ki, Mi, Gi, Ti (powers of 1024), e.g. 100G");
  };
  if (text.empty()) {
    throw invalid("it is empty");
  }
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) != 0 || text[digits] == '.')) {
    ++digits;
  }
  auto number_text = std::string(text.substr(0, digits));
  if (number_text.empty() || std::count(number_text.begin(), number_text.end(), '.') > 1 || number_text.front() == '.'
      || number_text.back() == '.') {
    throw invalid("it does not start with a number");
  }
  std::string unit(text.substr(digits));
  if (unit.size() > 1 && (unit.back() == 'B' || unit.back() == 'b')) {
    unit.pop_back();
  } else if (unit == "B" || unit == "b") {
    unit.clear();
  }
  static const std::map<std::string, long double> units = {{"", 1.0L},
                                                           {"K", 1e3L},
                                                           {"k", 1e3L},
                                                           {"M", 1e6L},
                                                           {"G", 1e9L},
                                                           {"T", 1e12L},
                                                           {"P", 1e15L},
                                                           {"Ki", 1024.0L},
                                                           {"Mi", 1048576.0L},
                                                           {"Gi", 1073741824.0L},
                                                           {"Ti", 1099511627776.0L},
                                                           {"ki", 1024.0L}};
  auto it = units.find(unit);
  if (it == units.end()) {
    throw invalid("unknown unit '" + printable(unit) + "'");
  }
  long double value = std::strtold(number_text.c_str(), nullptr) * it->second;
  if (value >= 9.2e18L) {
    throw invalid("too large");
  }
  if (it->second == 1.0L && number_text.find('.') != std::string::npos) {
    throw invalid("a number of bytes must be whole");
  }
  return static_cast<std::uint64_t>(value + 0.5L);
}

std::string format_age(std::int64_t seconds)
{
  for (auto [unit, size] :
       {std::pair<const char*, std::int64_t>{"w", 7 * 86400}, {"d", 86400}, {"h", 3600}, {"m", 60}}) {
    if (seconds >= size && seconds % size == 0) {
      return std::to_string(seconds / size) + unit;
    }
  }
  if (seconds >= 86400) {
    return std::to_string(seconds / 86400) + "d";
  }
  if (seconds >= 3600) {
    return std::to_string(seconds / 3600) + "h";
  }
  if (seconds >= 60) {
    return std::to_string(seconds / 60) + "m";
  }
  return std::to_string(seconds) + "s";
}

EvictionPolicy sdk_eviction_policy(const util::Environment& env)
{
  EvictionPolicy policy;
  auto flags = env.get_non_empty("NEURON_CC_FLAGS");
  if (!flags) {
    return policy;
  }
  auto words = split_cc_flags(*flags);
  auto number = [](const std::string& name, const std::string& value, const char* what) {
    long long parsed = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error != std::errc() || end != value.data() + value.size() || value.empty() || parsed < 0) {
      throw InvalidArgument("NEURON_CC_FLAGS has " + name + "=" + printable(value) + ", which is not " + what,
                            std::string("the Neuron SDK reads ") + name + " as " + what);
    }
    return parsed;
  };
  for (std::size_t i = 0; i < words.size(); ++i) {
    for (const std::string name : {"--cache_size", "--cache_ttl"}) {
      std::optional<std::string> value;
      if (words[i] == name && i + 1 < words.size()) {
        value = words[i + 1];
      } else if (words[i].starts_with(name + "=")) {
        value = words[i].substr(name.size() + 1);
      }
      if (!value) {
        continue;
      }
      if (name == "--cache_size") {
        policy.max_size = static_cast<std::uint64_t>(number(name, *value, "a whole number of bytes"));
        policy.size_source = "NEURON_CC_FLAGS";
      } else {
        auto days = number(name, *value, "a whole number of days");
        if (days > k_max_age / 86400) {
          throw InvalidArgument("NEURON_CC_FLAGS has --cache_ttl=" + printable(*value) + ": more than 100 years");
        }
        policy.ttl = days * 86400;
        policy.ttl_source = "NEURON_CC_FLAGS";
      }
    }
  }
  return policy;
}

std::optional<std::string> parse_compiler_version_output(std::string_view text)
{
  auto version_at = [](std::string_view line) -> std::optional<std::string> {
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (std::isdigit(static_cast<unsigned char>(line[i])) == 0 || (i > 0 && line[i - 1] != ' ')) {
        continue;
      }
      std::size_t end = i;
      while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '\r') {
        ++end;
      }
      auto word = line.substr(i, end - i);
      auto plus = word.find('+');
      auto numbers = word.substr(0, plus);
      bool dotted = numbers.find('.') != std::string_view::npos
                    && std::all_of(numbers.begin(), numbers.end(),
                                   [](char c) { return c == '.' || std::isdigit(static_cast<unsigned char>(c)) != 0; });
      bool local_ok = plus == std::string_view::npos
                      || std::all_of(word.begin() + static_cast<std::ptrdiff_t>(plus) + 1, word.end(),
                                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
      if (dotted && local_ok && printable(word) == word) {
        return std::string(word);
      }
    }
    return std::nullopt;
  };
  std::optional<std::string> fallback;
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    auto version = version_at(line);
    if (version && line.find("ompiler") != std::string_view::npos) {
      return version;
    }
    if (version && !fallback) {
      fallback = version;
    }
  }
  return fallback;
}

std::optional<std::string> installed_compiler_version()
{
  util::ProcessSpec spec;
  spec.argv = {"neuronx-cc", "--version"};
  std::string output;
  spec.on_line = [&](util::ProcessStream stream, std::string_view line) {
    if (stream == util::ProcessStream::out && output.size() < 65536) {
      output.append(line);
      output.push_back('\n');
    }
  };
  spec.timeout = std::chrono::seconds(120);
  try {
    auto result = util::run_process(spec);
    if (!result.succeeded()) {
      return std::nullopt;
    }
  } catch (const Error&) {
    return std::nullopt; // no neuronx-cc on PATH
  }
  return parse_compiler_version_output(output);
}

namespace {

bool contains_lock(const stdfs::path& dir, int depth)
{
  if (depth <= 0) {
    return false;
  }
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) {
    return false;
  }
  bool found = false;
  std::vector<std::string> subdirs;
  while (auto* item = ::readdir(handle)) {
    std::string_view name = item->d_name;
    if (name == "." || name == "..") {
      continue;
    }
    if (name.ends_with(".lock")) {
      found = true;
      break;
    }
    if (item->d_type == DT_DIR || item->d_type == DT_UNKNOWN) {
      subdirs.emplace_back(name);
    }
  }
  ::closedir(handle);
  if (found) {
    return true;
  }
  for (const auto& name : subdirs) {
    struct stat info {};
    if (::lstat((dir / name).c_str(), &info) == 0 && S_ISDIR(info.st_mode) && contains_lock(dir / name, depth - 1)) {
      return true;
    }
  }
  return false;
}

// Size of a tree, symlinks counted as themselves and never followed.
std::uint64_t tree_bytes(const stdfs::path& path)
{
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    return 0;
  }
  if (!S_ISDIR(info.st_mode)) {
    return S_ISREG(info.st_mode) ? static_cast<std::uint64_t>(info.st_size) : 0;
  }
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(path, ec); !ec && it != stdfs::recursive_directory_iterator();
       it.increment(ec)) {
    if (::lstat(it->path().c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
      total += static_cast<std::uint64_t>(info.st_size);
    }
  }
  return total;
}

// A temp or trash name whose writer is gone: a dead process of this host, or anyone's
// after a day.
bool is_leftover(const stdfs::path& path, std::int64_t now)
{
  return util::is_abandoned_temp_file(path, std::chrono::seconds(k_leftover_age),
                                      std::chrono::system_clock::from_time_t(static_cast<std::time_t>(now)));
}

struct LockState {
  std::vector<std::string> stale; // repo-relative lock paths
  std::vector<std::string> held;
};

LockState lock_state(const Entry& entry, const CleanupOptions& options)
{
  LockState state;
  for (const auto& lock : entry.lock_files) {
    auto rel = entry.path + "/" + lock.filename().string();
    struct stat info {};
    if (::lstat(lock.c_str(), &info) != 0) {
      continue; // released since the scan
    }
    bool young = options.now - info.st_mtim.tv_sec < options.stale_lock_age;
    (options.compiler_running || young ? state.held : state.stale).push_back(rel);
  }
  return state;
}

std::string version_of(const std::string& path)
{
  return path.substr(0, path.find('/'));
}

} // namespace

StaleLockAgeDefault default_stale_lock_age(const stdfs::path& root)
{
  StaleLockAgeDefault policy;
  policy.file_system = util::shared_file_system_name(root);
  if (!policy.file_system.empty()) {
    policy.seconds = k_shared_stale_lock_age;
    policy.reason = "the cache is on " + policy.file_system + ", shared with other hosts";
  } else if (!util::sees_every_process_of_this_node()) {
    policy.seconds = k_shared_stale_lock_age;
    policy.reason = "this runs in a container, where compilers of the host are invisible";
  }
  return policy;
}

namespace {

// Builds a cleanup plan step by step: each step adds removals (and what it keeps, with
// why) for one of cleanup's reasons, in the order they are applied.
class CleanupPlanner {
public:
  CleanupPlanner(const Scan& scan, const UsageRecords& records, const CleanupOptions& options)
    : m_scan(scan), m_records(records), m_options(options)
  {
    for (const auto& entry : scan.entries) {
      m_plan.size_before += entry.bytes();
      m_version_bytes[version_of(entry.path)] += entry.bytes();
      ++m_version_entries[version_of(entry.path)];
    }
  }

  CleanupPlan wipe()
  {
    check_wipe_root(m_scan.root, m_options.home);
    if (m_options.compiler_running) {
      throw IoError("refusing to wipe " + m_scan.root.string() + ": a neuronx-cc process is running on this host",
                    "wait until it finishes");
    }
    for (const auto& entry : m_scan.entries) {
      auto locks = lock_state(entry, m_options);
      if (!locks.held.empty()) {
        throw IoError("refusing to wipe " + m_scan.root.string() + ": " + locks.held.front()
                        + " is younger than the stale-lock age",
                      "a compiler on another host may hold it; wait until it finishes");
      }
      // Removed first, so that a lock found after the rename can only be a new one.
      for (const auto& lock : locks.stale) {
        add({lock, "lock", "stale-lock", "", 0, 0, std::nullopt, ""});
      }
    }
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& item : stdfs::directory_iterator(m_scan.root, ec)) {
      names.push_back(item.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    const std::set<std::string> versions(m_scan.versions.begin(), m_scan.versions.end());
    for (const auto& name : names) {
      // The root lock is libneuronxla's own; in-flight temp names belong to live writers.
      if (name == "lock" || (util::is_temp_name(name) && !is_leftover(m_scan.root / name, m_options.now))) {
        continue;
      }
      Removal removal;
      removal.path = printable(name);
      removal.reason = "wipe";
      if (versions.contains(name)) {
        removal.kind = "version";
        removal.bytes = m_version_bytes[name];
        removal.entries = m_version_entries[name];
      } else {
        removal.kind = util::is_temp_name(name) ? "leftover" : "other";
        removal.bytes = tree_bytes(m_scan.root / name);
      }
      add(std::move(removal));
    }
    return std::move(m_plan);
  }

  CleanupPlan selective()
  {
    leftovers();
    locks();
    if (m_options.old_versions) {
      old_versions();
    }
    m_remaining_bytes = m_plan.size_before;
    for (const auto& removal : m_plan.removals) {
      if (removal.kind == "version") {
        m_remaining_bytes -= removal.bytes;
      }
    }
    entries();
    if (m_options.max_size && m_remaining_bytes > *m_options.max_size) {
      down_to_max_size();
    }
    return std::move(m_plan);
  }

private:
  struct Candidate {
    const Entry* entry;
    LastUse use;
  };

  void add(Removal removal)
  {
    m_plan.bytes += removal.bytes;
    m_plan.removals.push_back(std::move(removal));
  }

  // Temp and trash names of writers that are gone, at the root and version levels.
  void leftovers()
  {
    for (const auto& skipped : m_scan.skipped) {
      if (skipped.reason != SkipReason::temp_file || std::count(skipped.path.begin(), skipped.path.end(), '/') > 1) {
        continue;
      }
      auto path = m_scan.root / skipped.path;
      if (is_leftover(path, m_options.now)) {
        add({skipped.path, "leftover", "leftover", "", tree_bytes(path), 0, std::nullopt, ""});
      }
    }
  }

  // Stale locks go (when asked); every lock a compiler may hold keeps its version.
  void locks()
  {
    std::map<std::string, LockState> states;
    for (const auto& entry : m_scan.entries) {
      auto state = lock_state(entry, m_options);
      m_held_in_version[version_of(entry.path)] += state.held.size();
      if (!m_options.stale_locks) {
        m_held_in_version[version_of(entry.path)] += state.stale.size();
      }
      states.emplace(entry.path, std::move(state));
    }
    if (!m_options.stale_locks) {
      return;
    }
    for (const auto& entry : m_scan.entries) {
      const auto& state = states[entry.path];
      for (const auto& lock : state.stale) {
        add({lock, "lock", "stale-lock", "", 0, 0, std::nullopt, ""});
      }
      for (const auto& lock : state.held) {
        m_plan.kept.push_back({lock, SkipReason::lock_held,
                               m_options.compiler_running ? "a neuronx-cc process is running on this host"
                                                          : "younger than the stale-lock age"});
      }
    }
  }

  void old_versions()
  {
    for (const auto& name : m_scan.versions) {
      auto version = name.substr(k_version_prefix.size());
      bool keep = std::any_of(m_options.keep_versions.begin(), m_options.keep_versions.end(),
                              [&](const std::string& filter) { return version_matches(version, filter); });
      if (keep) {
        continue;
      }
      if (m_held_in_version[name] > 0) {
        m_plan.kept.push_back(
          {name, SkipReason::locked, std::to_string(m_held_in_version[name]) + " lock(s) a compiler may hold"});
        continue;
      }
      m_doomed_versions.insert(name);
      add({name, "version", "old-version", "", m_version_bytes[name], m_version_entries[name], std::nullopt, ""});
    }
  }

  // Entries, each removed for the first reason that applies.
  void entries()
  {
    for (const auto& entry : m_scan.entries) {
      if (m_doomed_versions.contains(version_of(entry.path))) {
        continue;
      }
      auto use = last_use(entry, m_records, m_options.use_atime);
      bool removable_kind = entry.kind != EntryKind::registry && entry.state != EntryState::locked;
      Removal removal{entry.path,    "entry", "",          category_of(entry),
                      entry.bytes(), 1,       use.seconds, to_string(use.source)};
      if (entry.kind == EntryKind::module && entry.state == EntryState::failed && m_options.failed) {
        removal.reason = "failed";
      } else if (entry.kind == EntryKind::module && m_options.incomplete
                 && (entry.state == EntryState::incomplete || entry.state == EntryState::flags_mismatch)) {
        if (m_options.compiler_running) {
          // A compiler creates the directory before its lock: an empty entry may be one being born.
          m_plan.kept.push_back({entry.path, SkipReason::compiler_running, {}});
          m_remaining.push_back({&entry, use});
          continue;
        }
        removal.reason = "incomplete";
      } else if (removable_kind && m_options.older_than && use.seconds < m_options.now - *m_options.older_than) {
        removal.reason = "older-than";
      }
      if (removal.reason.empty()) {
        // Locked entries are never removed whole (only their stale locks), nor registries.
        m_remaining.push_back({&entry, use});
        continue;
      }
      m_remaining_bytes -= removal.bytes;
      add(std::move(removal));
    }
  }

  // Least recently used first, past the TTL, until the cache fits.
  void down_to_max_size()
  {
    std::vector<Candidate> candidates;
    for (const auto& candidate : m_remaining) {
      const auto& entry = *candidate.entry;
      if (entry.kind == EntryKind::registry || entry.state == EntryState::locked
          || candidate.use.seconds >= m_options.now - m_options.ttl) {
        continue;
      }
      if (entry.kind == EntryKind::module && m_options.compiler_running && entry.state != EntryState::success
          && entry.state != EntryState::failed) {
        continue;
      }
      candidates.push_back(candidate);
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.use.seconds != b.use.seconds ? a.use.seconds < b.use.seconds : a.entry->path < b.entry->path;
    });
    for (const auto& candidate : candidates) {
      if (m_remaining_bytes <= *m_options.max_size) {
        break;
      }
      const auto& entry = *candidate.entry;
      m_remaining_bytes -= entry.bytes();
      add({entry.path, "entry", "max-size", category_of(entry), entry.bytes(), 1, candidate.use.seconds,
           to_string(candidate.use.source)});
    }
    m_plan.above_max_size = m_remaining_bytes > *m_options.max_size;
  }

  const Scan& m_scan;
  const UsageRecords& m_records;
  const CleanupOptions& m_options;
  CleanupPlan m_plan;
  std::map<std::string, std::uint64_t> m_version_bytes;
  std::map<std::string, std::size_t> m_version_entries;
  std::map<std::string, std::size_t> m_held_in_version;
  std::set<std::string> m_doomed_versions;
  std::vector<Candidate> m_remaining;
  std::uint64_t m_remaining_bytes = 0;
};

} // namespace

CleanupPlan plan_cleanup(const Scan& scan, const UsageRecords& records, const CleanupOptions& options)
{
  CleanupPlanner planner(scan, records, options);
  return options.wipe ? planner.wipe() : planner.selective();
}

void forget_removed(const Scan& scan, const CleanupReport& report, UsageRecords& records)
{
  std::set<std::string> gone_versions;
  for (const auto& removal : report.removed) {
    if (removal.kind == "entry") {
      records.forget(removal.path);
    } else if (removal.kind == "version") {
      gone_versions.insert(removal.path);
    }
  }
  for (const auto& entry : scan.entries) {
    if (gone_versions.contains(version_of(entry.path))) {
      records.forget(entry.path);
    }
  }
}

RemoveOutcome remove_safely(const stdfs::path& target, int lock_depth)
{
  auto name = target.filename().string();
  // Hidden, and with the temp infix: scans skip it, a later cleanup sweeps it if we die.
  auto trash = util::unique_temp_path(target.parent_path() / ("." + name));
  if (::rename(target.c_str(), trash.c_str()) != 0) {
    int error = errno;
    if (error == ENOENT) {
      return RemoveOutcome::vanished;
    }
    throw IoError("cannot remove " + target.string() + ": " + errno_text(error));
  }
  if (contains_lock(trash, lock_depth)) {
    // A compiler locked it between our decision and the rename: give it back untouched.
    if (::renameat2(AT_FDCWD, trash.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) {
      return RemoveOutcome::taken;
    }
    throw IoError("a compiler locked " + target.string() + " while it was being removed, and it could not be put back: "
                  + errno_text(errno) + "; it is in " + trash.string());
  }
  std::error_code ec;
  stdfs::remove_all(trash, ec);
  if (ec) {
    throw IoError("cannot delete " + trash.string() + " (was " + target.filename().string() + "): " + ec.message()
                  + "; the next cleanup retries");
  }
  return RemoveOutcome::removed;
}

CleanupReport apply_cleanup(const Scan& scan, const CleanupPlan& plan)
{
  CleanupReport report;
  report.kept = plan.kept;
  // Nothing is removed unless every directory that changes can change.
  std::set<stdfs::path> parents;
  for (const auto& removal : plan.removals) {
    parents.insert((scan.root / removal.path).parent_path());
  }
  for (const auto& dir : parents) {
    if (::faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) != 0) {
      int error = errno;
      throw IoError("cannot remove anything from " + dir.string() + ": " + errno_text(error) + "; nothing was removed",
                    "run where the compile cache is writable (as its owner, on a read-write mount)");
    }
  }
  auto order = [](const Removal& removal) { return removal.kind == "leftover" ? 0 : removal.kind == "lock" ? 1 : 2; };
  std::vector<const Removal*> sorted;
  for (const auto& removal : plan.removals) {
    sorted.push_back(&removal);
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const Removal* a, const Removal* b) { return order(*a) < order(*b); });
  for (const auto* removal : sorted) {
    auto path = scan.root / removal->path;
    try {
      RemoveOutcome outcome;
      if (removal->kind == "lock") {
        if (::unlink(path.c_str()) != 0) {
          int error = errno;
          if (error != ENOENT) {
            throw IoError("cannot remove " + path.string() + ": " + errno_text(error));
          }
          outcome = RemoveOutcome::vanished;
        } else {
          outcome = RemoveOutcome::removed;
        }
      } else {
        int depth = removal->kind == "entry" ? 1 : removal->kind == "version" ? 2 : 0;
        outcome = remove_safely(path, depth);
      }
      switch (outcome) {
      case RemoveOutcome::removed:
        report.bytes_freed += removal->bytes;
        report.removed.push_back(*removal);
        break;
      case RemoveOutcome::vanished: report.kept.push_back({removal->path, SkipReason::vanished, {}}); break;
      case RemoveOutcome::taken: report.kept.push_back({removal->path, SkipReason::taken, {}}); break;
      }
    } catch (const Error& error) {
      report.errors.push_back({removal->path, SkipReason::error, error.what()});
    }
  }
  return report;
}

} // namespace hubcache::compilecache
