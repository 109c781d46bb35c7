#include "directory_walk.hpp"

#include "hubcache/error.hpp"
#include "hubcache/storage/directory_repository.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/fd.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <unistd.h>

namespace hubcache::storage::detail {

namespace stdfs = std::filesystem;

namespace {

constexpr std::size_t k_walk_threads = 4;
constexpr std::size_t k_folders_per_walk_thread = 256; // fewer: not worth a thread
// A file at least this large with under 1/64 of its bytes stored is a sparse file (a
// `truncate -s 1T`), not compiler output: hashing or copying it would read zeros for hours.
constexpr std::uint64_t k_sparse_floor = std::uint64_t{1} << 30;

using util::errno_text;

std::string join(const std::string& folder, std::string_view name)
{
  return folder.empty() ? std::string(name) : folder + "/" + std::string(name);
}

// One name of a repo path: what is_valid_path_in_repo checks, for a single component.
bool is_valid_component(std::string_view name)
{
  return name.find('/') == std::string_view::npos && is_valid_path_in_repo(name);
}

bool in_our_groups(gid_t group)
{
  if (group == ::getegid()) {
    return true;
  }
  std::vector<gid_t> groups(static_cast<std::size_t>(std::max(::getgroups(0, nullptr), 0)));
  int count = ::getgroups(static_cast<int>(groups.size()), groups.data());
  return std::find(groups.begin(), groups.begin() + std::max(count, 0), group) != groups.begin() + std::max(count, 0);
}

// From the mode bits, so that the listing states what a read would refuse (a mode-000
// file) instead of a download failing later; a file everyone may read (nearly every
// file) costs no system call.
bool readable_by_us(const struct ::stat& status)
{
  constexpr mode_t k_read_by_all = S_IRUSR | S_IRGRP | S_IROTH;
  if ((status.st_mode & k_read_by_all) == k_read_by_all) {
    return true;
  }
  auto user = ::geteuid();
  if (user == 0) {
    return true;
  }
  if (status.st_uid == user) {
    return (status.st_mode & S_IRUSR) != 0;
  }
  if (in_our_groups(status.st_gid)) {
    return (status.st_mode & S_IRGRP) != 0;
  }
  return (status.st_mode & S_IROTH) != 0;
}

Served unservable(std::string reason)
{
  Served out;
  out.kind = Served::Kind::unservable;
  out.reason = std::move(reason);
  return out;
}

// The repo's root with every link resolved: what an alias link must lead below.
std::string real_root(const stdfs::path& root)
{
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(root.c_str(), nullptr), &std::free);
  return resolved ? std::string(resolved.get()) : std::string();
}

// What the symbolic link at `path` serves: the file it leads to, when that is a regular
// file the repo would serve at its own path.
Served follow_link(const std::string& root_real, const stdfs::path& root, const std::string& path,
                   const ServeLimits& limits)
{
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath((root / path).c_str(), nullptr), &std::free);
  if (!resolved) {
    return unservable(errno == ENOENT ? "is a dangling symbolic link"
                                      : "is a symbolic link that cannot be followed: " + errno_text(errno));
  }
  std::string_view target(resolved.get());
  if (root_real.empty() || !target.starts_with(root_real) || target.size() <= root_real.size()
      || target[root_real.size()] != '/') {
    return unservable("is a symbolic link leading outside the repo");
  }
  auto relative = std::string(target.substr(root_real.size() + 1));
  if (!is_valid_path_in_repo(relative) || relative.substr(0, relative.find('/')) == DirectoryRepository::k_hidden_dir) {
    return unservable("is a symbolic link to a path the repo does not serve");
  }
  Served out;
  if (::lstat(resolved.get(), &out.status) != 0) {
    return unservable("is a dangling symbolic link");
  }
  if (S_ISDIR(out.status.st_mode)) {
    return unservable("is a symbolic link to a directory (never followed)");
  }
  if (!S_ISREG(out.status.st_mode)) {
    return unservable("is a symbolic link to " + file_kind(out.status.st_mode));
  }
  if (auto why = unservable_file(out.status, limits); !why.empty()) {
    return unservable("is a symbolic link to a file that " + why.substr(why.find(' ') + 1));
  }
  out.kind = Served::Kind::file;
  out.served = std::move(relative);
  return out;
}

// One walk: the root's real path is resolved once, and only when a link needs it.
class TreeWalk {
public:
  TreeWalk(const stdfs::path& root, const ServeLimits& limits, const FileVisitor& visit, const SkipVisitor& skip)
    : m_root(root), m_limits(limits), m_visit(visit), m_skip(skip)
  {}

