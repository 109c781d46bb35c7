#pragma once

#include "hubcache/storage/repository.hpp"
#include "hubcache/util/environment.hpp"

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hubcache::compilecache {

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

} // namespace hubcache::compilecache
