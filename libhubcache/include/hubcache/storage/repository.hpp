#pragma once

#include "hubcache/error.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/progress.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hubcache::storage {

// One file of a cache repo. Hashes are lowercase hex and empty when the backend does
// not know them (the Hub knows sha256 only for LFS files, the git blob sha1 always).
struct RepoFile {
  std::string path; // relative, '/'-separated
  std::uint64_t size = 0;
  std::string sha256 = {};
  std::string git_blob_sha1 = {};
  // A content checksum in the form of an S3 ETag, for stores whose listing gives no sha256:
  // the MD5 of the bytes, or for content uploaded in N parts md5(part MD5s) + "-N" (see
  // util::multipart_etag); or an opaque tag the store gave (objects encrypted with a
  // managed key). Empty when the store gives none.
  std::string etag = {};
  // When the file last changed, in seconds since the epoch, by the store's own clock (a
  // directory's mtime, S3's LastModified); 0 when the listing does not say (the Hub's).
  std::int64_t modified = 0;
};

// Content to add: a local file (streamed, never held in memory whole) or bytes. A file is
// named by its whole path, or, when it is <directory>/<path in repo> (a push mirrors a
// local tree 1:1), by that directory alone, shared by every such addition: a push may carry
// tens of thousands of additions, each of which would otherwise hold a full path. Paths are
// plain strings: a std::filesystem::path also keeps a list of its components.
class FileSource {
public:
  static FileSource from_file(const std::filesystem::path& path) { return FileSource(true, path.native()); }
  static FileSource from_file(std::string path) { return FileSource(true, std::move(path)); }
  static FileSource from_file(const char* path) { return FileSource(true, path); }
  static FileSource in_directory(std::shared_ptr<const std::string> directory)
  {
    FileSource source(true, {});
    source.m_directory = std::move(directory);
    return source;
  }
  static FileSource from_bytes(std::string bytes) { return FileSource(false, std::move(bytes)); }

  bool is_file() const { return m_is_file; }
  // The local file holding the content of `path_in_repo` (the addition's); only when is_file().
  std::string file_for(std::string_view path_in_repo) const;
  // The content; only when !is_file().
  const std::string& bytes() const { return m_data; }
  // The path given to from_file, handed back to a caller that lent it (the source is left
  // empty); empty for a source in_directory.
  std::string take() { return std::move(m_data); }

private:
  FileSource(bool is_file, std::string data) : m_is_file(is_file), m_data(std::move(data)) {}
  bool m_is_file = false;
  std::string m_data;
  std::shared_ptr<const std::string> m_directory; // set: the file is <directory>/<path in repo>
};

struct Addition {
  std::string path_in_repo;
  FileSource source;
  // The content's digests when the caller already knows them (a scan, a digest cache):
  // backends use them instead of reading the file once more to hash it. A pointer, not an
  // optional: a commit may carry tens of thousands of additions, most without.
  std::shared_ptr<const util::FileDigests> digests = nullptr;
};

struct Deletion {
  std::string path_in_repo;
  bool is_folder = false; // delete everything below path_in_repo/
};

// Where one file of a request belongs when a backend has to land the request in several
// commits (the Hub's commit limits): files of one unit always land in the same commit, and
// units land in order of (stage, key).
struct CommitUnit {
  std::string key;
  int stage = 0; // a higher stage (an index describing the others) lands after every lower one
};

struct CommitRequest {
  std::string message;
  std::string description;
  std::vector<Addition> additions;
  std::vector<Deletion> deletions;
  // When set, the commit must apply on top of this revision: a backend reports a
  // ConflictError instead of silently re-basing.
  std::optional<std::string> parent_revision;
  // The unit of each addition (see CommitUnit). Unset: every file is a unit of stage 0.
  std::function<CommitUnit(std::string_view path_in_repo)> unit_of = nullptr;
};

struct CommitResult {
  std::string revision; // the new head; unchanged head when nothing had to change
  bool created = false; // false when every addition was already present
  std::size_t files_added = 0;
  std::size_t files_deleted = 0;
  // Every addition as the repo now holds it, with the digests the backend knows: callers
  // learn what they pushed without listing the repo again.
  std::vector<RepoFile> files = {};
  std::size_t commits = 0; // commits it took (several when the store limits one commit's size)
  // Hub pushes through Xet: chunk bytes uploaded, and chunk bytes found earlier in the push.
  std::uint64_t xet_new_bytes = 0;
  std::uint64_t xet_deduplicated_bytes = 0;
  std::vector<std::string> warnings = {}; // e.g. a Xet failure the push recovered from (LFS)
  std::uint64_t xet_stored_bytes = 0;     // chunk bytes the Xet CAS already held (global dedup)
};