  // The open directory at `relative`, `depth` levels below the root; returns the errno
  // of a failed read of it, or 0.
  int walk_directory(const util::Fd& directory, const std::string& relative, int depth);

private:
  void serve(const util::Fd& directory, std::string_view name, std::string&& path, unsigned char type, int depth,
             std::vector<std::string>& folders);
  void walk_folder(const util::Fd& directory, const std::string& relative, const std::string& name, int depth);
  const std::string& root_real()
  {
    std::call_once(m_root_real_once, [this] { m_root_real = real_root(m_root); });
    return m_root_real;
  }

  const stdfs::path& m_root;
  const ServeLimits& m_limits;
  const FileVisitor& m_visit;
  const SkipVisitor& m_skip;
  std::once_flag m_root_real_once;
  std::string m_root_real;
};

// One item of a listed directory: visited, queued as a folder to walk, or skipped.
void TreeWalk::serve(const util::Fd& directory, std::string_view name, std::string&& path, unsigned char type,
                     int depth, std::vector<std::string>& folders)
{
  if (!is_valid_component(name)) {
    m_skip(std::move(path), "has a name that cannot be a repo path");
    return;
  }
  // Directories need no stat when the listing tells their type; fstatat relative to the
  // open directory follows no link and looks up one name, not a whole path.
  struct ::stat status {};
  if (type != DT_DIR && ::fstatat(directory.get(), name.data(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) { // else removed meanwhile
      m_skip(std::move(path), "cannot be read: " + errno_text(errno));
    }
    return;
  }
  if (type == DT_DIR || S_ISDIR(status.st_mode)) {
    if (depth + 1 >= k_max_depth) {
      m_skip(std::move(path), "nests directories deeper than " + std::to_string(k_max_depth) + " levels");
      return;
    }
    folders.emplace_back(name);
    return;
  }
  Served served;
  if (S_ISLNK(status.st_mode)) {
    served = follow_link(root_real(), m_root, path, m_limits);
  } else if (!S_ISREG(status.st_mode)) {
    served = unservable("is " + file_kind(status.st_mode));
  } else if (auto why = unservable_file(status, m_limits); !why.empty()) {
    served = unservable(std::move(why));
  } else {
    served.kind = Served::Kind::file;
    served.status = status;
  }
  if (served.kind == Served::Kind::file) {
    m_visit(std::move(path), served.status);
  } else {
    m_skip(std::move(path), std::move(served.reason));
  }
}

int TreeWalk::walk_directory(const util::Fd& directory, const std::string& relative, int depth)
{
  std::vector<std::string> folders;
  int error = util::for_each_directory_item(directory, [&](std::string_view name, unsigned char type) {
    if (relative.empty() && name == DirectoryRepository::k_hidden_dir) {
      return;
    }
    serve(directory, name, join(relative, name), type, depth, folders);
  });
  if (error != 0) {
    return error;
  }
  // A version folder holds thousands of entries, each a few files: its sub-folders are
  // walked on a few threads (the walk is all system calls), contiguous slices each.
  std::size_t slices = std::min<std::size_t>(k_walk_threads, folders.size() / k_folders_per_walk_thread + 1);
  util::parallel_for(slices, slices, [&](std::size_t slice) {
    for (auto i = folders.size() * slice / slices; i < folders.size() * (slice + 1) / slices; ++i) {
      walk_folder(directory, relative, folders[i], depth);
    }
  });
  return 0;
}

void TreeWalk::walk_folder(const util::Fd& directory, const std::string& relative, const std::string& name, int depth)
{
  auto path = join(relative, name);
  util::Fd folder = util::open_directory_at(directory.get(), name.c_str());
  if (!folder) {
    int error = errno;
    struct ::stat status {};
    if (error == ENOENT) {
      return; // removed meanwhile
    }
    if ((error == ELOOP || error == ENOTDIR)
        && ::fstatat(directory.get(), name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0) {
      // Replaced since the listing: a link (or anything else) is never followed.
      m_skip(std::move(path), "is " + file_kind(status.st_mode));
      return;
    }
    m_skip(std::move(path), "cannot be read: " + errno_text(error));
    return;
  }
  if (int error = walk_directory(folder, path, depth + 1); error != 0) {
    m_skip(std::move(path), "cannot be read: " + errno_text(error));
  }
}

// The open folder `relative` of the repo at `root` (a link is never followed there); on
// failure, `error` tells why (ENOENT, ENOTDIR: it is missing).
util::Fd open_folder(const stdfs::path& root, const std::string& relative, int& error)
{
  util::Fd top(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  error = top ? 0 : errno;
  if (!top || relative.empty()) {
    return top;
  }
  util::Fd folder(::openat(top.get(), relative.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  error = folder ? 0 : errno;
  return folder;
}

} // namespace

std::string file_kind(mode_t mode)
{
  if (S_ISLNK(mode)) {
    return "a symbolic link";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return "a device";
  }
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  return "not a regular file";
}

std::string unservable_file(const struct ::stat& status, const ServeLimits& limits)
{
  auto size = static_cast<std::uint64_t>(status.st_size);
  if (size > limits.max_file_size) {
    return "is " + std::to_string(size) + " bytes, more than the " + std::to_string(limits.max_file_size)
           + " a repo file may hold (NEURON_CACHE_MAX_FILE_SIZE)";
  }
  auto stored = static_cast<std::uint64_t>(status.st_blocks) * 512;
  if (size >= k_sparse_floor && stored < size / 64) {
    return "is a sparse file: " + std::to_string(size) + " bytes, of which only " + std::to_string(stored)
           + " are stored";
  }
  if (!readable_by_us(status)) {
    return "is not readable by this user";
  }
  return {};
}

Served look_up(const stdfs::path& root, std::string_view path, const ServeLimits& limits)
{
  auto parts = path_components(path);
  std::string current = root.native();
  Served out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    current += '/';
    current += parts[i];
    if (::lstat(current.c_str(), &out.status) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) {
        return {};
      }
      return unservable("cannot be read: " + errno_text(errno));
    }
    bool last = i + 1 == parts.size();
    if (!last && !S_ISDIR(out.status.st_mode)) {
      // A link in the middle of a path is never followed: it could lead anywhere.
      return S_ISLNK(out.status.st_mode) ? unservable(std::string(k_below_link)) : Served{};
    }
  }
  if (S_ISDIR(out.status.st_mode)) {
    return {};
  }
  if (S_ISLNK(out.status.st_mode)) {
    return follow_link(real_root(root), root, std::string(path), limits);
  }
  if (!S_ISREG(out.status.st_mode)) {
    return unservable("is " + file_kind(out.status.st_mode));
  }
  if (auto why = unservable_file(out.status, limits); !why.empty()) {
    return unservable(std::move(why));
  }
  out.kind = Served::Kind::file;
  out.served = std::string(path);
  return out;
}

void walk_tree(const stdfs::path& root, const std::string& relative, const ServeLimits& limits,
               const FileVisitor& visit, const SkipVisitor& skip)
{
  // Calls of `visit` and `skip` never overlap, whatever threads the walk runs on.
  std::mutex mutex;
  FileVisitor serialized_visit = [&](std::string&& path, const struct ::stat& status) {
    std::lock_guard lock(mutex);
    visit(std::move(path), status);
  };
  SkipVisitor serialized_skip = [&](std::string&& path, std::string&& reason) {
    std::lock_guard lock(mutex);
    skip(std::move(path), std::move(reason));
  };
  int open_error = 0;
  auto start = open_folder(root, relative, open_error);
  if (!start) {
    throw IoError("cannot read " + util::escape_control((root / relative).string()) + ": " + errno_text(open_error));
  }
  TreeWalk walk(root, limits, serialized_visit, serialized_skip);
  int depth = relative.empty() ? 0 : static_cast<int>(path_components(relative).size()) - 1;
  if (int error = walk.walk_directory(start, relative, depth); error != 0) {
    throw IoError("cannot read " + util::escape_control((root / relative).string()) + ": " + errno_text(error));
  }
}

std::vector<std::string> sub_folders(const stdfs::path& root, const std::string& relative, const SkipVisitor& skip)
{
  std::vector<std::string> names;
  int open_error = 0;
  auto folder = open_folder(root, relative, open_error);
  if (!folder) {
    if (open_error != ENOENT && open_error != ENOTDIR) {
      skip(std::string(relative), "cannot be read: " + errno_text(open_error));
    }
    return names;
  }
  int depth = relative.empty() ? 0 : static_cast<int>(path_components(relative).size()) - 1;
  int error = util::for_each_directory_item(folder, [&](std::string_view name, unsigned char type) {
    struct ::stat status {};
    bool is_dir = type == DT_DIR
                  || (type == DT_UNKNOWN && ::fstatat(folder.get(), name.data(), &status, AT_SYMLINK_NOFOLLOW) == 0
                      && S_ISDIR(status.st_mode));
    if (!is_dir || (relative.empty() && name == DirectoryRepository::k_hidden_dir)) {
      return; // files, and links, are the walk's to report
    }
    if (!is_valid_component(name)) {
      skip(join(relative, name), "has a name that cannot be a repo path");
    } else if (depth + 1 >= k_max_depth) {
      skip(join(relative, name), "nests directories deeper than " + std::to_string(k_max_depth) + " levels");
    } else {
      names.emplace_back(name);
    }
  });
  if (error != 0) {
    skip(std::string(relative), "cannot be read: " + errno_text(error));
  }
  return names;
}

void make_directories(const stdfs::path& directory)
{
  std::error_code ec;
  stdfs::create_directories(directory, ec);
  if (ec) {
    throw IoError("cannot create " + directory.string() + ": " + ec.message(), "check that the cache repo is writable");
  }
}

} // namespace hubcache::storage::detail
