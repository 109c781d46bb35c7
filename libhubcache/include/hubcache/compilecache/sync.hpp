#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/environment.hpp"
#include "hubcache/util/hash.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

// Synchronizing a local compile cache with a cache repo, through the Repository
// interface only, so every backend behaves the same. The repo mirrors the cache root's
// relative paths 1:1, as optimum-neuron's `synchronize` does.
namespace hubcache::compilecache {

inline constexpr std::string_view k_commit_message = "Synchronizing local compiler cache.";

// Identity of a file version as stat(2) sees it: a changed file changes one of them.
struct FileStamp {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t inode = 0;
  bool operator==(const FileStamp&) const = default;
};
FileStamp stamp_of(const std::filesystem::path& file);

// Digests of local files remembered across runs, keyed by path and stamp, so a re-run
// hashes nothing that did not change. Kept outside the cache root (anything inside it
// would be published); a missing or corrupt file is simply an empty cache.
class DigestCache {
public:
  // No file: remembers for this run only.
  DigestCache() = default;
  explicit DigestCache(std::filesystem::path file);
  // ${XDG_CACHE_HOME:-~/.cache}/neuron-cache/digests-<hash of the root>.tsv
  static std::filesystem::path default_path(const std::filesystem::path& cache_root, const util::Environment& env);

  // Full digests of `file`, read from the cache when its stamp still matches.
  util::FileDigests digest(const std::string& key, const std::filesystem::path& file, const FileStamp& stamp);
  // What is known without reading the file; either hash may be empty.
  std::optional<util::FileDigests> known(const std::string& key, const FileStamp& stamp);
  // The same without a copy: valid until the next call of find, known or digest.
  const util::FileDigests* find(const std::string& key, const FileStamp& stamp);
  // Records digests learnt elsewhere (the repo's, for a file just uploaded or downloaded),
  // beside those already known for the same stamp unless they contradict them.
  void remember(const std::string& key, const FileStamp& stamp, const util::FileDigests& digests);
  // The same, keeping `key` itself for a new record instead of a copy of it (a push
  // remembers every file it uploaded: its paths are not needed twice).
  void remember(std::string&& key, const FileStamp& stamp, const util::FileDigests& digests);

