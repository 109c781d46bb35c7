#include "hubcache/util/nofollow.hpp"

#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace hubcache::util {

namespace {

constexpr int k_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// Deeper than any compile cache or repo tree: a deeper one is hostile, not removed.
constexpr int k_max_remove_depth = 64;

std::string_view next_component(std::string_view& rest)
{
  while (rest.starts_with('/')) {
    rest.remove_prefix(1);
  }
  auto slash = rest.find('/');
  auto component = rest.substr(0, slash);
  rest.remove_prefix(slash == std::string_view::npos ? rest.size() : slash);
  return component;
}

// Why `name` in `parent` could not be opened as a directory without following it. With
// O_DIRECTORY | O_NOFOLLOW, Linux answers ENOTDIR for a link as for a file: lstat tells.
[[noreturn]] void fail_open(int error, const Fd& parent, const std::string& name, std::string_view base_name,
                            std::string_view walked)
{
  auto where = join_path(base_name, walked);
  struct stat status {};
  if ((error == ENOTDIR || error == ELOOP) && ::fstatat(parent.get(), name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0
      && S_ISLNK(status.st_mode)) {
    error = ELOOP;
  }
  if (error == ELOOP) {
    throw LinkOnTheWay(escape_control(where) + " is a symbolic link; it is not followed", std::string(walked));
  }
  if (error == ENOTDIR) {
    throw IoError("cannot use " + escape_control(where) + ": it is not a directory");
  }
  throw IoError("cannot open " + escape_control(where) + ": " + std::strerror(error));
}

bool remove_tree_below(const Fd& parent, const std::string& name, int depth)
{
  if (::unlinkat(parent.get(), name.c_str(), 0) == 0 || errno == ENOENT) {
    return true;
  }
  if (errno != EISDIR && errno != EPERM) {
    return false;
  }
  if (depth >= k_max_remove_depth) {
    return false;
  }
  Fd directory(::openat(parent.get(), name.c_str(), k_flags));
  if (!directory) {
    return errno == ENOENT;
  }
  std::vector<std::string> names;
  if (for_each_directory_item(directory, [&](std::string_view item, unsigned char) { names.emplace_back(item); })
      != 0) {
    return false;
  }
  bool all = true;
  for (const auto& item : names) {
    all = remove_tree_below(directory, item, depth + 1) && all;
  }
  if (::unlinkat(parent.get(), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return false;
  }
  return all;
}

} // namespace

Fd open_root_directory(const std::filesystem::path& root)
{
  Fd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) {
    throw IoError("cannot open " + escape_control(root.string()) + ": " + std::strerror(errno));
  }
  return fd;
}

Fd open_directory_below(const Fd& base, std::string_view relative, std::string_view base_name, bool create)
{
  Fd current(::fcntl(base.get(), F_DUPFD_CLOEXEC, 0));
  if (!current) {
    throw IoError("cannot open " + escape_control(base_name) + ": " + std::strerror(errno));
  }
  std::string_view rest = relative;
  std::string walked;
  for (auto component = next_component(rest); !component.empty(); component = next_component(rest)) {
    if (component == "." || component == "..") {
      throw LinkOnTheWay("'" + escape_control(relative) + "' leaves " + escape_control(base_name),
                         std::string(relative));
    }
    walked = walked.empty() ? std::string(component) : walked + "/" + std::string(component);
    std::string name(component);
    Fd next(::openat(current.get(), name.c_str(), k_flags));
    if (!next && errno == ENOENT && create) {
      if (::mkdirat(current.get(), name.c_str(), 0755) != 0 && errno != EEXIST) {
        throw IoError("cannot create " + escape_control(join_path(base_name, walked)) + ": " + std::strerror(errno),
                      "check that it is writable");
      }
      next.reset(::openat(current.get(), name.c_str(), k_flags));
    }
    if (!next) {
      fail_open(errno, current, name, base_name, walked);
    }
    current = std::move(next);
  }
  return current;
}

std::optional<std::string> link_on_the_way(const std::filesystem::path& root, std::string_view relative)
{
  Fd current(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!current) {
    return std::nullopt; // nothing below a missing root exists yet
  }
  std::string_view rest = relative;
  std::string walked;
  for (auto component = next_component(rest); !component.empty(); component = next_component(rest)) {
    walked = walked.empty() ? std::string(component) : walked + "/" + std::string(component);
    if (component == "..") {
      return walked;
    }
    Fd next(::openat(current.get(), std::string(component).c_str(), k_flags));
    if (!next) {
      if (errno == ENOENT) {
        return std::nullopt;
      }
      if (errno == ELOOP || errno == ENOTDIR) {
        return walked;
      }
      return std::nullopt; // unreadable: the write itself will say why
    }
    current = std::move(next);
  }
  return std::nullopt;
}

bool remove_tree_at(const Fd& parent, std::string_view name)
{
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos) {
    return false;
  }
  return remove_tree_below(parent, std::string(name), 0);
}

std::size_t sweep_abandoned(const Fd& directory, const std::function<bool(std::string_view name)>& ours,
                            std::chrono::seconds unsure_age)
{
  std::vector<std::string> names;
  for_each_directory_item(directory, [&](std::string_view name, unsigned char) {
    if (ours(name)) {
      names.emplace_back(name);
    }
  });
  std::size_t removed = 0;
  for (const auto& name : names) {
    struct stat status {};
    if (::fstatat(directory.get(), name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0
        && is_abandoned(name, std::chrono::system_clock::from_time_t(status.st_mtime), unsure_age)
        && remove_tree_at(directory, name)) {
      ++removed;
    }
  }
  return removed;
}

} // namespace hubcache::util
