#pragma once

// On-disk state of the test Hub. Layout under --data:
//   server.json                       secret used to sign LFS/CDN URLs (so they survive restarts)
//   tmp/                              incoming bodies, renamed into place when complete
//   uploads/<id>/{meta.json,part-N}   multipart LFS uploads in progress
//   repos/<ns>/<name>/repo.json       {"id","private","createdAt","author"}
//   repos/<ns>/<name>/refs.json       {"<branch>": "<commit id>"}
//   repos/<ns>/<name>/commits/<id>.json  a repo's first commit whole, every later one as
//                                        its changes (loaded by applying them to the parent)
//   repos/<ns>/<name>/blobs/<sha1>    git blobs: regular files' contents, and an LFS pointer's
//                                     text once it is read raw (a commit stores its oid only)
//   repos/<ns>/<name>/lfs/<sha256>    LFS objects: uploaded through LFS, or rebuilt from the Xet
//                                     CAS when a non-Xet reader first asks for one
//   repos/<ns>/<name>/xet-objects.jsonl  {"sha256","size"} of each file a shard uploaded for
//                                     this repo through Xet, appended a shard at a time
// Commit and tree ids are real git object ids computed from that content.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace testhub {

// Seconds added to the date of every commit made from now on (POST /_test/clock): lets a
// test make commits that look days old.
std::int64_t commit_clock_offset();
void set_commit_clock_offset(std::int64_t seconds);

namespace stdfs = std::filesystem;

// How many leading bytes decide "binary" (a NUL among them), at preupload and at commit
// alike: the sample the official clients send.
inline constexpr std::size_t k_binary_sample_size = 512;

// An error that maps straight to a Hub HTTP error.
class HubError : public std::runtime_error {
public:
  HubError(int status, const std::string& message, std::string code = {})
    : std::runtime_error(message), m_status(status), m_code(std::move(code))
  {}
  int status() const { return m_status; }
  const std::string& code() const { return m_code; }

private:
  int m_status;
  std::string m_code;
};

struct FileEntry {
  std::string oid; // git blob sha1 of the content, or of the pointer text for LFS files
  std::uint64_t size = 0;
  std::string lfs_sha256; // empty for regular files
  std::uint64_t pointer_size = 0;
  bool is_lfs() const { return !lfs_sha256.empty(); }
};

struct Commit {
  std::string id;
  std::string parent; // empty for the first commit
  std::string title;
  std::string message;
  std::string author;
  std::int64_t date = 0;
  std::map<std::string, FileEntry> files;
  std::map<std::string, std::string> directory_oids; // "" is the root tree
};

struct RepoMeta {
  std::string repo_id; // ns/name
  std::string ns;
  std::string name;
  std::string uid; // 24-hex, like the Hub's _id
  bool is_private = false;
  std::int64_t created = 0;
  std::string author;
};

struct CommitOperation {
  enum class Kind { add_regular, add_lfs, delete_file, delete_folder };
  Kind kind = Kind::add_regular;
  std::string path;
  std::string content; // add_regular
  std::string sha256;  // add_lfs
  std::uint64_t size = 0;
};

struct CommitPlan {
  std::string summary;
  std::string description;
  std::optional<std::string> parent_commit;
  std::string author;
  std::vector<CommitOperation> operations;
};

// Writes a file of the test Hub's state atomically, without fsync: its data dir is scratch,
// and a commit of 1,000 files must not pay 1,000 fsyncs the Hub's own cost model lacks.
void write_hub_file(const stdfs::path& target, std::string_view content);

std::string lfs_pointer_text(const std::string& sha256, std::uint64_t size);
// Hub rules for a path inside a repo: no empty/'.'/'..' component, no leading '/', no .git.
bool is_valid_repo_path(const std::string& path);
bool is_valid_repo_name_part(const std::string& part);
bool is_hex(const std::string& text, std::size_t length);

class Storage {
public:
  explicit Storage(stdfs::path root);

  const stdfs::path& root() const { return m_root; }
  const std::string& secret() const { return m_secret; }
  stdfs::path temp_path(const std::string& hint) const;
  stdfs::path uploads_dir() const { return m_root / "uploads"; }

  // Readers hold the shared lock; create/delete/commit/branch changes the exclusive one.
  std::shared_mutex& mutex() { return m_mutex; }

  std::optional<RepoMeta> find_repo(const std::string& repo_id) const;
  RepoMeta create_repo(const std::string& ns, const std::string& name, bool is_private, const std::string& author);
  bool delete_repo(const std::string& repo_id);
  void set_private(const RepoMeta& repo, bool is_private);

