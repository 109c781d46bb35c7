// The walk of a compile cache: every entry classified (success, failed, locked,
// incomplete, ...) in parallel, links leaving the root never followed.
#include "hubcache/compilecache/compile_cache.hpp"

#include "hubcache/error.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/text.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

enum class NodeType { file, directory, outside, dangling, other, unreadable };

struct Node {
  NodeType type = NodeType::other;
  // A directory's full path, or the target of a symlink; empty for a plain file, opened
  // by name in its directory (a scan holds every file: no full path each).
  std::string source;
  bool linked = false; // reached through a symlink: opened by `source`, not by name
  struct stat status {};
};

// An open directory and its sorted names: children are stat'ed and opened relative to
// it, which spares the kernel a path walk per file.
struct Listing {
  util::Fd handle;
  std::vector<std::string> names;
  int fd() const { return handle ? handle.get() : AT_FDCWD; }
};

// A flags file at the top of a module entry, read while its directory is open, unless
// the memo recalls it as good.
struct FlagsFile {
  bool present = false;
  bool recalled = false;
  std::optional<std::string> bytes;
  std::uint64_t fingerprint = 0;
};
struct FlagsFiles {
  FlagsFile json;
  FlagsFile txt;
};

class Scanner {
public:
  Scanner(stdfs::path root, const std::vector<stdfs::path>& followed, FlagsMemo* memo)
    : m_root(std::move(root)), m_memo(memo)
  {
    char* real = ::realpath(m_root.c_str(), nullptr);
    if (real == nullptr) {
      throw IoError("cannot resolve " + m_root.string() + ": " + std::strerror(errno));
    }
    m_real_root = real;
    std::free(real);
    for (const auto& directory : followed) {
      // Resolved once: a link is followed when its real target lies below the real directory.
      if (char* resolved = ::realpath(directory.c_str(), nullptr)) {
        m_followed.emplace_back(resolved);
        std::free(resolved);
      }
    }
  }

  Scan run()
  {
    Scan scan;
    scan.root = m_root;
    auto root = m_root.string();
    while (root.size() > 1 && root.back() == '/') {
      root.pop_back();
    }
    // The root itself may be a symlink (to a shared file system): opened by its real path.
    auto top = list(AT_FDCWD, m_real_root.string(), "", scan);
    for (const auto& name : top.names) {
      auto node = resolve(top.fd(), name, root == "/" ? "" : root);
      if (!admit(name, name, node, scan)) {
        continue;
      }
      if (name == k_repo_private_dir) {
        continue; // a directory repo's own folder: not compile-cache content
      }
      if (node.type == NodeType::directory && name.starts_with(k_version_prefix)
          && name.size() > k_version_prefix.size()) {
        scan.versions.push_back(name);
        scan_version(top.fd(), name, node, scan);
      } else {
        scan.skipped.push_back({printable(name), SkipReason::unrecognized, {}, Finding::not_a_version_dir});
      }
    }
    return scan;
  }

private:
  // Directory children, sorted; an unreadable directory is reported, not fatal. `name`
  // is opened in `parent_fd` (AT_FDCWD: a path).
  Listing list(int parent_fd, const std::string& name, const std::string& rel, Scan& scan)
  {
    Listing listing;
    listing.handle = util::open_directory_at(parent_fd, name.c_str());
    int error = listing.handle ? util::for_each_directory_item(
                  listing.handle, [&](std::string_view item, unsigned char) { listing.names.emplace_back(item); })
                               : errno;
    if (error != 0) {
      scan.skipped.push_back({printable(rel), SkipReason::unreadable, std::strerror(error)});
      listing = {};
      return listing;
    }
    std::sort(listing.names.begin(), listing.names.end());
    return listing;
  }

  // The directory `node`, named `name` in `parent_fd`: by name, or by its resolved path
  // when a symlink led to it.
  Listing list_node(int parent_fd, const std::string& name, const Node& node, const std::string& rel, Scan& scan)
  {
    return node.linked ? list(AT_FDCWD, node.source, rel, scan) : list(parent_fd, name, rel, scan);
  }

