#include "hubcache/compilecache/compile_cache.hpp"

#include "hubcache/error.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/text.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

std::string to_string(RootSource source)
{
  switch (source) {
  case RootSource::option: return "option";
  case RootSource::cc_flags: return "NEURON_CC_FLAGS";
  case RootSource::environment: return "NEURON_COMPILE_CACHE_URL";
  case RootSource::default_path: return "default";
  }
  return "default";
}

std::string to_string(EntryKind kind)
{
  switch (kind) {
  case EntryKind::module: return "module";
  case EntryKind::exported_model: return "exported-model";
  case EntryKind::registry: return "registry";
  }
  return "module";
}

std::string to_string(EntryState state)
{
  switch (state) {
  case EntryState::success: return "success";
  case EntryState::failed: return "failed";
  case EntryState::locked: return "locked";
  case EntryState::incomplete: return "incomplete";
  case EntryState::flags_mismatch: return "flags-mismatch";
  case EntryState::unsafe: return "symlink-outside-root";
  }
  return "incomplete";
}

SkipReason skip_reason_of(EntryState state)
{
  switch (state) {
  case EntryState::success: break;
  case EntryState::failed: return SkipReason::failed;
  case EntryState::locked: return SkipReason::locked;
  case EntryState::incomplete: return SkipReason::incomplete;
  case EntryState::flags_mismatch: return SkipReason::flags_mismatch;
  case EntryState::unsafe: return SkipReason::symlink_outside_root;
  }
  return SkipReason::incomplete;
}

std::string to_string(Generation generation)
{
  switch (generation) {
  case Generation::a: return "A";
  case Generation::b: return "B";
  case Generation::c: return "C";
  case Generation::unknown: return "";
  }
  return "";
}

namespace {

bool is_store_url(std::string_view url)
{
  return url.starts_with("s3://") || url.starts_with("hf://buckets/");
}

stdfs::path root_from_url(const std::string& url, const util::Environment& env)
{
  std::string path = url.starts_with("file://") ? url.substr(7) : url;
  if (path.empty()) {
    throw InvalidArgument("empty compile cache path", "name a compile cache directory");
  }
  return stdfs::absolute(util::expand_user(path, env)).lexically_normal();
}

CacheLocation location_from(const std::string& url, RootSource source, const util::Environment& env)
{
  CacheLocation location;
  location.source = source;
  if (is_store_url(url)) {
    location.store_url = url;
  } else {
    location.root = {root_from_url(url, env), source};
  }
  return location;
}

} // namespace

std::vector<std::string> split_cc_flags(std::string_view flags)
{
  try {
    return util::split_command_line(flags);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(std::string("NEURON_CC_FLAGS cannot be read: ") + error.what(),
                          "fix the quoting in NEURON_CC_FLAGS");
  }
}

std::optional<std::string> cache_dir_from_cc_flags(std::string_view flags)
{
  auto words = split_cc_flags(flags);
  std::optional<std::string> found;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--cache_dir" && i + 1 < words.size()) {
      found = words[++i];
    } else if (words[i].starts_with("--cache_dir=")) {
      found = words[i].substr(std::string_view("--cache_dir=").size());
    }
  }
  return found;
}

CacheLocation locate_cache(const std::optional<std::string>& option, const util::Environment& env)
{
  if (option) {
    return location_from(*option, RootSource::option, env);
  }
  if (auto flags = env.get_non_empty("NEURON_CC_FLAGS")) {
    if (auto dir = cache_dir_from_cc_flags(*flags); dir && !dir->empty()) {
      return location_from(*dir, RootSource::cc_flags, env);
    }
  }
  if (auto url = env.get_non_empty("NEURON_COMPILE_CACHE_URL")) {
    return location_from(*url, RootSource::environment, env);
  }
  return location_from(std::string(k_default_cache_root), RootSource::default_path, env);
}

std::string CacheLocation::display() const
{
  return store_url ? *store_url : root.path.string();
}

const CacheRoot& CacheLocation::local() const
{
  if (store_url) {
    auto where = store_url->starts_with("s3://") ? std::string("in S3") : std::string("a Storage Bucket");
    throw NotSupported("the compile cache " + *store_url + " (from " + to_string(source) + ") is " + where
                         + ": it can be copied to and from a cache repo, not read or changed in place",
                       "name a local compile cache directory");
  }
  return root;
}

CacheRoot resolve_cache_root(const std::optional<std::string>& option, const util::Environment& env)
{
  return locate_cache(option, env).local();
}

std::string flags_suffix(std::string_view flags_file_bytes)
{
  return util::hex_digest(util::HashAlgorithm::md5, flags_file_bytes).substr(0, 8);
}

