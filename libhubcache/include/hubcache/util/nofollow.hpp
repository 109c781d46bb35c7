#pragma once

#include "hubcache/error.hpp"
#include "hubcache/util/fd.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

// Directories below a root we opened ourselves, reached without following a symbolic
// link. Caches and directory repos live on shared storage that other users and hosts can
// write to: a link planted on the way (`<repo>/.neuron-cache/staging -> /home`) must never
// turn one of our writes or removals into one outside the tree. The root itself may be a
// link (a cache moved to a bigger disk is often one); nothing below it is followed.
namespace hubcache::util {

// A component of a path below a root is a symbolic link.
class LinkOnTheWay : public IoError {
public:
  LinkOnTheWay(const std::string& message, std::string component)
    : IoError(message, "remove it: nothing below a cache root or a repo root is followed"),
      m_component(std::move(component))
  {}
  // The offending component, relative to the root.
  const std::string& component() const noexcept { return m_component; }

private:
  std::string m_component;
};

// Opens `root` as a directory (a final link in `root` itself is followed). IoError when
// it is missing or not a directory.
Fd open_root_directory(const std::filesystem::path& root);

// Opens the directory `relative` below the open directory `base`, one component at a time
// with O_NOFOLLOW | O_DIRECTORY. With `create`, missing components are made (mode 0755) on
// the way. Throws LinkOnTheWay naming the first component that is a link, IoError on any
// other failure (not a directory, ENOENT without `create`, ...). `base_name` names
// `base` in messages. An empty `relative` opens `base` again.
Fd open_directory_below(const Fd& base, std::string_view relative, std::string_view base_name, bool create);

// The first component of `relative` below `root` that is a symbolic link or not a
// directory (relative to `root`), or nullopt when every existing one is a real directory
// (components that do not exist yet are fine: they would be made as directories).
std::optional<std::string> link_on_the_way(const std::filesystem::path& root, std::string_view relative);

// Removes `name` in the open directory `parent` and, when it is a directory, everything
// below it, never following a link (a link is removed as itself). Nothing happens when
// `name` does not exist. Returns false when something could not be removed (the rest is).
bool remove_tree_at(const Fd& parent, std::string_view name);

// The one sweeper of abandoned temp names (a directory repo's staging, a pull's staging):
// removes each item of the open directory `directory` whose name `ours` accepts (the
// caller's own temp form, never anything else) and whose writer is gone (util::is_abandoned
// on the item's mtime, `unsure_age` when liveness cannot be known), with remove_tree_at.
// Returns how many were removed.
std::size_t sweep_abandoned(const Fd& directory, const std::function<bool(std::string_view name)>& ours,
                            std::chrono::seconds unsure_age);

} // namespace hubcache::util