  // `name` in the directory open at `dir_fd`, whose full path is `dir_path`.
  Node resolve(int dir_fd, const std::string& name, const std::string& dir_path)
  {
    Node node;
    if (::fstatat(dir_fd, name.c_str(), &node.status, AT_SYMLINK_NOFOLLOW) != 0) {
      node.type = NodeType::unreadable;
      return node;
    }
    if (S_ISDIR(node.status.st_mode) || S_ISLNK(node.status.st_mode)) {
      node.source = dir_path + "/" + name;
    }
    if (S_ISLNK(node.status.st_mode)) {
      char* real = ::realpath(node.source.c_str(), nullptr);
      if (real == nullptr) {
        node.type = NodeType::dangling;
        return node;
      }
      std::string target(real);
      std::free(real);
      auto below = [&](const std::string& directory) {
        return target.size() > directory.size() && target.starts_with(directory) && target[directory.size()] == '/';
      };
      if (!below(m_real_root.string())) {
        // Only a regular file in a followed directory (the Hugging Face cache, where
        // optimum's downloads live): anything else leaving the root may be planted.
        bool followed = std::any_of(m_followed.begin(), m_followed.end(),
                                    [&](const stdfs::path& directory) { return below(directory.string()); });
        struct stat target_status {};
        if (followed && ::stat(target.c_str(), &target_status) == 0 && S_ISREG(target_status.st_mode)) {
          node.source = target;
          node.linked = true;
          node.status = target_status;
          node.type = NodeType::file;
          return node;
        }
        node.type = NodeType::outside;
        node.source = target;
        return node;
      }
      node.source = target;
      node.linked = true;
      if (::stat(target.c_str(), &node.status) != 0) {
        node.type = NodeType::dangling;
        return node;
      }
    }
    node.type = S_ISREG(node.status.st_mode)   ? NodeType::file
                : S_ISDIR(node.status.st_mode) ? NodeType::directory
                                               : NodeType::other;
    return node;
  }

  // Reports what can never be published by name or type; true when the node may be used.
  bool admit(const std::string& name, const std::string& rel, const Node& node, Scan& scan)
  {
    if (is_temp_file_name(name)) {
      scan.skipped.push_back({printable(rel), SkipReason::temp_file, {}});
      return false;
    }
    if (is_lock_name(name)) {
      scan.skipped.push_back({printable(rel), SkipReason::lock_file, {}});
      return false;
    }
    if (printable(name) != name || !storage::is_valid_path_in_repo(rel)) {
      scan.skipped.push_back({printable(rel), SkipReason::invalid_name, {}});
      return false;
    }
    switch (node.type) {
    case NodeType::outside:
      scan.skipped.push_back({rel, SkipReason::symlink_outside_root, printable(node.source), Finding::points_outside});
      return false;
    case NodeType::dangling: scan.skipped.push_back({rel, SkipReason::dangling_symlink, {}}); return false;
    case NodeType::unreadable: scan.skipped.push_back({rel, SkipReason::unreadable, {}}); return false;
    case NodeType::other: scan.skipped.push_back({rel, SkipReason::not_a_regular_file, {}}); return false;
    default: return true;
    }
  }

  bool first_visit(const Node& node)
  {
    std::lock_guard lock(m_visited_mutex);
    return m_visited.emplace(node.status.st_dev, node.status.st_ino).second;
  }

  void scan_version(int parent_fd, const std::string& rel, const Node& version, Scan& scan)
  {
    if (!first_visit(version)) {
      return;
    }
    auto compiler_version = rel.substr(k_version_prefix.size());
    auto listing = list_node(parent_fd, rel, version, rel, scan);
    // The walk is system calls (a stat per file, a listing and the flags file per entry):
    // contiguous slices of the sorted names go to a few threads and their results are
    // joined in order, so a 10,000-entry cache is walked on every core, and in the same
    // order as by one thread.
    const auto& names = listing.names;
    std::size_t slices = std::min<std::size_t>(k_scan_threads, names.size() / k_names_per_scan_thread + 1);
    std::vector<Scan> parts(slices);
    util::parallel_for(slices, slices, [&](std::size_t slice) {
      auto begin = names.size() * slice / slices;
      auto end = names.size() * (slice + 1) / slices;
      parts[slice].entries.reserve(end - begin);
      for (auto i = begin; i < end; ++i) {
        scan_version_child(version, listing.fd(), names[i], rel, compiler_version, parts[slice]);
      }
    });
    scan.entries.reserve(scan.entries.size() + names.size());
    for (auto& part : parts) {
      std::move(part.entries.begin(), part.entries.end(), std::back_inserter(scan.entries));
      std::move(part.skipped.begin(), part.skipped.end(), std::back_inserter(scan.skipped));
    }
  }

