#pragma once

#include "hubcache/compilecache/copy_records.hpp"
#include "hubcache/compilecache/sync.hpp"
#include "hubcache/compilecache/transfer_report.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/progress.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

// Copying compile-cache entries from one store to another, neither of them a local
// compile cache: an S3 cache a SageMaker job wrote to the Hub, the Hub to an S3 cache,
// one repo to another. Through the Repository interface only, so any two backends pair.
// Files pass through local scratch space a batch at a time (one commit per batch), so a
// copy of any size needs only about one batch of disk.
namespace hubcache::compilecache {

struct CopyOptions {
  std::optional<std::string> compiler_version; // version_matches() filter
  // Only these entries (repo paths such as neuronxcc-<v>/MODULE_<key>+<flags>); unset: all.
  std::optional<std::set<std::string>> only_entries = std::nullopt;
  std::size_t workers = 8;              // files downloaded at once (the target's commit has its own)
  std::filesystem::path scratch_parent; // where batches are staged; empty: /tmp
  std::uint64_t batch_bytes = std::uint64_t{2} << 30;
  std::size_t batch_files = 2000;
  std::string commit_message = std::string(k_commit_message);
  // Where files both stores hold with no checksum in common are compared (and what the
  // copy puts at the target is recorded); none: by size.
  CopyRecords* records = nullptr;
};

// One source entry to copy, and the files of it the target lacks.
struct CopyItem {
  RepoEntry entry;
  std::vector<storage::RepoFile> to_copy;
  std::uint64_t bytes = 0;
};

struct CopyPlan {
  std::vector<CopyItem> copies; // compiled graphs first, registries last (they describe them)
  std::vector<std::string> entries_present;
  std::vector<Skipped> skipped; // by design: failed or incomplete at the source, differing at the target
  std::size_t other_files = 0;  // source files that are not compile-cache entries
  std::size_t files_planned = 0;
  std::uint64_t bytes_planned = 0;
  // Every compiler version the source holds, whatever the filter (PullPlan's twin).
  std::set<std::string> compiler_versions;
};

// Lists both stores below the source's version directories and decides, entry by entry,
// what to copy: complete module entries (a failed or incomplete one is skipped), exported
// models and registries, file by file. An entry the target holds complete with other
// content is left alone (a compiler may be reading it); a partial one is completed.
// Contents are compared by whatever digest both stores give (sha256, git blob sha1, or
// two ETags that are equal or both MD5s), else through options.records, else by size. A
// target that does not exist yet counts as empty.
CopyPlan plan_copy(storage::Repository& source, storage::Repository& target, const CopyOptions& options);

// Copies a plan's entries, batch after batch: each batch's files are downloaded (verified
// by the source backend) into scratch space, `options.workers` at a time, then committed
// to the target in one commit, whose backend publishes each entry's marker (model.done)
// last. An entry whose file fails to download is left out of its batch (reported in
// `errors`); a failure of either store itself stops the run after the batches already
// committed, so a re-run resumes where it stopped. SIGINT, SIGTERM or SIGHUP stop it at the
// target's next safe point (as a push: between batches, or where the target's commit
// stops), with only whole entries published, the scratch folder removed and
// TransferReport::interrupted_by set.
TransferReport apply_copy(storage::Repository& source, storage::Repository& target, CopyPlan plan,
                          const CopyOptions& options, const util::TransferCallback& progress = {});

// The report of a dry run: what `plan` would copy, nothing moved.
TransferReport dry_run_report(CopyPlan plan);
// The entries a plan copies, sized, before the plan is applied (and consumed).
std::vector<TransferEntry> transfer_entries(const CopyPlan& plan);

} // namespace hubcache::compilecache
