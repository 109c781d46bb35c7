#include "hubcache/compilecache/usage.hpp"

#include "hubcache/error.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <vector>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

constexpr std::string_view k_usage_header = "neuron-cache-usage 1";
// Clock skew between hosts sharing a cache: a record this far ahead is still believed.
constexpr std::int64_t k_future_slack = 24 * 3600;

// `neuronxcc-<version>/<entry>`: the only shape an entry path has.
bool is_entry_path(std::string_view path)
{
  auto slash = path.find('/');
  return slash != std::string_view::npos && path.find('/', slash + 1) == std::string_view::npos
         && path.starts_with(k_version_prefix) && slash > k_version_prefix.size() && slash + 1 < path.size()
         && printable(path) == path && storage::is_valid_path_in_repo(path);
}

// Reads at most `limit` bytes of a regular file, never through a symlink.
std::optional<std::string> read_bounded(const stdfs::path& file, std::uint64_t limit)
{
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    return std::nullopt;
  }
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) || static_cast<std::uint64_t>(status.st_size) > limit) {
    ::close(fd);
    return std::nullopt;
  }
  std::string content;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0 || content.size() + static_cast<std::size_t>(n) > limit) {
      ::close(fd);
      return n == 0 ? std::optional<std::string>(std::move(content)) : std::nullopt;
    }
    content.append(buffer, static_cast<std::size_t>(n));
  }
}

} // namespace

std::int64_t unix_now()
{
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string iso_time(std::int64_t seconds)
{
  auto time = static_cast<std::time_t>(seconds);
  struct tm parts {};
  ::gmtime_r(&time, &parts);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buffer;
}

std::map<std::string, std::int64_t, std::less<>> read_usage_file(const stdfs::path& file, std::int64_t now,
                                                                 std::size_t& rejected)
{
  std::map<std::string, std::int64_t, std::less<>> records;
  auto text = read_bounded(file, k_usage_file_limit);
  if (!text || !text->starts_with(std::string(k_usage_header) + "\n")) {
    if (text && !text->empty()) {
      ++rejected; // not ours: ignored whole
    }
    return records;
  }
  std::string_view rest(*text);
  rest.remove_prefix(k_usage_header.size() + 1);
  while (!rest.empty()) {
    auto end = rest.find('\n');
    auto line = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    // seconds \t entry path
    auto tab = line.find('\t');
    std::int64_t seconds = -1;
    bool ok = tab != std::string_view::npos;
    if (ok) {
      auto [ptr, error] = std::from_chars(line.data(), line.data() + tab, seconds);
      ok = error == std::errc() && ptr == line.data() + tab && seconds >= 0 && seconds <= now + k_future_slack;
    }
    auto path = ok ? line.substr(tab + 1) : std::string_view();
    if (!ok || !is_entry_path(path) || records.size() >= k_usage_record_limit) {
      ++rejected;
      continue;
    }
    auto& known = records[std::string(path)];
    known = std::max(known, seconds);
  }
  return records;
}

UsageRecords::UsageRecords(stdfs::path file) : m_file(std::move(file))
{
  m_records = read_usage_file(m_file, unix_now(), m_rejected);
}

stdfs::path UsageRecords::default_path(const stdfs::path& cache_root, const util::Environment& env)
{
  return remembered_file(cache_root, "usage", ".tsv", env, Keeping::state);
}

std::optional<std::int64_t> UsageRecords::last_use(std::string_view entry_path) const
{
  auto it = m_records.find(entry_path);
  if (it == m_records.end()) {
    return std::nullopt;
  }
  return it->second;
}

void UsageRecords::record(const std::string& entry_path, std::int64_t seconds)
{
  if (!is_entry_path(entry_path)) {
    return;
  }
  m_forgotten.erase(entry_path);
  auto [it, inserted] = m_records.try_emplace(entry_path, seconds);
  if (inserted || it->second < seconds) {
    it->second = seconds;
    m_changed = true;
  }
}

void UsageRecords::forget(const std::string& entry_path)
{
  if (m_records.erase(entry_path) != 0) {
    m_changed = true;
  }
  m_forgotten.insert(entry_path);
}

void UsageRecords::retain(const std::set<std::string>& present)
{
  for (auto it = m_records.begin(); it != m_records.end();) {
    if (present.contains(it->first)) {
      ++it;
    } else {
      m_forgotten.insert(it->first);
      it = m_records.erase(it);
      m_changed = true;
    }
  }
}

bool UsageRecords::save()
{
  if (m_file.empty()) {
    return true;
  }
  if (!m_changed && m_rejected == 0) {
    return true;
  }
  try {
    // Another process may have recorded uses since we read: keep the later of both.
    std::size_t ignored = 0;
    auto merged = read_usage_file(m_file, unix_now(), ignored);
    for (const auto& path : m_forgotten) {
      merged.erase(path);
    }
    for (const auto& [path, seconds] : m_records) {
      auto& known = merged[path];
      known = std::max(known, seconds);
    }
    std::vector<std::pair<std::int64_t, const std::string*>> order;
    order.reserve(merged.size());
    for (const auto& [path, seconds] : merged) {
      order.emplace_back(seconds, &path);
    }
    if (order.size() > k_usage_record_limit) {
      // Bounded: the least recently used records go first.
      std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(order.size() - k_usage_record_limit),
                       order.end());
      order.erase(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(order.size() - k_usage_record_limit));
    }
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return *a.second < *b.second; });
    std::string text(k_usage_header);
    text += '\n';
    for (const auto& [seconds, path] : order) {
      text += std::to_string(seconds) + '\t' + *path + '\n';
    }
    std::error_code ec;
    stdfs::create_directories(m_file.parent_path(), ec);
    util::write_file_atomically(m_file, text);
    m_changed = false;
    m_rejected = 0;
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string to_string(UseSource source)
{
  switch (source) {
  case UseSource::record: return "record";
  case UseSource::access_time: return "atime";
  case UseSource::modification_time: return "mtime";
  }
  return "mtime";
}

AccessTimeMode access_time_mode(const stdfs::path& path)
{
  struct statvfs info {};
  if (::statvfs(path.c_str(), &info) != 0) {
    return {false, "unknown"};
  }
  if ((info.f_flag & ST_NOATIME) != 0) {
    return {false, "noatime"};
  }
  if ((info.f_flag & ST_RELATIME) != 0) {
    return {true, "relatime"};
  }
  return {true, "strictatime"};
}

LastUse last_use(const Entry& entry, const UsageRecords& records, bool use_atime)
{
  LastUse best{entry.newest_mtime_ns / 1'000'000'000, UseSource::modification_time};
  if (use_atime && entry.newest_atime_ns / 1'000'000'000 > best.seconds) {
    best = {entry.newest_atime_ns / 1'000'000'000, UseSource::access_time};
  }
  if (auto recorded = records.last_use(entry.path); recorded && *recorded > best.seconds) {
    best = {*recorded, UseSource::record};
  }
  return best;
}

void record_scan(UsageRecords& records, const Scan& scan, bool use_atime)
{
  std::set<std::string> present;
  for (const auto& entry : scan.entries) {
    present.insert(entry.path);
  }
  records.retain(present);
  for (const auto& entry : scan.entries) {
    auto use = last_use(entry, records, use_atime);
    // Times the files themselves still show need no record; a record is kept for what
    // only a record knows, and for access times, which any later read or copy moves.
    if (use.source == UseSource::access_time) {
      records.record(entry.path, use.seconds);
    }
  }
}

} // namespace hubcache::compilecache
