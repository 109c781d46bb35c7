#include "hubcache/storage/directory_repository.hpp"

#include "directory_index.hpp"
#include "directory_walk.hpp"

#include "hubcache/error.hpp"
#include "hubcache/layout/names.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/nofollow.hpp"
#include "hubcache/util/text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <set>
#include <tuple>
#include <unistd.h>

// A directory repo's publishing: a commit's staging, then its renames into place, in the
// order readers trust (see directory_repository.hpp).
namespace hubcache::storage {

namespace stdfs = std::filesystem;

namespace {

constexpr std::string_view k_writer_folder = "w";
constexpr std::string_view k_write_probe = "write-probe";

using util::errno_text;

using detail::file_kind;
using detail::first_component;
using layout::install_rank;
using layout::k_module_prefix;
using layout::k_registry_dir;
using layout::k_version_prefix;

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

} // namespace

// Outside the anonymous namespace: detail::DirectoryCommit holds one.
namespace detail {

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

} // namespace detail

namespace {

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

std::size_t DirectoryRepository::sweep_stale_staging()
{
  return util::sweep_abandoned(private_dir("staging", true), is_our_staging_name, stale_staging_age);
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

namespace detail {

// One commit of a directory repo, as the protocol it implements (directory_repository.hpp):
// deletions move out of the way, every addition is staged and flushed once, then entries are
// published (a new one by one rename that never replaces, an existing one file by file,
// model.done last), then loose files, then the registry, which describes entries.
class DirectoryCommit {
public:
  DirectoryCommit(DirectoryRepository& repo, const CommitRequest& request, const util::ProgressCallback& progress)
    : m_repo(repo), m_request(request), m_progress(progress)
  {}

  CommitResult run()
  {
    check_request();
    m_repo.require_repo();
    if (m_request.parent_revision && m_repo.revision() != *m_request.parent_revision) {
      throw ConflictError("the repo changed since revision " + *m_request.parent_revision,
                          "run again to apply the change on the current content");
    }
    m_repo.sweep_stale_staging();
    m_staging.emplace(m_repo.private_dir("staging", true), m_repo.staging_dir());
    m_result.files.reserve(m_request.additions.size());
    remove_deletions();
    // 1. Everything is staged first, without one fsync per file...
    stage_additions(publishing_order());
    // ... then flushed at once, so that nothing published can be lost content after a crash.
    if (!m_request.additions.empty()) {
      util::sync_filesystem(m_staging->path());
    }
    // 2. Publishing: entries, then loose files and the registry, in that order after them.
    std::size_t entry_files = 0;
    for (const auto& unit : m_pending) {
      stop_if_interrupted();
      entry_files = unit.last;
      publish_entry(unit);
    }
    stop_if_interrupted(); // the loose files and the registry describe every entry: all or none
    for (auto i = entry_files; i < m_staged.size(); ++i) {
      publish_file(m_staged[i]);
    }
    for (const auto& directory : m_touched_directories) {
      util::sync_directory(directory);
    }
    m_repo.m_index->save();
    // The index now holds a record per file this commit published, all of them on disk: a
    // later call reads the file back once rather than this object holding tens of thousands
    // of records meanwhile (a push has no later call).
    m_repo.m_index->forget();
    m_result.created = m_result.files_added > 0 || m_result.files_deleted > 0;
    m_result.revision = m_repo.revision().value_or("");
    return std::move(m_result);
  }

private:
  enum class Group : unsigned char { entry, loose, registry };
  // An addition in publishing order (see publishing_order).
  struct Ordered {
    const Addition* addition = nullptr;
    std::string_view entry; // a prefix of addition->path_in_repo; empty outside entries
    Group group = Group::loose;
    int rank = 0;
  };
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
    std::size_t first = 0; // its files: m_staged[first, last), in publishing order
    std::size_t last = 0;
  };

  void check_request() const
  {
    if (m_request.message.empty()) {
      throw InvalidArgument("a commit needs a message");
    }
    for (const auto& addition : m_request.additions) {
      validate_path_in_repo(addition.path_in_repo);
      if (first_component(addition.path_in_repo) == DirectoryRepository::k_hidden_dir) {
        throw InvalidArgument("'" + addition.path_in_repo + "' is inside the repo's private folder");
      }
    }
    for (const auto& deletion : m_request.deletions) {
      validate_path_in_repo(folder_of_prefix(deletion.path_in_repo));
      if (first_component(folder_of_prefix(deletion.path_in_repo)) == DirectoryRepository::k_hidden_dir) {
        throw InvalidArgument("'" + deletion.path_in_repo + "' is inside the repo's private folder");
      }
    }
  }

  // A folder leaves by one rename into the staging folder, then goes with it.
  void remove_deletions()
  {
    const auto& root = m_repo.m_root;
    for (const auto& deletion : m_request.deletions) {
      auto path = folder_of_prefix(deletion.path_in_repo);
      auto target = root / path;
      if (auto link = util::link_on_the_way(root, stdfs::path(path).parent_path().native())) {
        throw util::LinkOnTheWay(m_repo.describe() + ": " + util::escape_control(*link)
                                   + " is a symbolic link; nothing is removed through it",
                                 *link);
      }
      struct ::stat status {};
      if (::lstat(target.c_str(), &status) != 0) {
        continue;
      }
      if (deletion.is_folder && S_ISDIR(status.st_mode)) {
        std::size_t below = 0;
        m_repo.walk(path, [&](std::string&&, const struct ::stat&) { ++below; });
        auto away = stage_path(m_stage_count++);
        if (::rename(target.c_str(), away.c_str()) != 0) {
          throw IoError("cannot remove " + target.string() + ": " + errno_text(errno));
        }
        m_result.files_deleted += below;
      } else if (!deletion.is_folder && !S_ISDIR(status.st_mode)) {
        if (::unlink(target.c_str()) != 0 && errno != ENOENT) {
          throw IoError("cannot remove " + target.string() + ": " + errno_text(errno));
        }
        ++m_result.files_deleted;
      }
    }
  }

  // Entries (each one's files together, model.done last), loose files, then the registry,
  // which describes entries. One sorted vector: a commit may carry tens of thousands of
  // files, and a map would hold a node and a name per entry. Also counts the bytes to publish.
  std::vector<Ordered> publishing_order()
  {
    std::vector<Ordered> order;
    order.reserve(m_request.additions.size());
    for (const auto& addition : m_request.additions) {
      if (addition.source.is_file()) {
        struct ::stat status {};
        auto file = addition.source.file_for(addition.path_in_repo);
        m_total += ::stat(file.c_str(), &status) == 0 ? static_cast<std::uint64_t>(status.st_size) : 0;
      } else {
        m_total += addition.source.bytes().size();
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
    return order;
  }

  void stage_additions(const std::vector<Ordered>& order)
  {
    m_staged.reserve(order.size());
    for (const auto& item : order) {
      if (item.group != Group::entry) {
        stage_file(item.addition, m_stage_count++, 0);
        continue;
      }
      if (m_pending.empty() || m_pending.back().entry != item.entry) {
        PendingEntry unit{item.entry, m_stage_count++, false, m_staged.size(), m_staged.size()};
        struct ::stat status {};
        unit.whole = ::lstat((m_repo.m_root / item.entry).c_str(), &status) != 0; // staged as the entry itself
        m_pending.push_back(unit);
      }
      stage_file(item.addition, m_pending.back().stage, item.entry.size());
      m_pending.back().last = m_staged.size();
    }
  }

  void stage_file(const Addition* addition, std::size_t stage, std::size_t entry_length)
  {
    stop_if_interrupted();
    StagedFile file{addition, stage, entry_length, {}};
    stdfs::path destination(staged_path(file));
    detail::make_directories(destination.parent_path());
    auto content = stage_content(*addition, destination);
    if (!place(content, destination, false)) {
      throw InvalidArgument("'" + addition->path_in_repo + "' is added twice in one commit");
    }
    file.sha256 = content.sha256;
    m_staged.push_back(file);
  }

  std::string stage_path(std::size_t stage) const { return m_staging->path().native() + "/s" + std::to_string(stage); }
  std::string staged_path(const StagedFile& staged) const
  {
    auto path = stage_path(staged.stage);
    if (staged.entry_length > 0) {
      path += '/';
      path += std::string_view(staged.addition->path_in_repo).substr(staged.entry_length + 1);
    }
    return path;
  }

  void publish_entry(const PendingEntry& unit)
  {
    auto target = m_repo.m_root / unit.entry;
    if (unit.whole && publish_whole_entry(unit, target)) {
      return;
    }
    // Another writer published this entry meanwhile, or it existed: completed file by file.
    struct ::stat status {};
    if (::lstat(target.c_str(), &status) == 0 && !S_ISDIR(status.st_mode)) {
      throw IntegrityError(m_repo.describe() + ": " + std::string(unit.entry) + " is " + file_kind(status.st_mode)
                             + "; a cache repo holds only regular files and directories",
                           "remove it from the repo");
    }
    // An existing entry: completed file by file, model.neff then model.done last.
    for (auto i = unit.first; i < unit.last; ++i) {
      publish_file(m_staged[i]);
    }
  }

  // A new entry appears whole, by one rename that never replaces; false when another
  // writer published it first.
  bool publish_whole_entry(const PendingEntry& unit, const stdfs::path& target)
  {
    m_repo.make_parent_directories(unit.entry);
    if (m_repo.before_publish_hook) {
      m_repo.before_publish_hook(std::string(unit.entry));
    }
    if (!util::rename_no_replace(stage_path(unit.stage), target)) {
      return false;
    }
    m_touched_directories.insert(target.parent_path());
    for (auto i = unit.first; i < unit.last; ++i) {
      const auto& addition = *m_staged[i].addition;
      report(addition, lstat_published(m_repo.m_root / addition.path_in_repo), m_staged[i].sha256, true);
    }
    return true;
  }

  // One file into an existing directory: added when missing, replaced by one rename when
  // different (a reader sees one copy or the other, never a mix).
  void publish_file(const StagedFile& staged_file)
  {
    const auto& addition = *staged_file.addition;
    auto from = staged_path(staged_file);
    auto target = m_repo.m_root / addition.path_in_repo;
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto current = m_repo.existing_file(addition.path_in_repo);
      if (current) {
        auto present = m_repo.m_index->sha256_of(addition.path_in_repo, *current);
        if (present == staged_file.sha256) {
          report(addition, *current, present, false);
          return;
        }
        move(from, target, true);
        m_touched_directories.insert(target.parent_path());
        report(addition, lstat_published(target), staged_file.sha256, true);
        return;
      }
      struct ::stat blocking {};
      if (::lstat(target.c_str(), &blocking) == 0 && S_ISDIR(blocking.st_mode)) {
        throw IntegrityError(m_repo.describe() + ": " + addition.path_in_repo
                             + " is a directory, a file was to go there");
      }
      m_repo.make_parent_directories(addition.path_in_repo);
      if (move(from, target, false)) {
        m_touched_directories.insert(target.parent_path());
        report(addition, lstat_published(target), staged_file.sha256, true);
        return;
      }
      // Another writer placed it first: compare with theirs.
    }
    throw ConflictError("could not publish " + addition.path_in_repo + " in " + m_repo.describe()
                        + ": it keeps changing");
  }

  // The stop point between two entries (or two staged files): once an interrupt arrived,
  // what is published is made durable and recorded, and the commit ends there; the staging
  // folder goes with this object.
  void stop_if_interrupted()
  {
    auto signal = commit_stop_signal();
    if (signal == 0) {
      return;
    }
    for (const auto& directory : m_touched_directories) {
      util::sync_directory(directory);
    }
    m_repo.m_index->save();
    m_repo.m_index->forget();
    std::set<std::string_view> published;
    for (const auto& file : m_result.files) {
      published.insert(file.path);
    }
    std::vector<std::string> remaining;
    for (const auto& addition : m_request.additions) {
      if (published.count(addition.path_in_repo) == 0) {
        remaining.push_back(addition.path_in_repo);
      }
    }
    throw CommitInterrupted(signal, m_result.files_added > 0 ? 1 : 0, std::move(remaining));
  }

  static bool move(const std::string& from, const stdfs::path& target, bool replace)
  {
    if (replace) {
      if (::rename(from.c_str(), target.c_str()) != 0) {
        throw IoError("cannot publish " + target.string() + ": " + errno_text(errno));
      }
      return true;
    }
    return util::rename_no_replace(from, target);
  }

  static struct ::stat lstat_published(const stdfs::path& target)
  {
    struct ::stat status {};
    if (::lstat(target.c_str(), &status) != 0) {
      throw IoError("cannot stat " + target.string() + " after publishing it: " + errno_text(errno));
    }
    return status;
  }

  void report(const Addition& addition, const struct ::stat& status, const util::Sha256Bytes& sha256, bool added)
  {
    m_repo.m_index->record(addition.path_in_repo, status, sha256);
    RepoFile file{addition.path_in_repo, static_cast<std::uint64_t>(status.st_size), sha256.hex(), {}};
    if (addition.digests && addition.digests->sha256 == file.sha256) {
      file.git_blob_sha1 = addition.digests->git_blob_sha1;
    }
    m_result.files.push_back(std::move(file));
    m_result.files_added += added ? 1 : 0;
    m_done += static_cast<std::uint64_t>(status.st_size);
    if (m_progress) {
      m_progress(m_done, m_total);
    }
  }

  DirectoryRepository& m_repo;
  const CommitRequest& m_request;
  const util::ProgressCallback& m_progress;
  std::optional<StagingFolder> m_staging;
  CommitResult m_result;
  std::size_t m_stage_count = 0;
  std::uint64_t m_total = 0; // bytes to publish
  std::uint64_t m_done = 0;
  std::vector<StagedFile> m_staged;
  std::vector<PendingEntry> m_pending;
  std::set<stdfs::path> m_touched_directories;
};

} // namespace detail

CommitResult DirectoryRepository::commit(const CommitRequest& request, const util::ProgressCallback& progress)
{
  std::lock_guard lock(m_index_mutex); // one commit at a time per object, as the interface says
  m_index->begin_call();
  return detail::DirectoryCommit(*this, request, progress).run();
}

} // namespace hubcache::storage