// The store's commit quota stopped a request part way: every commit it made is complete
// (whole units, in order), the rest was not sent. Running the request again later resumes.
class CommitQuotaReached : public RemoteError {
public:
  CommitQuotaReached(const std::string& message, std::string quota, std::chrono::seconds retry_after,
                     std::size_t commits_made, std::vector<std::string> remaining_paths)
    : RemoteError(message, "run the command again later: it resumes from what the repo holds"),
      m_quota(std::move(quota)), m_retry_after(retry_after), m_commits_made(commits_made),
      m_remaining(std::move(remaining_paths))
  {}
  // "128 commits per hour", or empty when the store did not say.
  const std::string& quota() const noexcept { return m_quota; }
  std::chrono::seconds retry_after() const noexcept { return m_retry_after; }
  std::size_t commits_made() const noexcept { return m_commits_made; }
  // The additions not committed, by path in repo.
  const std::vector<std::string>& remaining_paths() const noexcept { return m_remaining; }

private:
  std::string m_quota;
  std::chrono::seconds m_retry_after;
  std::size_t m_commits_made;
  std::vector<std::string> m_remaining;
};

// An interrupt (SIGINT, SIGTERM, SIGHUP while a util::InterruptScope lives) stopped a
// request at its next safe point: as with CommitQuotaReached, what landed is whole units in
// order (the commit or batch in flight finished first), the rest was not published, and no
// staging is left. Running the request again finishes it.
class CommitInterrupted : public Interrupted {
public:
  CommitInterrupted(int signal, std::size_t commits_made, std::vector<std::string> remaining_paths)
    : Interrupted("interrupted", "run the same command to finish"), m_signal(signal), m_commits_made(commits_made),
      m_remaining(std::move(remaining_paths))
  {}
  int signal() const noexcept { return m_signal; }
  std::size_t commits_made() const noexcept { return m_commits_made; }
  // The additions not published, by path in repo.
  const std::vector<std::string>& remaining_paths() const noexcept { return m_remaining; }

private:
  int m_signal;
  std::size_t m_commits_made;
  std::vector<std::string> m_remaining;
};

// The signal that asked this run to stop (util::interrupt_signal), or 0: a backend's
// commit checks it between commits or batches, never inside one.
int commit_stop_signal() noexcept;

// An item a store's listing left out, and why.
struct SkippedPath {
  std::string path;   // as the store names it: any byte but NUL (escape it to print it)
  std::string reason; // "is a FIFO", ...; empty: not a path that can be installed safely
};

struct RepoCreateOptions {
  bool is_private = true;
  bool exist_ok = false;
};

// "A cache repo": the one interface every backend implements, whatever the storage.
//
// Threads: the reading calls (spec, describe, exists, revision, list_files, list_folders,
// stat, read_file, download_file) may run from several threads at once on one object, so
// parallel transfers share one repository (and its connections). create, check_writable
// and commit must not overlap with any other call on the same object; a backend may
// parallelize inside them (the Hub backend hashes and uploads several files at a time).
// A commit quota as a repeated writer keeps to it: up to `burst` commits at once, then one
// every `interval` on average (a token bucket). With the Hub's 128 an hour, a burst of 8 and
// one every 30 s never exceed 128 in any hour, and a small job does not wait at all.
struct CommitPace {
  std::chrono::milliseconds interval{0}; // zero: no quota
  std::size_t burst = 1;
};

class Repository {
public:
  virtual ~Repository() = default;

  // Canonical spec of the repo, as stored in the config file (`org/name`, `file:///abs`).
  virtual std::string spec() const = 0;
  // Human description for messages, e.g. "directory repo /data/cache".
  virtual std::string describe() const = 0;

  // True when the repo exists and is a cache repo we can read.
  virtual bool exists() = 0;
  // Makes an empty cache repo. Throws RepoAlreadyExists unless options.exist_ok.
  // Returns the canonical spec of the created repo (the Hub may add a namespace).
  virtual std::string create(const RepoCreateOptions& options) = 0;

