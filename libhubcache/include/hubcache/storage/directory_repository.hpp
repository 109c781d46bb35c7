#pragma once

#include "hubcache/storage/repository.hpp"

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace hubcache::storage {

// A cache repo that is a plain directory (local disk, NFS, FSx for Lustre).
//
// Layout:
//   neuron-cache-repo.json   marker: this directory is a cache repo
//   objects/ab/<sha256>      file contents, content-addressed and immutable
//   commits/<sequence>       immutable commit records; the highest sequence is the head
//   HEAD                     hint "<sequence> <id>" so readers need not list commits/
//
// A commit writes its objects and its manifest (the full tree, itself an object), then
// claims the next sequence number with link(2), which is atomic on NFS and fails if
// another writer claimed it first; the loser re-applies its changes on the new head and
// tries the next number. Readers only ever see complete commits, no lock is needed, and
// concurrent writers all land.
class DirectoryRepository final : public Repository {
public:
  explicit DirectoryRepository(std::filesystem::path root);

  std::string spec() const override;
  std::string describe() const override;
  bool exists() override;
  std::string create(const RepoCreateOptions& options) override;
  std::optional<std::string> revision() override;
  std::vector<RepoFile> list_files(std::string_view prefix = {}) override;
  std::optional<RepoFile> stat(std::string_view path) override;
  std::string read_file(std::string_view path) override;
  void download_file(std::string_view path, const std::filesystem::path& destination,
                     const util::ProgressCallback& progress = {}) override;
  void check_writable() override;
  CommitResult commit(const CommitRequest& request, const util::ProgressCallback& progress = {}) override;

  const std::filesystem::path& root() const { return m_root; }

  // Removes temp files that writers killed mid-write left in objects/ and commits/.
  // Only files older than `min_age` go: a younger one may belong to a live writer on
  // another host. Commits call it now and then; returns the number removed.
  std::size_t sweep_stale_temp_files(std::chrono::seconds min_age = std::chrono::hours(24));

  // A manifest entry: where a path's content lives.
  struct ManifestEntry {
    std::string sha256;
    std::uint64_t size = 0;
  };
  using Manifest = std::map<std::string, ManifestEntry, std::less<>>;

  // Test seam: called after the objects and the commit record are written, just before
  // the record is published. Lets tests kill or race a writer at the worst moment.
  std::function<void()> before_publish_hook;

private:
  struct Head {
    std::uint64_t sequence = 0;
    std::string id;
    std::string manifest_sha256;
    std::shared_ptr<const Manifest> manifest;
  };

  std::filesystem::path marker_path() const;
  std::filesystem::path object_path(std::string_view sha256) const;
  std::filesystem::path commit_path(std::uint64_t sequence) const;
  void require_repo();
  Head load_head();
  std::uint64_t find_head_sequence();
  std::shared_ptr<const Manifest> load_manifest(const std::string& sha256);
  ManifestEntry store_object(const FileSource& source);
  std::string store_manifest(const Manifest& manifest);
  const ManifestEntry& lookup(const Head& head, std::string_view path);

  std::filesystem::path m_root;
  std::mutex m_head_mutex;           // readers may run on several threads
  std::optional<Head> m_cached_head; // last head read; revalidated on every call
};

std::string serialize_manifest(const DirectoryRepository::Manifest& manifest);
DirectoryRepository::Manifest parse_manifest(std::string_view text);

} // namespace hubcache::storage
