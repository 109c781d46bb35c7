#pragma once

// Internal to the storage floor: what a directory repo serves of the items in its tree,
// and the walk that lists them. One odd item (a FIFO, a link leaving the repo, a name
// that cannot be a repo path, a folder too deep, an unreadable or absurd file) costs only
// itself: it is reported and skipped, never the whole repo.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

namespace hubcache::storage::detail {

constexpr int k_max_depth = 16;
// The reason given for a path with a link in the middle: never followed, never written through.
constexpr std::string_view k_below_link = "lies below a symbolic link";

// The top-level folder of a repo path.
inline std::string_view first_component(std::string_view path)
{
  return path.substr(0, path.find('/'));
}

// Makes `directory` and its parents; IoError when it cannot.
void make_directories(const std::filesystem::path& directory);

struct ServeLimits {
  std::uint64_t max_file_size = 0; // DirectoryRepository::max_file_size
};

// Why a regular file cannot be served (too large, sparse, unreadable by this process);
// empty when it can.
std::string unservable_file(const struct ::stat& status, const ServeLimits& limits);
// "a FIFO", "a socket", ...: what a non-regular file is, for messages.
std::string file_kind(mode_t mode);

// A repo-relative path as a repo serves it: missing, a file (its stat; `served` is the
// repo-relative path of the bytes, another one for an alias link), or an item it does not
// serve, with the reason.
struct Served {
  enum class Kind { missing, file, unservable };
  Kind kind = Kind::missing;
  struct ::stat status {};
  std::string served;
  std::string reason;
};

// `path` is a valid repo path. A symbolic link is served as the file it leads to when that
// is a regular file inside the repo (optimum's registry keeps alias links); never a link
// in the middle of the path.
Served look_up(const std::filesystem::path& root, std::string_view path, const ServeLimits& limits);

using FileVisitor = std::function<void(std::string&& path, const struct ::stat& status)>;
using SkipVisitor = std::function<void(std::string&& path, std::string&& reason)>;

// Visits every item a repo serves below the repo-relative folder `relative` (empty: the
// whole repo, its private folder left out), each with its stat (an alias link's target's),
// and hands every item it does not serve to `skip`. Calls of either never overlap, but may
// come from several threads, in no set order. Throws IoError only when `relative` itself
// cannot be read.
void walk_tree(const std::filesystem::path& root, const std::string& relative, const ServeLimits& limits,
               const FileVisitor& visit, const SkipVisitor& skip);

// The immediate sub-folders of `relative` a walk would enter, by name (unsorted); the
// folders it would skip go to `skip`.
std::vector<std::string> sub_folders(const std::filesystem::path& root, const std::string& relative,
                                     const SkipVisitor& skip);

} // namespace hubcache::storage::detail
