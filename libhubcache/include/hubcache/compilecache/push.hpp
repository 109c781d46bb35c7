#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/compilecache/digest_cache.hpp"
#include "hubcache/compilecache/transfer_report.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/file_stamp.hpp"
#include "hubcache/util/progress.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

// A push: what the repo lacks of a scanned compile cache (plan), and its upload (apply).
namespace hubcache::compilecache {

inline constexpr std::string_view k_commit_message = "Synchronizing local compiler cache.";

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

// Uploads the plan, in one commit when the store takes it whole, else in several made of
// whole entries, registry files last; no commit at all when nothing is new. A folder that
// would hold more entries than the store allows is refused (NotSupported) before anything
// moves; a spent commit quota ends the push cleanly with TransferReport::quota. The repo's
// digests of what it uploaded go to `digests`, so the next run hashes nothing. How many
// files move at once is the repository's business (BackendOptions::max_workers).
// `planned_at`: the revision the plan was made against, when the caller read it; a plan
// with nothing to upload reports it instead of asking the repo again.
TransferReport push(storage::Repository& repo, PushPlan plan, DigestCache& digests,
                    const util::TransferCallback& progress = {}, const std::optional<std::string>& planned_at = {});

// The report of a dry run (or of a push with nothing to do): what `plan` would upload.
TransferReport dry_run_report(PushPlan plan);
// The entries a plan uploads, sized, before push() consumes its uploads.
std::vector<TransferEntry> transfer_entries(const PushPlan& plan);

} // namespace hubcache::compilecache