  // Whether `file` has the content a store describes by an S3-style ETag (RepoFile::etag).
  // `same` when the ETag is one remembered for this very file version (the one S3 gave our
  // upload of it, or listed for our download), or is reproduced from the bytes: their MD5
  // for a plain ETag, their multipart ETag "...-N" for the part sizes that give N parts.
  // `differs` when it is not, and every plausible part size was tried. `unknown` when the
  // ETag cannot be reproduced (an opaque tag, or a part size that cannot be pinned down).
  // Hashes the file (one read, with sha256 and the git blob sha1) only when needed.
  enum class EtagMatch { same, differs, unknown };
  EtagMatch match_etag(const std::string& key, const std::filesystem::path& file, const FileStamp& stamp,
                       const std::string& etag);
  // The part sizes the store's writers use (Repository::etag_part_sizes), tried for
  // multipart ETags beside the whole numbers of MiB that fit.
  void set_etag_part_sizes(std::vector<std::uint64_t> sizes) { m_etag_part_sizes = std::move(sizes); }
  // Writes the records used by this run (atomically); failures are ignored: it is a cache.
  void save();
  std::size_t hashed() const { return m_hashed; }

private:
  // Digests kept as bytes, not hex strings: one record per file of the cache.
  struct Record {
    FileStamp stamp;
    std::optional<util::Sha256Bytes> sha256;
    std::optional<util::Sha1Bytes> git_blob_sha1;
    std::optional<util::DigestBytes<16>> md5; // only for files compared with an S3 store
    bool used = false;                        // looked up or learnt by this run: what save() keeps
    // An S3 ETag of this content (any form), when one is known: rare (S3 stores only),
    // so kept off the record.
    std::unique_ptr<const std::string> etag;
  };
  void update(Record& record, const FileStamp& stamp, const util::FileDigests& digests);
  static void set_digests(Record& record, const util::FileDigests& digests);
  static bool contradicts(const Record& record, const util::FileDigests& digests);
  std::vector<std::uint64_t> m_etag_part_sizes;
  util::FileDigests m_found; // what find() returned last
  std::filesystem::path m_file;
  // One record per path (loaded, then updated): tens of thousands in a big cache.
  std::unordered_map<std::string, Record> m_records;
  std::size_t m_loaded = 0;
  std::size_t m_used = 0;
  std::size_t m_hashed = 0;
  bool m_changed = false;
};

// True when the local file has the remote's content, compared with whatever digest the
// backend gives (sha256, else the git blob sha1, else an S3 ETag: see
// DigestCache::match_etag); size alone when it gives none, or an ETag that cannot be
// reproduced. `root`: what local.path is relative to, when local.source is empty.
bool same_content(const storage::RepoFile& remote, const LocalFile& local, DigestCache& digests,
                  std::string_view root = {});

struct Upload {
  std::string path;
  // Where to read the file when it is not <root>/<path> (a symlink's target, as in
  // LocalFile::source); empty for the others, most files. Read through PushPlan::source_of.
  std::string source;
  FileStamp stamp; // as scanned: what the repo's digests will describe
};

struct PushPlan {
  std::string root;                         // the cache root the uploads' paths are relative to
  std::vector<Upload> uploads;              // consumed by push(); the counts below stay
  std::vector<std::string> entries_to_push; // entries with at least one file to upload
  std::vector<std::string> entries_present; // entries the repo already has whole
  std::vector<Skipped> skipped;
  std::size_t files_to_upload = 0;
  std::uint64_t bytes_to_upload = 0;
  // Direct entries of each folder the uploads add to, once they land (push_limits.hpp).
  std::map<std::string, std::size_t> folder_entries;

  // The local file to upload for `upload`.
  std::string source_of(const Upload& upload) const;
};

// What to upload: publishable entries (SUCCESS modules, exported models, registry trees)
// whose files the repo lacks or holds with other content.
PushPlan plan_push(const Scan& scan, const std::vector<storage::RepoFile>& remote, DigestCache& digests);

// A digest of what a push of this scan publishes: every publishable file's repo path and
// stamp (size, mtime, inode), the key the digest cache trusts too. Equal fingerprints
// mean the same files, unchanged.
std::string publish_fingerprint(const Scan& scan);
// The plan of a push whose every publishable entry the repo already holds (see
// RemoteSnapshot::in_sync): nothing to upload, every entry present.
PushPlan plan_already_pushed(const Scan& scan);

// Lists the repo for the version directories the scan found (one listing each).
std::vector<storage::RepoFile> list_remote_for(storage::Repository& repo, const Scan& scan);
// Fills in the digests the repo's listing (or a snapshot of it) left out for the files a
// push compares, those of the same size locally (see Repository::complete_digests); the
// files the repo can no longer serve leave `remote`, so they are pushed again.
void complete_remote_digests(storage::Repository& repo, std::vector<storage::RepoFile>& remote, const Scan& scan);
// The version directories a push compares (those with publishable entries).
std::set<std::string> publishable_versions(const Scan& scan);

// What the repo held below some version directories at one revision, remembered across
// runs outside the cache root: while the repo's head has not moved, a push plans from it
// instead of listing the repo again (a no-op re-push costs two small requests). Anything
// unreadable, or another revision, means "not known": the repo is listed.
class RemoteSnapshot {
public:
  RemoteSnapshot() = default; // remembers nothing
  explicit RemoteSnapshot(std::filesystem::path file);
  // ${XDG_CACHE_HOME:-~/.cache}/neuron-cache/remote-<hash of root and repo>.tsv
  static std::filesystem::path default_path(const std::filesystem::path& cache_root, std::string_view repo_spec,
                                            const util::Environment& env);

