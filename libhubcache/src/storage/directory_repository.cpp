#include "hubcache/storage/directory_repository.hpp"

#include "directory_walk.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/json.hpp"
#include "hubcache/util/nofollow.hpp"
#include "hubcache/util/text.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <set>
#include <tuple>
#include <unistd.h>

namespace hubcache::storage {

namespace stdfs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::string_view k_format_name = "neuron-cache-compile-cache-repo";
constexpr int k_format_version = 2;
constexpr std::string_view k_index_header = "neuron-cache-repo-index 1";
constexpr std::uint64_t k_index_read_limit = std::uint64_t{256} << 20;
constexpr std::string_view k_version_prefix = "neuronxcc-";
constexpr std::string_view k_module_prefix = "MODULE_";
constexpr std::string_view k_registry_dir = "0_REGISTRY";
constexpr std::string_view k_writer_folder = "w";
constexpr std::string_view k_write_probe = "write-probe";

std::string errno_text(int error)
{
  return std::strerror(error);
}

std::int64_t nanoseconds(const struct timespec& time)
{
  return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

std::string_view first_component(std::string_view path)
{
  return path.substr(0, path.find('/'));
}

// The entry directory (`neuronxcc-<ver>/MODULE_<...>`) a path belongs to (a prefix of
// it), or "" for files that are not inside a compile-cache entry.
std::string_view entry_of(std::string_view path)
{
  auto parts = path_components(path);
  if (parts.size() >= 3 && parts[0].starts_with(k_version_prefix) && parts[0].size() > k_version_prefix.size()
      && parts[1].starts_with(k_module_prefix) && parts[1].size() > k_module_prefix.size()) {
    return path.substr(0, parts[0].size() + 1 + parts[1].size());
  }
  return {};
}

bool is_registry_path(std::string_view path)
{
  auto parts = path_components(path);
  return parts.size() >= 3 && parts[0].starts_with(k_version_prefix) && parts[1] == k_registry_dir;
}

// model.done last, model.neff just before it: the files a compiler trusts.
int install_rank(std::string_view name)
{
  return name == "model.done" ? 2 : name == "model.neff" ? 1 : 0;
}

using detail::file_kind;

std::uint64_t fingerprint(std::string_view path, const struct ::stat& status)
{
  return util::stamp_fingerprint(path, static_cast<std::uint64_t>(status.st_size), nanoseconds(status.st_mtim),
                                 nanoseconds(status.st_ctim), static_cast<std::uint64_t>(status.st_ino));
}

detail::ServeLimits limits_of(std::uint64_t max_file_size)
{
  return {max_file_size};
}

bool same_stamp(const struct ::stat& a, const struct ::stat& b)
{
  return a.st_size == b.st_size && nanoseconds(a.st_mtim) == nanoseconds(b.st_mtim)
         && nanoseconds(a.st_ctim) == nanoseconds(b.st_ctim) && a.st_ino == b.st_ino;
}

// Content staged in the repo's staging folder, hashed as it was written.
struct Staged {
  std::unique_ptr<util::TemporaryFile> file;
  util::Sha256Bytes sha256;
  std::uint64_t size = 0;
};

Staged stage_content(const Addition& addition, const stdfs::path& near)
{
  const auto& source = addition.source;
  Staged staged;
  staged.file = std::make_unique<util::TemporaryFile>(near, 0644);
  util::Hasher hasher(util::HashAlgorithm::sha256);
  if (!source.is_file()) {
    hasher.update(source.bytes());
    staged.file->write(source.bytes());
    staged.size = source.bytes().size();
  } else {
    stdfs::path path(source.file_for(addition.path_in_repo));
    auto fd = util::open_regular_file(path);
    staged.size = util::read_chunks(fd, path, [&](const char* data, std::size_t n) {
      hasher.update(data, n);
      staged.file->write(data, n);
    });
  }
  staged.file->close(false); // flushed once for the whole commit, before anything is published
  staged.sha256 = hasher.digest_bytes<32>();
  return staged;
}

// Moves a staged file to `target`; false (nothing moved) when `target` appeared first.
bool place(Staged& staged, const stdfs::path& target, bool replace)
{
  if (replace) {
    if (::rename(staged.file->path().c_str(), target.c_str()) != 0) {
      throw IoError("cannot publish " + target.string() + ": " + errno_text(errno));
    }
  } else if (!util::rename_no_replace(staged.file->path(), target)) {
    return false;
  }
  staged.file->keep();
  return true;
}

void make_directories(const stdfs::path& directory)
{
  std::error_code ec;
  stdfs::create_directories(directory, ec);
  if (ec) {
    throw IoError("cannot create " + directory.string() + ": " + ec.message(), "check that the cache repo is writable");
  }
}

// One writer's staging folder, made and removed through the staging folder's descriptor
// (opened without following links), so a link planted at `.neuron-cache/staging` never
// turns the removal into one elsewhere.
class StagingFolder {
public:
  StagingFolder(util::Fd parent, const stdfs::path& parent_path) : m_parent(std::move(parent))
  {
    for (int attempt = 0; attempt < 8; ++attempt) {
      m_path = util::unique_temp_path(parent_path / std::string(k_writer_folder));
      if (::mkdirat(m_parent.get(), m_path.filename().c_str(), 0755) == 0) {
        return;
      }
      if (errno != EEXIST) {
        throw IoError("cannot create a staging folder in " + parent_path.string() + ": " + errno_text(errno),
                      "check that the cache repo is writable");
      }
    }
    throw IoError("cannot create a unique staging folder in " + parent_path.string());
  }
  ~StagingFolder() { util::remove_tree_at(m_parent, m_path.filename().native()); }
  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;
  const stdfs::path& path() const { return m_path; }

private:
  util::Fd m_parent;
  stdfs::path m_path;
};

// What a sweep of the staging folder may remove: writer folders and write probes, never
// a name of another form (whatever else lies there is not ours to delete).
bool is_our_staging_name(std::string_view name)
{
  for (std::string_view form : {k_writer_folder, k_write_probe}) {
    if (name.size() > form.size() && name.starts_with(form)
        && name.substr(form.size()).starts_with(util::k_temp_infix)) {
      return true;
    }
  }
  return false;
}

} // namespace

DirectoryRepository::DirectoryRepository(stdfs::path root) : m_root(std::move(root)) {}

std::string DirectoryRepository::spec() const
{
  return "file://" + m_root.string();
}

std::string DirectoryRepository::describe() const
{
  return "directory repo " + m_root.string();
}

stdfs::path DirectoryRepository::hidden_dir() const
{
  return m_root / std::string(k_hidden_dir);
}
stdfs::path DirectoryRepository::marker_path() const
{
  return hidden_dir() / "repo.json";
}
stdfs::path DirectoryRepository::staging_dir() const
{
  return hidden_dir() / "staging";
}

stdfs::path DirectoryRepository::index_path(std::string_view top) const
{
  return hidden_dir() / "index" / (util::hex_digest(util::HashAlgorithm::sha1, top).substr(0, 20) + ".tsv");
}

namespace {

// What the top level of a directory holds, as far as taking it for a cache repo goes.
enum class TopLevel { missing, empty, compile_cache, other };
struct TopLevelView {
  TopLevel kind = TopLevel::missing;
  std::string other_name; // the first name that is not compile-cache content
};

TopLevelView inspect_top_level(const stdfs::path& root, std::string_view hidden)
{
  struct ::stat status {};
  if (::stat(root.c_str(), &status) != 0) {
    return {TopLevel::missing, {}};
  }
  if (!S_ISDIR(status.st_mode)) {
    return {TopLevel::other, root.filename().string()};
  }
  TopLevelView view{TopLevel::empty, {}};
  std::error_code ec;
  for (const auto& item : stdfs::directory_iterator(root, ec)) {
    auto name = item.path().filename().string();
    std::error_code type_error;
    // A filesystem's own lost+found (a repo at the root of an FSx or EBS volume) is neither.
    if (name == hidden || (name == "lost+found" && item.is_directory(type_error) && !item.is_symlink(type_error))) {
      continue;
    }
    bool is_dir = item.is_directory(type_error) && !item.is_symlink(type_error);
    if ((is_dir && name.starts_with(k_version_prefix)) || (name == "lock" && item.is_regular_file(type_error))) {
      view.kind = TopLevel::compile_cache;
      continue;
    }
    return {TopLevel::other, name};
  }
  if (ec) {
    return {TopLevel::other, "(unreadable: " + ec.message() + ")"};
  }
  return view;
}

} // namespace

bool DirectoryRepository::exists()
{
  std::optional<std::string> marker;
  try {
    marker = util::read_file_if_exists(marker_path(), 1 << 16);
  } catch (const IoError&) {
    marker = std::nullopt;
  }
  if (marker) {
    auto parsed = util::try_parse_json(*marker).value_or(json());
    return parsed.is_object() && parsed.value("format", "") == k_format_name;
  }
  // A plain compile cache (what the compiler wrote, no marker) is a repo as it is.
  return inspect_top_level(m_root, k_hidden_dir).kind == TopLevel::compile_cache;
}

void DirectoryRepository::require_repo()
{
  if (exists()) {
    return;
  }
  auto view = inspect_top_level(m_root, k_hidden_dir);
  if (view.kind == TopLevel::other) {
    throw NotACacheRepo(m_root.string()
                          + " exists but is not a neuron-cache repo: it holds something else than a"
                            " Neuron compile cache ("
                          + view.other_name + ")",
                        ErrorFacts{spec()});
  }
  throw RepoNotFound("cache repo " + m_root.string() + " does not exist", ErrorFacts{spec()});
}

std::string DirectoryRepository::create(const RepoCreateOptions& options)
{
  bool marked = false;
  try {
    marked = util::read_file_if_exists(marker_path(), 1 << 16).has_value();
  } catch (const IoError&) {
  }
  if (marked && exists()) {
    if (!options.exist_ok) {
      throw RepoAlreadyExists("cache repo " + m_root.string() + " already exists", ErrorFacts{spec()});
    }
    return spec();
  }
  auto view = inspect_top_level(m_root, k_hidden_dir);
  if (view.kind == TopLevel::other) {
    throw RepoAlreadyExists(m_root.string() + " holds something else than a Neuron compile cache (" + view.other_name
                              + "): it is not made a cache repo",
                            "choose an empty or new directory, or an existing compile cache");
  }
  // An existing plain compile cache is adopted as it is: marking it changes no entry.
  make_directories(m_root);
  private_dir("staging", true);
  private_dir("index", true);
  json marker = {{"format", k_format_name},
                 {"version", k_format_version},
                 {"layout", "neuron compile cache (neuronxcc-<version>/MODULE_<key>+<flags>/...)"}};
  // The marker goes last: a create interrupted before it leaves no repo.
  util::write_file_atomically(marker_path(), marker.dump(2) + "\n");
  util::sync_directory(hidden_dir());
  if (view.kind == TopLevel::compile_cache) {
    // What the adopted cache holds that the repo will not serve is said now (take_skipped).
    walk(
      {}, [](std::string&&, const struct ::stat&) {}, true);
  }
  return spec();
}

std::optional<DirectoryRepository::FileId> DirectoryRepository::index_file_id(std::string_view top) const
{
  struct ::stat status {};
  if (::stat(index_path(top).c_str(), &status) != 0) {
    return std::nullopt;
  }
  return FileId{static_cast<std::uint64_t>(status.st_ino), static_cast<std::uint64_t>(status.st_size),
                nanoseconds(status.st_mtim), nanoseconds(status.st_ctim)};
}

DirectoryRepository::IndexFile& DirectoryRepository::index_for(std::string_view top)
{
  // Kept across calls while the index file is the one read (other writers replace it by
  // a rename: a new inode); looked at once per call, not once per file.
  if (auto it = m_indexes.find(top); it != m_indexes.end()) {
    auto& cached = it->second;
    if (cached.changed || cached.checked == m_call) {
      return cached;
    }
    if (index_file_id(top) == cached.source) {
      cached.checked = m_call;
      return cached;
    }
    m_indexes.erase(it);
  }
  IndexFile index;
  index.source = index_file_id(top);
  index.checked = m_call;
  std::optional<std::string> text;
  try {
    // An index reached through a link is not ours: hashed again rather than trusted.
    if (!util::link_on_the_way(m_root, std::string(k_hidden_dir) + "/index")) {
      text = util::read_file_if_exists(index_path(top), k_index_read_limit);
    }
  } catch (const Error&) {
    text = std::nullopt; // only a cache: hash again
  }
  if (text && text->starts_with(k_index_header)) {
    std::string_view rest(*text);
    rest.remove_prefix(std::min(rest.size(), k_index_header.size() + 1));
    Index records;
    bool good = true;
    while (!rest.empty() && good) {
      auto end = rest.find('\n');
      if (end == std::string_view::npos) {
        good = false;
        break;
      }
      auto line = rest.substr(0, end);
      rest.remove_prefix(end + 1);
      // size \t mtime_ns \t ctime_ns \t inode \t sha256 \t path
      IndexRecord record;
      std::size_t start = 0;
      auto field = [&]() -> std::string_view {
        auto tab = line.find('\t', start);
        if (tab == std::string_view::npos) {
          good = false;
          return {};
        }
        auto value = line.substr(start, tab - start);
        start = tab + 1;
        return value;
      };
      auto number = [&](auto& out) {
        auto text_value = field();
        auto [ptr, error] = std::from_chars(text_value.data(), text_value.data() + text_value.size(), out);
        good = good && error == std::errc() && ptr == text_value.data() + text_value.size();
      };
      number(record.size);
      number(record.mtime_ns);
      number(record.ctime_ns);
      number(record.inode);
      auto sha256 = util::Sha256Bytes::from_hex(field());
      if (!good || !sha256 || start >= line.size()) {
        good = false;
        break;
      }
      record.sha256 = *sha256;
      records.emplace(std::string(line.substr(start)), std::move(record));
    }
    if (good) {
      index.records = std::move(records);
    }
  }
  return m_indexes.emplace(std::string(top), std::move(index)).first->second;
}

void DirectoryRepository::save_indexes()
{
  for (auto& [top, index] : m_indexes) {
    if (!index.changed) {
      continue;
    }
    try {
      private_dir("index", true); // never written through a link
      // Written as it is formatted, a block at a time: tens of thousands of records never
      // sit in memory a second time as one text.
      util::AtomicFile file(index_path(top));
      std::string text(k_index_header);
      text += '\n';
      for (const auto& [path, record] : index.records) {
        text += std::to_string(record.size) + '\t' + std::to_string(record.mtime_ns) + '\t'
                + std::to_string(record.ctime_ns) + '\t' + std::to_string(record.inode) + '\t' + record.sha256.hex()
                + '\t' + path + '\n';
        if (text.size() >= 256 * 1024) {
          file.write(text);
          text.clear();
        }
      }
      file.write(text);
      file.commit();
    } catch (const Error&) {
      // A read-only repo (or a full disk): the next reader hashes again.
    }
    index.changed = false;
    // What this object holds is what it wrote; another writer's file is read again.
    index.source = index_file_id(top);
  }
}

void DirectoryRepository::record(const std::string& path, const struct ::stat& status, const util::Sha256Bytes& sha256)
{
  auto& index = index_for(first_component(path));
  IndexRecord record{static_cast<std::uint64_t>(status.st_size), nanoseconds(status.st_mtim),
                     nanoseconds(status.st_ctim), static_cast<std::uint64_t>(status.st_ino), sha256};
  auto& slot = index.records[path];
  if (slot.sha256 != record.sha256 || slot.size != record.size || slot.mtime_ns != record.mtime_ns
      || slot.ctime_ns != record.ctime_ns || slot.inode != record.inode) {
    slot = record;
    index.changed = true;
  }
}

std::optional<util::Sha256Bytes> DirectoryRepository::indexed_sha256(const std::string& path,
                                                                     const struct ::stat& status)
{
  auto& index = index_for(first_component(path));
  if (auto it = index.records.find(path); it != index.records.end()) {
    const auto& known = it->second;
    if (known.size == static_cast<std::uint64_t>(status.st_size) && known.mtime_ns == nanoseconds(status.st_mtim)
        && known.ctime_ns == nanoseconds(status.st_ctim) && known.inode == static_cast<std::uint64_t>(status.st_ino)) {
      return known.sha256;
    }
  }
  return std::nullopt;
}

util::Sha256Bytes DirectoryRepository::sha256_of(const std::string& path, const struct ::stat& status)
{
  if (auto known = indexed_sha256(path, status)) {
    return *known;
  }
  auto full = m_root / path;
  auto fd = util::open_regular_file(full);
  util::Hasher hasher(util::HashAlgorithm::sha256);
  util::read_chunks(fd, full, [&](const char* data, std::size_t n) { hasher.update(data, n); });
  auto sha256 = hasher.digest_bytes<32>();
  // Recorded only when the file did not change while it was read.
  struct ::stat after {};
  if (::fstat(fd.get(), &after) == 0 && same_stamp(status, after)) {
    record(path, after, sha256);
  }
  return sha256;
}

std::size_t DirectoryRepository::indexed_file_count(const std::string& top)
{
  if (!top.empty()) {
    return index_for(top).records.size();
  }
  std::vector<std::string> tops;
  util::Fd root(::open(m_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root || util::for_each_directory_item(root, [&](std::string_view name, unsigned char type) {
                 if (name != k_hidden_dir && (type == DT_DIR || type == DT_UNKNOWN)) {
                   tops.emplace_back(name);
                 }
               }) != 0) {
    return 0; // only an estimate: the walk reports what cannot be read
  }
  std::size_t count = 0;
  for (const auto& name : tops) {
    count += index_for(name).records.size();
  }
  return count;
}

void DirectoryRepository::walk(const std::string& relative, const FileVisitor& visit, bool report_skips)
{
  detail::walk_tree(m_root, relative, limits_of(max_file_size), visit, [&](std::string&& path, std::string&& reason) {
    if (report_skips) {
      note_skipped_path(std::move(path), std::move(reason));
    }
  });
}

std::optional<std::string> DirectoryRepository::revision()
{
  require_repo();
  // One number per file version (path, size, mtime, ctime, inode: the index's own key, so
  // a file rewritten in place with its mtime put back still moves the revision), sorted:
  // the revision does not depend on the order readdir returns names in.
  std::vector<std::uint64_t> stamps;
  walk({}, [&](std::string&& path, const struct ::stat& status) { stamps.push_back(fingerprint(path, status)); });
  std::sort(stamps.begin(), stamps.end());
  util::Hasher hasher(util::HashAlgorithm::sha1);
  hasher.update(stamps.data(), stamps.size() * sizeof(std::uint64_t));
  return hasher.hex_digest();
}

namespace {

// The folder a listing prefix names, or nullopt when no listing can find anything there.
std::optional<std::string> listable_folder(std::string_view prefix)
{
  auto folder = folder_of_prefix(prefix);
  if (!folder.empty()) {
    validate_path_in_repo(folder);
    if (first_component(folder) == DirectoryRepository::k_hidden_dir) {
      return std::nullopt;
    }
  }
  return folder;
}

} // namespace

std::vector<RepoFile> DirectoryRepository::list_files(std::string_view prefix)
{
  require_repo();
  auto folder = listable_folder(prefix);
  if (!folder) {
    return {};
  }
  if (!folder->empty()) {
    struct ::stat status {};
    if (::lstat((m_root / *folder).c_str(), &status) != 0 || !S_ISDIR(status.st_mode)) {
      return {};
    }
  }
  std::vector<RepoFile> files;
  std::lock_guard lock(m_index_mutex);
  ++m_call;
  // Sized once from what the indexes know when listing whole version folders: a vector of
  // tens of thousands of files doubled as it grows holds two copies at its peak, while an
  // unused tail is never touched (a fresh mapping: address space, not memory).
  if (*folder == first_component(*folder)) {
    files.reserve(indexed_file_count(*folder));
  }
  // Sizes, and what the index knows: no file is read (a sparse terabyte costs a stat).
  walk(
    *folder,
    [&](std::string&& path, const struct ::stat& status) {
      RepoFile file{std::move(path), static_cast<std::uint64_t>(status.st_size), {}, {}};
      file.modified = status.st_mtime;
      if (auto known = indexed_sha256(file.path, status)) {
        file.sha256 = known->hex();
      }
      files.push_back(std::move(file));
    },
    true);
  std::sort(files.begin(), files.end(), [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
  return files;
}

std::vector<std::string> DirectoryRepository::list_folders(std::string_view prefix)
{
  require_repo();
  auto folder = listable_folder(prefix);
  if (!folder) {
    return {};
  }
  auto names = detail::sub_folders(m_root, *folder, [&](std::string&& path, std::string&& reason) {
    note_skipped_path(std::move(path), std::move(reason));
  });
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> DirectoryRepository::complete_digests(const std::vector<RepoFile*>& files)
{
  std::vector<std::string> gone;
  if (files.empty()) {
    return gone;
  }
  require_repo();
  std::lock_guard lock(m_index_mutex);
  ++m_call;
  for (auto* file : files) {
    detail::Served found;
    if (is_valid_path_in_repo(file->path) && first_component(file->path) != k_hidden_dir) {
      found = detail::look_up(m_root, file->path, limits_of(max_file_size));
    }
    if (found.kind == detail::Served::Kind::file) {
      try {
        file->sha256 = sha256_of(file->path, found.status).hex();
        file->size = static_cast<std::uint64_t>(found.status.st_size);
        continue;
      } catch (const IoError& error) {
        found = {detail::Served::Kind::unservable, {}, {}, std::string("cannot be read: ") + error.what()};
      }
    }
    if (found.kind == detail::Served::Kind::unservable) {
      note_skipped_path(file->path, found.reason);
    }
    gone.push_back(file->path);
  }
  save_indexes();
  return gone;
}

std::optional<RepoFile> DirectoryRepository::stat(std::string_view path)
{
  require_repo();
  validate_path_in_repo(path);
  if (first_component(path) == k_hidden_dir) {
    return std::nullopt;
  }
  auto found = detail::look_up(m_root, path, limits_of(max_file_size));
  if (found.kind != detail::Served::Kind::file) {
    if (found.kind == detail::Served::Kind::unservable) {
      note_skipped_path(std::string(path), std::move(found.reason));
    }
    return std::nullopt;
  }
  RepoFile file{std::string(path), static_cast<std::uint64_t>(found.status.st_size), {}, {}};
  std::lock_guard lock(m_index_mutex);
  ++m_call;
  if (auto known = indexed_sha256(file.path, found.status)) {
    file.sha256 = known->hex();
  }
  return file;
}

namespace {

// The file a read of `path` gets, or why not (EntryNotFound, IntegrityError).
detail::Served servable(const stdfs::path& root, std::string_view path, const detail::ServeLimits& limits,
                        const std::string& what)
{
  validate_path_in_repo(path);
  auto found =
    first_component(path) == DirectoryRepository::k_hidden_dir ? detail::Served{} : detail::look_up(root, path, limits);
  if (found.kind == detail::Served::Kind::missing) {
    throw EntryNotFound(std::string(path) + " does not exist in " + what);
  }
  if (found.kind == detail::Served::Kind::unservable) {
    throw IntegrityError(what + ": " + util::escape_control(path) + " " + found.reason
                           + "; a cache repo serves only regular files",
                         "remove it from the repo");
  }
  return found;
}

} // namespace

std::string DirectoryRepository::read_file(std::string_view path)
{
  require_repo();
  auto found = servable(m_root, path, limits_of(max_file_size), describe());
  return util::read_file(m_root / found.served);
}

void DirectoryRepository::download_file(std::string_view path, const stdfs::path& destination,
                                        const util::ProgressCallback& progress, bool flush)
{
  copy_out(path, nullptr, destination, progress, flush);
}

util::FileDigests DirectoryRepository::download_listed(const RepoFile& listed, const stdfs::path& destination,
                                                       const util::ProgressCallback& progress, bool flush)
{
  auto sha256 = copy_out(listed.path, &listed, destination, progress, flush).hex();
  // What is remembered is the digest of the bytes written.
  return {.size = listed.size,
          .sha256 = sha256,
          .git_blob_sha1 = sha256 == listed.sha256 ? listed.git_blob_sha1 : std::string()};
}

util::Sha256Bytes DirectoryRepository::copy_out(std::string_view path, const RepoFile* listed,
                                                const stdfs::path& destination, const util::ProgressCallback& progress,
                                                bool flush)
{
  require_repo();
  auto found = servable(m_root, path, limits_of(max_file_size), describe());
  auto source = m_root / found.served;
  auto fd = util::open_regular_file(source);
  struct ::stat before {};
  if (::fstat(fd.get(), &before) != 0) {
    throw IoError("cannot stat " + source.string() + ": " + errno_text(errno));
  }
  auto expected = static_cast<std::uint64_t>(before.st_size);
  auto changed = [&](const std::string& how) {
    return IntegrityError(std::string(path) + " in " + describe() + " changed since it was listed: " + how,
                          "run again to get the current content");
  };
  if (listed != nullptr && listed->size != expected) {
    throw changed(std::to_string(expected) + " bytes, the listing said " + std::to_string(listed->size));
  }
  if (auto why = detail::unservable_file(before, limits_of(max_file_size)); !why.empty()) {
    throw IntegrityError(describe() + ": " + std::string(path) + " " + why, "remove it from the repo");
  }
  util::AtomicFile out(destination);
  util::Hasher hasher(util::HashAlgorithm::sha256);
  std::uint64_t done = 0;
  util::read_chunks(fd, source, [&](const char* data, std::size_t n) {
    hasher.update(data, n);
    out.write(data, n);
    done += n;
    if (progress) {
      progress(done, expected);
    }
  });
  struct ::stat after {};
  if (::fstat(fd.get(), &after) != 0 || done != expected || !same_stamp(before, after)) {
    throw IntegrityError(std::string(path) + " changed in " + describe() + " while it was copied",
                         "retry once the writer is done");
  }
  auto sha256 = hasher.digest_bytes<32>();
  if (listed != nullptr && !listed->sha256.empty() && listed->sha256 != sha256.hex()) {
    throw changed("its content is not the one the listing gave");
  }
  // The index knows this stamp: the bytes must be the ones it recorded.
  std::lock_guard lock(m_index_mutex);
  ++m_call;
  if (auto known = indexed_sha256(std::string(path), after); known && *known != sha256) {
    throw IntegrityError("the content of " + std::string(path) + " in " + describe()
                           + " changed without its modification time changing (storage corruption?)",
                         "push the entry again");
  }
  out.commit(flush);
  return sha256;
}

std::optional<struct ::stat> DirectoryRepository::existing_file(const std::string& path)
{
  auto found = detail::look_up(m_root, path, limits_of(max_file_size));
  if (found.kind == detail::Served::Kind::file) {
    return found.status;
  }
  if (found.kind == detail::Served::Kind::unservable) {
    struct ::stat status {};
    auto target = m_root / path;
    if (::lstat(target.c_str(), &status) != 0 || S_ISDIR(status.st_mode) || found.reason == detail::k_below_link) {
      // Written through a link, the file could land anywhere.
      throw IntegrityError(describe() + ": " + util::escape_control(path) + " " + found.reason
                             + "; a cache repo holds only regular files and directories",
                           "remove it from the repo");
    }
    // A FIFO, a link, an absurd file where a file is published: the commit's file replaces it.
    if (::unlink(target.c_str()) != 0 && errno != ENOENT) {
      throw IoError("cannot remove " + target.string() + ": " + errno_text(errno));
    }
  }
  return std::nullopt;
}

util::Fd DirectoryRepository::private_dir(std::string_view name, bool create) const
{
  auto root = util::open_root_directory(m_root);
  return util::open_directory_below(root, std::string(k_hidden_dir) + "/" + std::string(name), m_root.native(), create);
}

std::size_t DirectoryRepository::sweep_stale_staging()
{
  auto staging = private_dir("staging", true);
  std::vector<std::string> names;
  util::for_each_directory_item(staging, [&](std::string_view name, unsigned char) {
    if (is_our_staging_name(name)) {
      names.emplace_back(name);
    }
  });
  std::size_t removed = 0;
  for (const auto& name : names) {
    struct ::stat status {};
    if (::fstatat(staging.get(), name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
      continue;
    }
    auto changed = std::chrono::system_clock::from_time_t(status.st_mtime);
    if (util::is_abandoned(name, changed, stale_staging_age) && util::remove_tree_at(staging, name)) {
      ++removed;
    }
  }
  return removed;
}

void DirectoryRepository::make_parent_directories(std::string_view path_in_repo) const
{
  auto slash = path_in_repo.rfind('/');
  if (slash == std::string_view::npos) {
    return;
  }
  auto root = util::open_root_directory(m_root);
  util::open_directory_below(root, path_in_repo.substr(0, slash), m_root.native(), true);
}

void DirectoryRepository::check_writable()
{
  require_repo();
  // Commits stage in the private folder and rename into the root: both must take new files.
  try {
    private_dir("staging", true);
    util::TemporaryFile probe(staging_dir() / std::string(k_write_probe));
  } catch (const util::LinkOnTheWay&) {
    throw; // refused as what it is, not as "no write access"
  } catch (const IoError& error) {
    throw WriteAccessDenied("You do not have write access to " + spec() + ": cannot create files in "
                              + staging_dir().string() + " (" + error.what() + ")",
                            ErrorFacts{spec(), false, true}, "fix its permissions");
  }
  if (::access(m_root.c_str(), W_OK) != 0) {
    throw WriteAccessDenied("You do not have write access to " + spec() + ": " + errno_text(errno),
                            ErrorFacts{spec(), false, true}, "fix its permissions");
  }
}

CommitResult DirectoryRepository::commit(const CommitRequest& request, const util::ProgressCallback& progress)
{
  std::lock_guard lock(m_index_mutex); // one commit at a time per object, as the interface says
  ++m_call;
  if (request.message.empty()) {
    throw InvalidArgument("a commit needs a message");
  }
  for (const auto& addition : request.additions) {
    validate_path_in_repo(addition.path_in_repo);
    if (first_component(addition.path_in_repo) == k_hidden_dir) {
      throw InvalidArgument("'" + addition.path_in_repo + "' is inside the repo's private folder");
    }
  }
  for (const auto& deletion : request.deletions) {
    validate_path_in_repo(folder_of_prefix(deletion.path_in_repo));
    if (first_component(folder_of_prefix(deletion.path_in_repo)) == k_hidden_dir) {
      throw InvalidArgument("'" + deletion.path_in_repo + "' is inside the repo's private folder");
    }
  }
  require_repo();
  if (request.parent_revision && revision() != *request.parent_revision) {
    throw ConflictError("the repo changed since revision " + *request.parent_revision,
                        "run again to apply the change on the current content");
  }
  sweep_stale_staging();
  StagingFolder staging(private_dir("staging", true), staging_dir());
  CommitResult result;
  result.files.reserve(request.additions.size());
  std::size_t staged_count = 0;
  auto next_stage = [&]() { return staging.path() / ("s" + std::to_string(staged_count++)); };

  // Deletions: a folder leaves by one rename into the staging folder, then goes with it.
  for (const auto& deletion : request.deletions) {
    auto path = folder_of_prefix(deletion.path_in_repo);
    auto target = m_root / path;
    if (auto link = util::link_on_the_way(m_root, stdfs::path(path).parent_path().native())) {
      throw util::LinkOnTheWay(
        describe() + ": " + util::escape_control(*link) + " is a symbolic link; nothing is removed through it", *link);
    }
    struct ::stat status {};
    if (::lstat(target.c_str(), &status) != 0) {
      continue;
    }
    if (deletion.is_folder && S_ISDIR(status.st_mode)) {
      std::size_t below = 0;
      walk(path, [&](std::string&&, const struct ::stat&) { ++below; });
      auto away = next_stage();
      if (::rename(target.c_str(), away.c_str()) != 0) {
        throw IoError("cannot remove " + target.string() + ": " + errno_text(errno));
      }
      result.files_deleted += below;
    } else if (!deletion.is_folder && !S_ISDIR(status.st_mode)) {
      if (::unlink(target.c_str()) != 0 && errno != ENOENT) {
        throw IoError("cannot remove " + target.string() + ": " + errno_text(errno));
      }
      ++result.files_deleted;
    }
  }

  // Additions in publishing order: entries (each one's files together, model.done last),
  // loose files, then the registry, which describes entries. One sorted vector: a commit
  // may carry tens of thousands of files, and a map would hold a node and a name per entry.
  enum class Group : unsigned char { entry, loose, registry };
  struct Ordered {
    const Addition* addition = nullptr;
    std::string_view entry; // a prefix of addition->path_in_repo; empty outside entries
    Group group = Group::loose;
    int rank = 0;
  };
  std::vector<Ordered> order;
  order.reserve(request.additions.size());
  std::uint64_t total = 0;
  for (const auto& addition : request.additions) {
    if (addition.source.is_file()) {
      struct ::stat status {};
      auto file = addition.source.file_for(addition.path_in_repo);
      total += ::stat(file.c_str(), &status) == 0 ? static_cast<std::uint64_t>(status.st_size) : 0;
    } else {
      total += addition.source.bytes().size();
    }
    Ordered item{&addition, entry_of(addition.path_in_repo), Group::loose, 0};
    if (!item.entry.empty()) {
      item.group = Group::entry;
      auto name = std::string_view(addition.path_in_repo);
      item.rank = install_rank(name.substr(name.rfind('/') + 1));
    } else if (is_registry_path(addition.path_in_repo)) {
      item.group = Group::registry;
    }
    order.push_back(item);
  }
  // Stable: loose and registry files keep the request's order, an entry's files too but
  // for their rank.
  std::stable_sort(order.begin(), order.end(), [](const Ordered& a, const Ordered& b) {
    return std::tie(a.group, a.entry, a.rank) < std::tie(b.group, b.entry, b.rank);
  });

  // 1. Everything is staged first, without one fsync per file...
  // A staged file is at <staging>/s<stage>, or, in an entry, at <staging>/s<stage>/<its path
  // below the entry> (the entry's stage becomes its directory): derived, not stored, and
  // the digest kept as bytes, for tens of thousands of files.
  struct StagedFile {
    const Addition* addition = nullptr;
    std::size_t stage = 0;
    std::size_t entry_length = 0; // 0: not in an entry
    util::Sha256Bytes sha256;
  };
  struct PendingEntry {
    std::string_view entry;
    std::size_t stage = 0;
    bool whole = false;    // a new entry, staged as its final directory
    std::size_t first = 0; // its files: staged[first, last), in publishing order
    std::size_t last = 0;
  };
  auto stage_path = [&](std::size_t stage) { return staging.path().native() + "/s" + std::to_string(stage); };
  auto staged_path = [&](const StagedFile& staged) {
    auto path = stage_path(staged.stage);
    if (staged.entry_length > 0) {
      path += '/';
      path += std::string_view(staged.addition->path_in_repo).substr(staged.entry_length + 1);
    }
    return path;
  };
  std::vector<StagedFile> staged;
  staged.reserve(order.size());
  std::vector<PendingEntry> pending;
  auto stage_file = [&](const Addition* addition, std::size_t stage, std::size_t entry_length) {
    StagedFile file{addition, stage, entry_length, {}};
    stdfs::path destination(staged_path(file));
    make_directories(destination.parent_path());
    auto content = stage_content(*addition, destination);
    if (!place(content, destination, false)) {
      throw InvalidArgument("'" + addition->path_in_repo + "' is added twice in one commit");
    }
    file.sha256 = content.sha256;
    staged.push_back(file);
  };
  for (const auto& item : order) {
    if (item.group != Group::entry) {
      stage_file(item.addition, staged_count++, 0);
      continue;
    }
    if (pending.empty() || pending.back().entry != item.entry) {
      PendingEntry unit{item.entry, staged_count++, false, staged.size(), staged.size()};
      struct ::stat status {};
      unit.whole = ::lstat((m_root / item.entry).c_str(), &status) != 0; // staged as the entry itself
      pending.push_back(unit);
    }
    stage_file(item.addition, pending.back().stage, item.entry.size());
    pending.back().last = staged.size();
  }
  std::vector<Ordered>().swap(order);
  // ... then flushed at once, so that nothing published can be lost content after a crash.
  if (!request.additions.empty()) {
    util::sync_filesystem(staging.path());
  }

  // 2. Publishing.
  std::uint64_t done = 0;
  std::set<stdfs::path> touched_directories;
  auto report = [&](const Addition& addition, const struct ::stat& status, const util::Sha256Bytes& sha256,
                    bool added) {
    record(addition.path_in_repo, status, sha256);
    RepoFile file{addition.path_in_repo, static_cast<std::uint64_t>(status.st_size), sha256.hex(), {}};
    if (addition.digests && addition.digests->sha256 == file.sha256) {
      file.git_blob_sha1 = addition.digests->git_blob_sha1;
    }
    result.files.push_back(std::move(file));
    result.files_added += added ? 1 : 0;
    done += static_cast<std::uint64_t>(status.st_size);
    if (progress) {
      progress(done, total);
    }
  };
  auto lstat_published = [&](const stdfs::path& target) {
    struct ::stat status {};
    if (::lstat(target.c_str(), &status) != 0) {
      throw IoError("cannot stat " + target.string() + " after publishing it: " + errno_text(errno));
    }
    return status;
  };
  auto move = [&](const std::string& from, const stdfs::path& target, bool replace) {
    if (replace) {
      if (::rename(from.c_str(), target.c_str()) != 0) {
        throw IoError("cannot publish " + target.string() + ": " + errno_text(errno));
      }
      return true;
    }
    return util::rename_no_replace(from, target);
  };
  // One file into an existing directory: added when missing, replaced by one rename when
  // different (a reader sees one copy or the other, never a mix).
  auto publish_file = [&](const StagedFile& staged_file) {
    const auto& addition = *staged_file.addition;
    auto from = staged_path(staged_file);
    auto target = m_root / addition.path_in_repo;
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto current = existing_file(addition.path_in_repo);
      if (current) {
        auto present = sha256_of(addition.path_in_repo, *current);
        if (present == staged_file.sha256) {
          report(addition, *current, present, false);
          return;
        }
        move(from, target, true);
        touched_directories.insert(target.parent_path());
        report(addition, lstat_published(target), staged_file.sha256, true);
        return;
      }
      struct ::stat blocking {};
      if (::lstat(target.c_str(), &blocking) == 0 && S_ISDIR(blocking.st_mode)) {
        throw IntegrityError(describe() + ": " + addition.path_in_repo + " is a directory, a file was to go there");
      }
      make_parent_directories(addition.path_in_repo);
      if (move(from, target, false)) {
        touched_directories.insert(target.parent_path());
        report(addition, lstat_published(target), staged_file.sha256, true);
        return;
      }
      // Another writer placed it first: compare with theirs.
    }
    throw ConflictError("could not publish " + addition.path_in_repo + " in " + describe() + ": it keeps changing");
  };

  std::size_t entry_files = 0;
  for (const auto& unit : pending) {
    entry_files = unit.last;
    auto target = m_root / unit.entry;
    if (unit.whole) {
      // A new entry appears whole, by one rename that never replaces.
      make_parent_directories(unit.entry);
      if (before_publish_hook) {
        before_publish_hook(std::string(unit.entry));
      }
      if (util::rename_no_replace(stage_path(unit.stage), target)) {
        touched_directories.insert(target.parent_path());
        for (auto i = unit.first; i < unit.last; ++i) {
          const auto& addition = *staged[i].addition;
          report(addition, lstat_published(m_root / addition.path_in_repo), staged[i].sha256, true);
        }
        continue;
      }
      // Another writer published this entry meanwhile: completed file by file below.
    }
    struct ::stat status {};
    if (::lstat(target.c_str(), &status) == 0 && !S_ISDIR(status.st_mode)) {
      throw IntegrityError(describe() + ": " + std::string(unit.entry) + " is " + file_kind(status.st_mode)
                             + "; a cache repo holds only regular files and directories",
                           "remove it from the repo");
    }
    // An existing entry: completed file by file, model.neff then model.done last.
    for (auto i = unit.first; i < unit.last; ++i) {
      publish_file(staged[i]);
    }
  }
  // Loose files, then the registry, which describes entries: in that order after them.
  for (auto i = entry_files; i < staged.size(); ++i) {
    publish_file(staged[i]);
  }
  for (const auto& directory : touched_directories) {
    util::sync_directory(directory);
  }
  save_indexes();
  // The index now holds a record per file this commit published, all of them on disk: a
  // later call reads the file back once rather than this object holding tens of thousands
  // of records meanwhile (a push has no later call).
  m_indexes.clear();
  result.created = result.files_added > 0 || result.files_deleted > 0;
  result.revision = revision().value_or("");
  return result;
}

} // namespace hubcache::storage