std::optional<ModuleName> parse_module_name(std::string_view name)
{
  constexpr std::string_view prefix = "MODULE_";
  if (!name.starts_with(prefix)) {
    return std::nullopt;
  }
  auto rest = name.substr(prefix.size());
  ModuleName parsed;
  auto plus = rest.find('+');
  auto key = rest.substr(0, plus);
  auto is_hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (key.empty() || !std::all_of(key.begin(), key.end(), is_hex)) {
    return std::nullopt;
  }
  parsed.key = std::string(key);
  if (plus != std::string_view::npos) {
    auto suffix = rest.substr(plus + 1);
    if (suffix.size() != 8 || !std::all_of(suffix.begin(), suffix.end(), is_hex)) {
      return std::nullopt;
    }
    parsed.flags_suffix = std::string(suffix);
  }
  return parsed;
}

bool is_lock_name(std::string_view file_name)
{
  return file_name == "lock" || file_name.ends_with(".lock");
}

bool is_temp_file_name(std::string_view file_name)
{
  return util::is_temp_name(file_name) || file_name.ends_with(".tmp") || file_name.ends_with(".incomplete");
}

namespace {

const EntryFileInfo* find_file(const std::vector<EntryFileInfo>& files, std::string_view name)
{
  for (const auto& file : files) {
    if (file.name == name) {
      return &file;
    }
  }
  return nullptr;
}

} // namespace

std::string flags_file_name(const std::vector<EntryFileInfo>& files)
{
  if (find_file(files, "compile_flags.json") != nullptr) {
    return "compile_flags.json";
  }
  if (find_file(files, "compile_flags.txt") != nullptr) {
    return "compile_flags.txt";
  }
  return "";
}

Classification classify_module_files(const std::vector<EntryFileInfo>& files)
{
  for (const auto& file : files) {
    if (is_lock_name(file.name)) {
      return {EntryState::locked, Generation::unknown, {Finding::lock_present, file.name}};
    }
  }
  const auto* neff = find_file(files, "model.neff");
  bool has_done = find_file(files, "model.done") != nullptr;
  bool has_json = find_file(files, "compile_flags.json") != nullptr;
  bool has_txt = find_file(files, "compile_flags.txt") != nullptr;
  bool has_hlo_pb = find_file(files, "model.hlo.pb") != nullptr;
  bool has_hlo_module = find_file(files, "model.hlo_module.pb") != nullptr;

  if (find_file(files, "model.log") != nullptr && neff == nullptr) {
    return {EntryState::failed, Generation::unknown, {Finding::compile_failed, {}}};
  }
  Generation generation = Generation::unknown;
  if (has_json || has_done) {
    generation = Generation::c;
  } else if (has_txt) {
    generation = has_hlo_pb ? Generation::a : Generation::b;
  }
  if (neff == nullptr) {
    return {EntryState::incomplete, generation, {Finding::file_missing, "model.neff"}};
  }
  if (neff->size == 0) {
    return {EntryState::incomplete, generation, {Finding::neff_empty, {}}};
  }
  if (generation == Generation::unknown) {
    // Without a flags file or a done marker nothing tells a finished gen A/B entry from an
    // interrupted gen C one: not publishing it is the safe side.
    return {EntryState::incomplete, generation, {Finding::no_flags_nor_done, {}}};
  }
  if (generation == Generation::c && !has_done) {
    return {EntryState::incomplete, generation, {Finding::unfinished, {}}};
  }
  if (generation == Generation::a ? !has_hlo_pb : !has_hlo_module) {
    return {EntryState::incomplete,
            generation,
            {Finding::file_missing, generation == Generation::a ? "model.hlo.pb" : "model.hlo_module.pb"}};
  }
  return {EntryState::success, generation, {}};
}

EntryFinding check_flags_suffix(const ModuleName& name, const std::optional<std::string>& flags_bytes)
{
  if (!name.flags_suffix) {
    return {};
  }
  auto actual = flags_suffix(flags_bytes.value_or(std::string()));
  if (actual == *name.flags_suffix) {
    return {};
  }
  if (!flags_bytes) {
    return {Finding::suffix_needs_flags, *name.flags_suffix};
  }
  return {Finding::suffix_differs, actual};
}

std::string source_of(std::string_view root, const std::string& source, std::string_view path)
{
  return source.empty() ? util::join_path(root, path) : source;
}

std::string source_of(std::string_view root, const LocalFile& file)
{
  return source_of(root, file.source, file.path);
}

std::string Scan::source_of(const LocalFile& file) const
{
  return compilecache::source_of(root.native(), file);
}

