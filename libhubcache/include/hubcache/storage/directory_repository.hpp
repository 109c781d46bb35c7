#pragma once

#include "hubcache/storage/repository.hpp"
#include "hubcache/util/fd.hpp"
#include "hubcache/util/hash.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <sys/stat.h>

namespace hubcache::storage {

namespace detail {
class DirectoryIndex;
class DirectoryCommit;
} // namespace detail

// A cache repo that is a plain Neuron compile cache in a directory (local disk, NFS, FSx
// for Lustre): the compiler can use it directly (NEURON_COMPILE_CACHE_URL=/fsx/repo) and
// `ls` shows what is there.
//
// Layout:
//   neuronxcc-<ver>/MODULE_<key>+<flags>/...   the compiler's own layout, nothing added
//   neuronxcc-<ver>/MODULE_<hash>/...          exported models
//   neuronxcc-<ver>/0_REGISTRY/...             optimum registry
//   .neuron-cache/repo.json                    marker: this directory is a cache repo
//   .neuron-cache/staging/w.tmp.nc.<host>.<pid>.<random>/   one writer's staging
//   .neuron-cache/index/<hash>.tsv             sha256 of files, keyed by their stat stamp
//
// Publishing (no lock, safe with writers on several hosts of an NFS/Lustre mount):
// - a new entry directory is staged whole, then appears by one rename that never replaces
//   (so two writers of one entry never nest or mix directories);
// - an existing entry is completed file by file, model.neff then model.done last; a file
//   that differs is replaced by one rename, so readers see one copy or the other;
// - registry files are published after the entries of the same commit.
// A killed writer leaves only its staging folder, removed by the next writer on any host
// once the writer is provably gone: its pid is dead or reused in the same pid namespace of
// the same boot (util/temp_owner.hpp), or, when that cannot be known (another host, another
// container), it is older than `stale_staging_age`.
//
// Nothing below the root is followed: the private folders are opened with O_NOFOLLOW and a
// link on the way to anything we write or remove is refused (util/nofollow.hpp).
//
// The index only saves hashing: a record is used only when the file's size, mtime, ctime
// and inode still match, so it can never describe content the file no longer has.
class DirectoryRepository final : public Repository {
public:
  explicit DirectoryRepository(std::filesystem::path root);
  ~DirectoryRepository() override;

  std::string spec() const override;
  std::string describe() const override;
  bool exists() override;
  std::string create(const RepoCreateOptions& options) override;
  // A content-derived token: sha1 over every file's path and stat stamp (size, mtime,
  // ctime, inode), so any change to a file, even in place, moves it.
  std::optional<std::string> revision() override;
  // Sizes, and the sha256 of the files the index knows: a listing reads no file (see
  // complete_digests). Items the repo does not serve are left out and noted (take_skipped).
  std::vector<RepoFile> list_files(std::string_view prefix = {}) override;
  std::vector<std::string> list_folders(std::string_view prefix = {}) override;
  std::optional<RepoFile> stat(std::string_view path) override;
  std::string read_file(std::string_view path) override;
  void download_file(std::string_view path, const std::filesystem::path& destination,
                     const util::ProgressCallback& progress = {}, bool flush = true) override;
  util::FileDigests download_listed(const RepoFile& listed, const std::filesystem::path& destination,
                                    const util::ProgressCallback& progress = {}, bool flush = true) override;
  std::vector<std::string> complete_digests(const std::vector<RepoFile*>& files) override;
  void check_writable() override;
  CommitResult commit(const CommitRequest& request, const util::ProgressCallback& progress = {}) override;

  const std::filesystem::path& root() const { return m_root; }

  // What the repo serves: regular files (and links to one inside the repo) no larger than
  // this, neither sparse nor unreadable; anything else is skipped with a warning. A sanity
  // bound, so that nothing ever reads a terabyte ($NEURON_CACHE_MAX_FILE_SIZE).
  static constexpr std::uint64_t k_default_max_file_size = std::uint64_t{64} << 30;
  std::uint64_t max_file_size = k_default_max_file_size;

  // Removes the staging folders of writers that are provably gone; returns how many.
  // Only names of our own writer-folder form are ever removed, through a descriptor of
  // the staging folder opened without following links.
  std::size_t sweep_stale_staging();
  std::chrono::seconds stale_staging_age = std::chrono::hours(24);

  // Test seam: called once an entry is staged whole, just before it is renamed into
  // place. Lets tests kill or race a writer at the worst moment.
  std::function<void(const std::string& entry)> before_publish_hook;

  // The hidden folder's name, skipped by listings and by compile-cache scans.
  static constexpr std::string_view k_hidden_dir = ".neuron-cache";

private:
  friend class detail::DirectoryCommit; // directory_publish.cpp: a commit's staging and publishing

  std::filesystem::path hidden_dir() const;
  std::filesystem::path marker_path() const;
  std::filesystem::path staging_dir() const;
  // `.neuron-cache/<name>`, opened (made with `create`) without following a link on the
  // way; util::LinkOnTheWay when one is there.
  util::Fd private_dir(std::string_view name, bool create) const;
  // Makes the folders that hold `path_in_repo` as real directories, refusing a link on
  // the way (util::LinkOnTheWay): a commit never writes outside the repo.
  void make_parent_directories(std::string_view path_in_repo) const;
  void require_repo();
  // Visits every file the repo serves below `relative` (repo-relative path, its stat),
  // never following a link but an alias to a file inside the repo; what it does not serve
  // is noted (take_skipped) when `report_skips`. Calls of `visit` never overlap, but may
  // come from several threads, in no set order.
  using FileVisitor = std::function<void(std::string&& path, const struct ::stat& status)>;
  void walk(const std::string& relative, const FileVisitor& visit, bool report_skips = false);
  // An existing file a commit replaces or compares with: its stat, or nullopt when there
  // is none (an item the repo does not serve there is removed: the commit's file replaces it).
  std::optional<struct ::stat> existing_file(const std::string& path);
  // Copies `path` to `destination`, checked against `listed` when given; returns the
  // sha256 of the bytes written.
  util::Sha256Bytes copy_out(std::string_view path, const RepoFile* listed, const std::filesystem::path& destination,
                             const util::ProgressCallback& progress, bool flush);

  std::filesystem::path m_root;
  // Reads may run on several threads (storage/repository.hpp): the index is shared, used
  // only under m_index_mutex (storage/directory_index.hpp).
  std::mutex m_index_mutex;
  std::unique_ptr<detail::DirectoryIndex> m_index;
};

} // namespace hubcache::storage
