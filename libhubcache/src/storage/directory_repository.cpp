#include "hubcache/storage/directory_repository.hpp"

#include "repo_format.hpp"

#include "hubcache/layout/names.hpp"

#include "directory_index.hpp"
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
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <unistd.h>

namespace hubcache::storage {

namespace stdfs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int k_format_version = 2;
using layout::k_version_prefix;

using util::errno_text;

using detail::first_component;
using detail::nanoseconds;
using detail::same_stamp;

std::uint64_t fingerprint(std::string_view path, const struct ::stat& status)
{
  return util::stamp_fingerprint(path, static_cast<std::uint64_t>(status.st_size), nanoseconds(status.st_mtim),
                                 nanoseconds(status.st_ctim), static_cast<std::uint64_t>(status.st_ino));
}

detail::ServeLimits limits_of(std::uint64_t max_file_size)
{
  return {max_file_size};
}

} // namespace

DirectoryRepository::DirectoryRepository(stdfs::path root)
  : m_root(std::move(root)), m_index(std::make_unique<detail::DirectoryIndex>(m_root))
{}

DirectoryRepository::~DirectoryRepository() = default;

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
    return parsed.is_object() && parsed.value("format", "") == k_repo_format_name;
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
  detail::make_directories(m_root);
  private_dir("staging", true);
  private_dir("index", true);
  json marker = {{"format", k_repo_format_name},
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
  m_index->begin_call();
  // Sized once from what the indexes know when listing whole version folders: a vector of
  // tens of thousands of files doubled as it grows holds two copies at its peak, while an
  // unused tail is never touched (a fresh mapping: address space, not memory).
  if (*folder == first_component(*folder)) {
    files.reserve(m_index->file_count(*folder));
  }
  // Sizes, and what the index knows: no file is read (a sparse terabyte costs a stat).
  walk(
    *folder,
    [&](std::string&& path, const struct ::stat& status) {
      RepoFile file{std::move(path), static_cast<std::uint64_t>(status.st_size), {}, {}};
      file.modified = status.st_mtime;
      if (auto known = m_index->known(file.path, status)) {
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
  m_index->begin_call();
  for (auto* file : files) {
    detail::Served found;
    if (is_valid_path_in_repo(file->path) && first_component(file->path) != k_hidden_dir) {
      found = detail::look_up(m_root, file->path, limits_of(max_file_size));
    }
    if (found.kind == detail::Served::Kind::file) {
      try {
        file->sha256 = m_index->sha256_of(file->path, found.status).hex();
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
  m_index->save();
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
  m_index->begin_call();
  if (auto known = m_index->known(file.path, found.status)) {
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
  m_index->begin_call();
  if (auto known = m_index->known(std::string(path), after); known && *known != sha256) {
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

} // namespace hubcache::storage