stdfs::path remembered_file(const stdfs::path& cache_root, std::string_view kind, std::string_view extension,
                            const util::Environment& env, Keeping keeping)
{
  bool state = keeping == Keeping::state;
  stdfs::path base;
  if (auto xdg = env.get_non_empty(state ? "XDG_STATE_HOME" : "XDG_CACHE_HOME")) {
    base = *xdg;
  } else {
    base = util::expand_user(state ? "~/.local/state" : "~/.cache", env);
  }
  auto key = util::hex_digest(util::HashAlgorithm::sha256, stdfs::absolute(cache_root).lexically_normal().string())
               .substr(0, 16);
  return base / "neuron-cache" / (std::string(kind) + "-" + key + std::string(extension));
}

namespace {
// Then the fingerprints, 8 bytes each in the host's order: the file never leaves the host.
constexpr std::string_view k_flags_memo_header = "neuron-cache-flags 1\n";
} // namespace

FlagsMemo::FlagsMemo(stdfs::path file) : m_file(std::move(file))
{
  try {
    auto text = util::read_file_if_exists(m_file, std::uint64_t{16} << 20);
    if (!text || !text->starts_with(k_flags_memo_header)
        || (text->size() - k_flags_memo_header.size()) % sizeof(std::uint64_t) != 0) {
      return;
    }
    m_known.resize((text->size() - k_flags_memo_header.size()) / sizeof(std::uint64_t));
    if (!m_known.empty()) { // memcpy may not be given the null data() of an empty vector
      std::memcpy(m_known.data(), text->data() + k_flags_memo_header.size(), m_known.size() * sizeof(std::uint64_t));
    }
    if (!std::is_sorted(m_known.begin(), m_known.end())) {
      m_known.clear(); // not one this code wrote
    }
  } catch (const Error&) {
    m_known.clear(); // unreadable: remembers nothing
  }
}

stdfs::path FlagsMemo::default_path(const stdfs::path& cache_root, const util::Environment& env)
{
  return remembered_file(cache_root, "flags", ".bin", env);
}

bool FlagsMemo::recall(std::uint64_t fingerprint)
{
  if (!std::binary_search(m_known.begin(), m_known.end(), fingerprint)) {
    return false;
  }
  std::lock_guard lock(m_mutex);
  m_seen.push_back(fingerprint);
  return true;
}

void FlagsMemo::remember(std::uint64_t fingerprint)
{
  std::lock_guard lock(m_mutex);
  m_seen.push_back(fingerprint);
}

void FlagsMemo::save()
{
  std::lock_guard lock(m_mutex);
  std::sort(m_seen.begin(), m_seen.end());
  m_seen.erase(std::unique(m_seen.begin(), m_seen.end()), m_seen.end());
  if (m_file.empty() || m_seen == m_known) {
    return;
  }
  try {
    std::error_code ec;
    stdfs::create_directories(m_file.parent_path(), ec);
    std::string text(k_flags_memo_header);
    if (!m_seen.empty()) {
      text.append(reinterpret_cast<const char*>(m_seen.data()), m_seen.size() * sizeof(std::uint64_t));
    }
    util::write_file_atomically(m_file, text);
    m_known = m_seen;
  } catch (const Error&) {
    // Only a cache: the next scan reads the flags files again.
  }
}

std::uint64_t Entry::bytes() const
{
  std::uint64_t total = unlisted_bytes;
  for (const auto& file : files) {
    total += file.size;
  }
  return total;
}

std::size_t Entry::file_count() const
{
  return files.size() + unlisted_files;
}

std::string printable(std::string_view name)
{
  std::string out;
  out.reserve(name.size());
  std::size_t i = 0;
  while (i < name.size()) {
    auto c = static_cast<unsigned char>(name[i]);
    std::size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool valid = length != 0 && i + length <= name.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(name[i + k]) >> 6) == 0x2;
    }
    if (!valid) {
      out.push_back('?');
      ++i;
      continue;
    }
    if (length == 1 && std::iscntrl(c) != 0) {
      out.push_back('?');
    } else {
      out.append(name.substr(i, length));
    }
    i += length;
  }
  return out;
}

bool compiler_running(const stdfs::path& proc)
{
  std::error_code ec;
  for (const auto& item : stdfs::directory_iterator(proc, ec)) {
    auto name = item.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) {
      continue;
    }
    // A process may exit between the listing and the read (ESRCH): it is no compiler then.
    std::optional<std::string> comm;
    std::string cmdline;
    try {
      comm = util::read_file_if_exists(item.path() / "comm");
      cmdline = util::read_file_if_exists(item.path() / "cmdline").value_or("");
    } catch (const Error&) {
      continue;
    }
    auto first_arg = cmdline.substr(0, cmdline.find('\0'));
    auto program = stdfs::path(first_arg).filename().string();
    for (std::string_view compiler : {"neuronx-cc", "walrus_driver"}) {
      if ((comm && comm->starts_with(compiler)) || program == compiler) {
        return true;
      }
    }
  }
  return false;
}

} // namespace hubcache::compilecache