  // The current head revision; nullopt for a repo without any commit.
  virtual std::optional<std::string> revision() = 0;
  // Every file under `prefix` (a folder path, empty for all), recursively.
  virtual std::vector<RepoFile> list_files(std::string_view prefix = {}) = 0;
  // The immediate sub-folders of the folder `prefix` (empty: the top), by name, sorted.
  // Lets a reader descend only into the folders that can hold what it looks for; the
  // default derives them from list_files(prefix), backends override it with a cheaper
  // one-level listing.
  virtual std::vector<std::string> list_folders(std::string_view prefix = {});
  // When each item below the folder `prefix` last changed (seconds since the epoch) by
  // the store's own dates: commit dates on the Hub, mtimes in a directory, LastModified
  // on S3. recursive: every file, by path; otherwise the immediate files and sub-folders,
  // a folder dated by its newest file. The default reads RepoFile::modified of a listing.
  virtual std::map<std::string, std::int64_t> item_dates(std::string_view prefix, bool recursive);
  // The file at `path`, or nullopt when it does not exist.
  virtual std::optional<RepoFile> stat(std::string_view path) = 0;
  bool file_exists(std::string_view path) { return stat(path).has_value(); }
  // Whole content of a (small) file; throws EntryNotFound when missing.
  virtual std::string read_file(std::string_view path) = 0;
  // Streams a file to `destination` through a temp file + rename, verifying its size and
  // hash; nothing is left at `destination` on failure. `flush`: the file is fsynced before
  // its rename; false when the caller makes many files durable at once (one syncfs)
  // before anything that depends on them is published.
  virtual void download_file(std::string_view path, const std::filesystem::path& destination,
                             const util::ProgressCallback& progress = {}, bool flush = true) = 0;
  // download_file for a file of a listing, checked against what the listing promised: its
  // size, and its digests where it gave some (IntegrityError otherwise, nothing left at
  // `destination`). Returns the digests of the bytes written, what a caller remembers:
  // the default knows only the listing's, which the store's own checks vouch for.
  virtual util::FileDigests download_listed(const RepoFile& listed, const std::filesystem::path& destination,
                                            const util::ProgressCallback& progress = {}, bool flush = true);
  // A listing may leave a file's digests empty where they cost a read of the whole file (a
  // directory repo states sizes; it hashes on demand): this fills them in, and the size as
  // it is now, for the few files a caller compares. Returns the paths of those it cannot
  // serve any more (gone, or no longer something a repo serves): the caller treats them
  // as not listed. The default: the listing gave all the store knows.
  virtual std::vector<std::string> complete_digests(const std::vector<RepoFile*>& files);
  // The part sizes this store's writers use when they upload a file in parts, most likely
  // first: what a multipart `RepoFile::etag` is recomputed with. Empty: the store gives
  // no such checksum.
  virtual std::vector<std::uint64_t> etag_part_sizes() const { return {}; }
  // The most entries (files and sub-folders) one folder may hold, when the store limits it
  // (the Hub: 10,000); nullopt when it does not.
  virtual std::optional<std::size_t> max_folder_entries() const { return std::nullopt; }
  // How a writer that commits repeatedly keeps to the store's commit quota (the Hub allows
  // about 128 commits an hour per repo); no pacing when the store has no commit quota.
  virtual CommitPace commit_pace() const { return {}; }
  // Items a listing left out because they are not safe to install ('..', absolute,
  // '.git', control characters, backslashes) or cannot be served (a directory repo's
  // FIFOs, links leaving it, unreadable or absurd files), noted so the caller can warn
  // about each once; returns those noted since the previous call. One odd item never
  // locks a repo.
  std::vector<SkippedPath> take_skipped();
  std::vector<std::string> take_skipped_paths(); // their paths only

  // Throws unless this caller can commit here (RepoNotFound, AuthError, IoError,
  // RemoteError), changing nothing: lets a long job refuse before it starts.
  virtual void check_writable() = 0;
  // Applies additions and deletions as one atomic commit.
  virtual CommitResult commit(const CommitRequest& request, const util::ProgressCallback& progress = {}) = 0;

protected:
  // For backends: records a listed path left out (see take_skipped), once.
  void note_skipped_path(std::string path, std::string reason = {});

private:
  std::mutex m_skipped_mutex;
  std::vector<SkippedPath> m_skipped;
};

// exists(), except that a store whose container is missing too (an S3 bucket) is "not
// yet" rather than an error: for callers about to create it, or to treat it as empty.
bool exists_yet(Repository& store);

// True when a listing gave no checksum at all for `file` (see complete_digests).
bool has_no_checksum(const RepoFile& file);
// Asks `store` for the digests its listing left out of `wanted` (files of `listing`), and
// removes from `listing` the files the store can no longer serve.
void complete_listing(Repository& store, std::vector<RepoFile>& listing, const std::vector<RepoFile*>& wanted);

// Checks a repo-relative path: no empty, '.', '..' or '.git' components, no leading '/',
// no control characters. Throws InvalidArgument.
void validate_path_in_repo(std::string_view path);
bool is_valid_path_in_repo(std::string_view path) noexcept;
// A listing prefix as a folder path: without leading and trailing '/'.
std::string folder_of_prefix(std::string_view prefix);
// The '/'-separated components of a repo path, empty ones included.
std::vector<std::string_view> path_components(std::string_view path);

} // namespace hubcache::storage