  std::map<std::string, std::string> branches(const RepoMeta& repo) const;
  // Branch name, "HEAD", refs/heads/<b>, or a full commit id -> commit id; nullopt if unknown.
  std::optional<std::string> resolve_revision(const RepoMeta& repo, const std::string& revision) const;
  std::shared_ptr<const Commit> commit(const RepoMeta& repo, const std::string& id) const;
  std::vector<std::shared_ptr<const Commit>> history(const RepoMeta& repo, const std::string& head,
                                                     std::size_t limit) const;

  stdfs::path blob_path(const RepoMeta& repo, const std::string& sha1) const;
  // The blob of an entry as a raw download serves it (an LFS entry's pointer text, written
  // when first asked for).
  stdfs::path entry_blob(const RepoMeta& repo, const FileEntry& entry);
  stdfs::path lfs_path(const RepoMeta& repo, const std::string& sha256) const;
  // The size of an LFS object the repo holds, uploaded through LFS or through Xet.
  std::optional<std::uint64_t> lfs_object_size(const RepoMeta& repo, const std::string& sha256) const;
  bool has_lfs_object(const RepoMeta& repo, const std::string& sha256, std::uint64_t size) const;
  // The file of an LFS object, rebuilt from the Xet CAS on first read if it came through
  // Xet (the Hub's bridge for readers without Xet); nullopt if the repo has no such object.
  std::optional<stdfs::path> lfs_object_file(const RepoMeta& repo, const std::string& sha256) const;
  // Moves a verified temp file into the LFS store.
  void install_lfs_object(const RepoMeta& repo, const stdfs::path& temp, const std::string& sha256);
  // Files a shard uploaded through Xet for this repo (sha256, size): one journal append, no
  // file per object (the real Hub does not rebuild them at upload either).
  void record_xet_objects(const RepoMeta& repo, const std::vector<std::pair<std::string, std::uint64_t>>& objects);
  // How an object recorded through Xet is rebuilt: (sha256, target file) -> whether the CAS
  // had it. Set once at start by the server that owns the CAS.
  using XetRebuild = std::function<bool(const std::string& sha256, const stdfs::path& out)>;
  void set_xet_rebuild(XetRebuild rebuild) { m_xet_rebuild = std::move(rebuild); }

  // What a commit changes, for a check of the tree it makes: the paths it adds or replaces,
  // those of them its parent lacked, and its parent's file count.
  struct TreeChange {
    const std::vector<std::string>& added;
    std::vector<std::string> new_paths;
    std::size_t parent_file_count = 0;
  };
  // Applies a commit on `branch` (call with the exclusive lock held). Throws HubError, or
  // whatever `check(next, change)` throws to refuse the resulting tree before it is written.
  // Its work is proportional to the commit and the folders it touches, not to the repo
  // (commit_tree.hpp): the new commit takes over its parent's file list when nothing else
  // holds it (the parent is rebuilt from disk if asked for again), rather than copying it.
  using TreeCheck = std::function<void(const Commit& next, const TreeChange& change)>;
  std::shared_ptr<const Commit> apply_commit(const RepoMeta& repo, const std::string& branch, const CommitPlan& plan,
                                             const TreeCheck& check = {});

  void create_branch(const RepoMeta& repo, const std::string& branch, const std::string& commit_id);
  void delete_branch(const RepoMeta& repo, const std::string& branch);

private:
  stdfs::path repo_dir(const std::string& repo_id) const;
  void write_refs(const RepoMeta& repo, const std::map<std::string, std::string>& refs);
  std::string store_blob(const RepoMeta& repo, const std::string& content);
  std::shared_ptr<Commit> write_commit(const RepoMeta& repo, Commit commit, const std::vector<std::string>& changed);
  // The commit `id` as a value the caller may change: moved out of the cache when the cache
  // holds the only reference, copied otherwise.
  Commit take_commit(const RepoMeta& repo, const std::string& id);

  stdfs::path m_root;
  std::string m_secret;
  mutable std::shared_mutex m_mutex;
  mutable std::mutex m_cache_mutex;
  mutable std::map<std::string, std::shared_ptr<Commit>> m_commit_cache; // key: repo uid + id
  // Guarded by m_cache_mutex: per repo uid, sha256 -> size of the objects uploaded through
  // Xet (xet-objects.jsonl, read on first use).
  mutable std::map<std::string, std::map<std::string, std::uint64_t>> m_xet_objects;
  std::map<std::string, std::uint64_t>& xet_objects(const RepoMeta& repo) const; // m_cache_mutex held
  XetRebuild m_xet_rebuild;
};

} // namespace testhub