  void scan_version_child(const Node& version, int version_fd, const std::string& name, const std::string& rel,
                          const std::string& compiler_version, Scan& scan)
  {
    auto child_rel = rel + "/" + name;
    auto node = resolve(version_fd, name, version.source);
    if (!admit(name, child_rel, node, scan)) {
      return;
    }
    auto module = parse_module_name(name);
    if (node.type == NodeType::directory && (name == k_registry_dir || (module && !module->flags_suffix))) {
      Entry entry;
      entry.kind = name == k_registry_dir ? EntryKind::registry : EntryKind::exported_model;
      entry.path = child_rel;
      entry.compiler_version = compiler_version;
      entry.newest_mtime_ns = ns(node.status.st_mtim);
      if (first_visit(node)) {
        collect(version_fd, name, node, child_rel, entry, scan, true, nullptr);
      }
      scan.entries.push_back(std::move(entry));
    } else if (node.type == NodeType::directory && module) {
      scan_module(version_fd, name, node, child_rel, compiler_version, *module, scan);
    } else {
      scan.skipped.push_back({child_rel, SkipReason::unrecognized, {}, Finding::not_an_entry});
    }
  }

  static std::int64_t ns(const struct timespec& time)
  {
    return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
  }

  // Last-use evidence: any change below the entry, any read of its files but the flags
  // file this scan reads itself.
  static void note_times(Entry& entry, const std::string& name, const Node& node)
  {
    if (node.type != NodeType::file && node.type != NodeType::directory) {
      return;
    }
    entry.newest_mtime_ns = std::max(entry.newest_mtime_ns, ns(node.status.st_mtim));
    if (node.type == NodeType::file && name != "compile_flags.json" && name != "compile_flags.txt") {
      entry.newest_atime_ns = std::max(entry.newest_atime_ns, ns(node.status.st_atim));
    }
  }

  // Gathers publishable files below the directory `dir` (named `dir_name` in `parent_fd`).
  // Trees carried as they are (registry, exported models) report what they leave out;
  // module entries judge it as a whole instead. `flags`, when given, receives the flags
  // files at the top of the directory, read while it is open.
  void collect(int parent_fd, const std::string& dir_name, const Node& dir, const std::string& rel, Entry& entry,
               Scan& scan, bool report, FlagsFiles* flags)
  {
    auto listing = list_node(parent_fd, dir_name, dir, rel, scan);
    entry.files.reserve(entry.files.size() + listing.names.size());
    for (const auto& name : listing.names) {
      auto child_rel = rel + "/" + name;
      auto node = resolve(listing.fd(), name, dir.source);
      if (is_lock_name(name) && node.type == NodeType::file) {
        entry.lock_files.push_back(stdfs::path(dir.source) / name);
      }
      note_times(entry, name, node);
      Scan local;
      if (!admit(name, child_rel, node, report ? scan : local)) {
        if (node.type == NodeType::file) {
          entry.unlisted_bytes += static_cast<std::uint64_t>(node.status.st_size);
          ++entry.unlisted_files;
        }
        if (report) {
          continue;
        }
        const auto& why = local.skipped.back();
        if (why.reason == SkipReason::symlink_outside_root || why.reason == SkipReason::dangling_symlink) {
          // The entry is incomplete without that file: it is skipped whole.
          entry.state = EntryState::unsafe;
          entry.why = {why.reason == SkipReason::dangling_symlink ? Finding::dangling_link : Finding::link_leaves_root,
                       name};
        } else if (why.reason != SkipReason::lock_file) {
          scan.skipped.push_back(why); // a lock is reported as the entry's state instead
        }
        continue;
      }
      if (node.type == NodeType::directory) {
        if (first_visit(node)) {
          collect(listing.fd(), name, node, child_rel, entry, scan, report, nullptr);
        }
        continue;
      }
      if (flags != nullptr && (name == "compile_flags.json" || name == "compile_flags.txt")) {
        auto& slot = name == "compile_flags.json" ? flags->json : flags->txt;
        slot.present = true;
        slot.fingerprint =
          util::stamp_fingerprint(child_rel, static_cast<std::uint64_t>(node.status.st_size), ns(node.status.st_mtim),
                                  ns(node.status.st_ctim), static_cast<std::uint64_t>(node.status.st_ino));
        slot.recalled = m_memo != nullptr && m_memo->recall(slot.fingerprint);
        if (!slot.recalled) {
          slot.bytes = node.linked ? util::read_file_if_exists(node.source)
                                   : util::read_file_at_if_exists(listing.fd(), name.c_str(), dir.source);
        }
      }
      entry.files.push_back(
        {child_rel, std::move(node.source), static_cast<std::uint64_t>(node.status.st_size),
         static_cast<std::int64_t>(node.status.st_mtim.tv_sec) * 1'000'000'000 + node.status.st_mtim.tv_nsec,
         static_cast<std::uint64_t>(node.status.st_ino)});
    }
  }