  // The files below `versions` at `revision`, when this snapshot covers them.
  std::optional<std::vector<storage::RepoFile>> files(const std::optional<std::string>& revision,
                                                      const std::set<std::string>& versions) const;
  // Remembers the files below `versions` at `revision` (atomically; failures ignored):
  // `files`, with those a commit reported adding or replacing (`committed`) taking the
  // place of the ones of the same path (no merged copy of tens of thousands of files).
  void save(const std::string& revision, const std::set<std::string>& versions,
            const std::vector<storage::RepoFile>& files, const std::vector<storage::RepoFile>& committed = {});

  // True when a push of files with `local_fingerprint` (publish_fingerprint) left the repo
  // at `revision` holding them all: while neither moved, a push has nothing to do, and
  // knows it without reading the snapshot, the digest cache or the repo's listing.
  bool in_sync(const std::optional<std::string>& revision, const std::string& local_fingerprint) const;
  // Records that state (a small file beside the snapshot, written atomically; failures ignored).
  void mark_in_sync(const std::string& revision, const std::string& local_fingerprint);

private:
  std::filesystem::path sync_file() const;

  std::filesystem::path m_file;
};

// A push the store's commit quota stopped part way: every entry it published is whole.
struct PushStopped {
  std::size_t entries_published = 0;
  std::size_t entries_total = 0;
  std::vector<std::string> entries_left;
  std::string quota; // "128 commits per hour", empty when the store did not say
  std::chrono::seconds wait{0};
  std::chrono::system_clock::time_point retry_at;
  std::string message; // the store's own account
};

struct PushResult {
  PushPlan plan; // its uploads consumed (tens of thousands of paths): see its counts
  bool committed = false;
  std::optional<std::string> revision;
  std::vector<storage::RepoFile> committed_files; // as the commit reports them
  std::size_t commits = 0;                        // several when the store limits one commit (the Hub)
  std::optional<PushStopped> stopped;             // set when the commit quota stopped the push
};

// Uploads the plan, in one commit when the store takes it whole, else in several made of
// whole entries, registry files last; no commit at all when nothing is new. A folder that
// would hold more entries than the store allows is refused (NotSupported) before anything
// moves; a spent commit quota ends the push cleanly with PushResult::stopped. The repo's
// digests of what it uploaded go to `digests`, so the next run hashes nothing. How many
// files move at once is the repository's business (BackendOptions::max_workers).
// `planned_at`: the revision the plan was made against, when the caller read it; a plan
// with nothing to upload reports it instead of asking the repo again.
PushResult push(storage::Repository& repo, PushPlan plan, DigestCache& digests,
                const util::TransferCallback& progress = {}, const std::optional<std::string>& planned_at = {});

// A compile-cache entry as the repo holds it.
struct RepoEntry {
  EntryKind kind = EntryKind::module;
  std::string path;
  std::string compiler_version;
  std::vector<storage::RepoFile> files; // installable files (locks and temp files left out)
};

struct RepoLayout {
  std::vector<RepoEntry> entries;
  std::size_t other_files = 0; // files that are not compile-cache entries (legacy, configs)
};
// Groups a repo listing into entries; the registry of a version is one entry.
RepoLayout group_repo_files(const std::vector<storage::RepoFile>& files);
// The same, consuming the listing (its files move into the entries).
RepoLayout group_repo_files(std::vector<storage::RepoFile>&& files);

// `filter` matches the full version (2.15.128.0+56dc5a86) or a prefix of it ending at
// a '.' or '+' boundary (2.15.128.0, 2.15).
bool version_matches(std::string_view version, std::string_view filter);

struct PullOptions {
  std::optional<std::string> compiler_version;
  bool dry_run = false;
  // A complete repo entry replaces a local FAILED one (else the failure, replayed by the
  // compiler, blocks that graph forever).
  bool replace_failed = false;
  // Only these entries (repo paths such as neuronxcc-<v>/MODULE_<key>+<flags>): one
  // model's graphs; unset: every entry.
  std::optional<std::set<std::string>> only_entries = std::nullopt;
  // Files downloaded at once (at least 1).
  std::size_t workers = 8;
};

// A failure of a store itself (after the backend's retries) or a refusal (auth, no repo):
// nothing more will transfer, so a run stops instead of trying every other file.
bool stops_the_run(const std::exception_ptr& error);
std::string message_of(const std::exception_ptr& error);

// One repo entry to install, and how.
struct PullInstall {
  RepoEntry entry;
  // The files the local entry lacks; for a fresh entry every file, moved out of
  // entry.files (which is then empty).
  std::vector<storage::RepoFile> to_download;
  bool fresh = false;   // no local entry: it appears by one directory rename
  bool replace = false; // a failed local entry makes way for it
  std::uint64_t bytes = 0;
};

// What a pull would do, decided from one listing and the local tree, changing nothing.
struct PullPlan {
  std::vector<PullInstall> installs;
  std::vector<std::string> entries_present;
  std::vector<Skipped> skipped; // by design (locked, failed in repo, differing locally, ...)
  std::size_t other_files = 0;
  std::size_t files_planned = 0;
  std::uint64_t bytes_planned = 0;
  // Every compiler version the repo holds entries of, whatever the filter: what to say
  // when options.compiler_version matches none of them.
  std::set<std::string> compiler_versions;
};

struct PullReport {
  std::vector<std::string> entries_pulled;
  std::vector<std::string> entries_present;
  std::vector<std::string> entries_replaced; // failed local entries replaced (also in entries_pulled)
  std::vector<Skipped> skipped;              // not installed, by design (locked, failed in repo, ...)
  std::vector<Skipped> errors;               // not installed because something failed
  std::size_t files_downloaded = 0;
  std::size_t files_planned = 0; // as planned, dry run or not (files_downloaded counts what landed)
  std::uint64_t bytes_downloaded = 0;
  std::uint64_t bytes_planned = 0;
  std::size_t other_files = 0;
  std::set<std::string> compiler_versions; // as in PullPlan
  // A run that stopped early (each entry it installed is whole; a re-run finishes it):
  std::size_t entries_planned = 0; // entries it set out to install
  bool no_space = false;           // the file system filled up: the first ENOSPC ended it
  int interrupted_by = 0;          // the signal (SIGINT, SIGTERM, SIGHUP) that ended it
};

// Lists the repo once and decides, entry by entry, what to install. Throws IoError when
// the root exists and is not a directory.
PullPlan plan_pull(storage::Repository& repo, const std::filesystem::path& root, DigestCache& digests,
                   const PullOptions& options);
// The same from a listing already made.
PullPlan plan_pull(const std::vector<storage::RepoFile>& listing, const std::filesystem::path& root,
                   DigestCache& digests, const PullOptions& options);
// The same, consuming the listing as it is grouped.
PullPlan plan_pull(std::vector<storage::RepoFile>&& listing, const std::filesystem::path& root, DigestCache& digests,
                   const PullOptions& options);

// Installs a plan's entries into the cache root, `options.workers` files at a time over
// the one repository (whose reads are thread-safe). Each file is downloaded and verified
// by the backend into a staging directory in the root; the worker that lands an entry's
// last file checks the entry and moves it in: a new entry by one directory rename, an
// existing partial one file by file with model.done last. A kill at any moment leaves
// either no entry or one without its done marker that a re-run completes; staging left
// by dead processes is swept on the next run. A file that fails leaves its entry out
// (reported in `errors`); a failure of the remote itself (after the backend's retries)
// stops the run: no new download starts, and the entries it leaves out are reported too.
PullReport apply_pull(storage::Repository& repo, const std::filesystem::path& root, PullPlan plan, DigestCache& digests,
                      const PullOptions& options, const util::TransferCallback& progress = {});

// plan_pull, then (unless options.dry_run) apply_pull.
PullReport pull(storage::Repository& repo, const std::filesystem::path& root, DigestCache& digests,
                const PullOptions& options, const util::TransferCallback& progress = {});

} // namespace hubcache::compilecache