  void scan_module(int parent_fd, const std::string& name, const Node& node, const std::string& rel,
                   const std::string& compiler_version, const ModuleName& module, Scan& scan)
  {
    Entry entry;
    entry.kind = EntryKind::module;
    entry.path = rel;
    entry.compiler_version = compiler_version;
    entry.newest_mtime_ns = ns(node.status.st_mtim);
    FlagsFiles flags_files;
    if (first_visit(node)) {
      collect(parent_fd, name, node, rel, entry, scan, false, &flags_files);
    }
    std::vector<EntryFileInfo> infos;
    for (const auto& file : entry.files) {
      infos.push_back({file.path.substr(rel.size() + 1), file.size});
    }
    for (const auto& lock : entry.lock_files) {
      infos.push_back({lock.filename().string(), 0});
    }
    auto classification = classify_module_files(infos);
    entry.generation = classification.generation;
    if (entry.state == EntryState::unsafe && classification.state != EntryState::locked) {
      // keeps the symlink reason
    } else {
      entry.state = classification.state;
      entry.why = classification.why;
    }
    if (entry.state == EntryState::success) {
      auto flags_name = flags_file_name(infos);
      FlagsFile none;
      auto& flags = flags_name == "compile_flags.json"  ? flags_files.json
                    : flags_name == "compile_flags.txt" ? flags_files.txt
                                                        : none;
      if (!flags.recalled) {
        if (auto problem = check_flags_suffix(module, flags.bytes)) {
          entry.state = EntryState::flags_mismatch;
          entry.why = problem;
        } else if (m_memo != nullptr && flags.present) {
          m_memo->remember(flags.fingerprint);
        }
      }
    }
    if (entry.state != EntryState::success) {
      scan.skipped.push_back({rel, skip_reason_of(entry.state), entry.why.subject, entry.why.finding});
    }
    scan.entries.push_back(std::move(entry));
  }

  stdfs::path m_root;
  FlagsMemo* m_memo = nullptr;
  stdfs::path m_real_root;
  std::vector<stdfs::path> m_followed; // real paths whose regular files links may point to
  std::mutex m_visited_mutex;          // the version walk runs on several threads
  std::set<std::pair<dev_t, ino_t>> m_visited;

  static constexpr std::size_t k_scan_threads = 4;
  static constexpr std::size_t k_names_per_scan_thread = 256; // fewer: not worth a thread
};

} // namespace

Scan scan(const stdfs::path& root, const std::vector<stdfs::path>& followed, FlagsMemo* memo)
{
  struct stat status {};
  if (::stat(root.c_str(), &status) != 0) {
    int error = errno;
    if (error == ENOENT) {
      throw IoError("the compile cache " + root.string() + " does not exist",
                    "compile a model first, or name the compile cache (NEURON_COMPILE_CACHE_URL)");
    }
    throw IoError("cannot read the compile cache " + root.string() + ": " + std::strerror(error),
                  "check the path and its permissions");
  }
  if (!S_ISDIR(status.st_mode)) {
    throw IoError("the compile cache " + root.string() + " is not a directory", "name the compile cache directory");
  }
  if (::access(root.c_str(), R_OK | X_OK) != 0) {
    throw IoError("cannot read the compile cache " + root.string() + ": " + std::strerror(errno),
                  "check the directory's permissions");
  }
  return Scanner(root, followed, memo).run();
}

} // namespace hubcache::compilecache
