#pragma once

#include "hubcache/storage/repository.hpp"
#include "hubcache/util/environment.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

// What a copy between two stores remembers about the files it compared or put at the
// target (store_copy), so a later copy between the same two can tell a rewritten file.
namespace hubcache::compilecache {

// The checksums two stores gave each file an earlier copy between them found the same or
// put at the target, remembered across runs outside both stores. Stores that share no
// checksum (an S3 cache's ETags and the Hub's sha256, or a directory repo's) are compared
// through them: while the target still holds what was recorded, a source file whose
// checksum moved was rewritten and differs. A file no copy on this host has seen is
// compared by size (and recorded). A missing or corrupt file is an empty record.
class CopyRecords {
public:
  CopyRecords() = default; // remembers for this run only
  explicit CopyRecords(std::filesystem::path file);
  // ${XDG_CACHE_HOME:-~/.cache}/neuron-cache/copies-<hash of both specs>.tsv
  static std::filesystem::path default_path(std::string_view source_spec, std::string_view target_spec,
                                            const util::Environment& env);

  // Whether `source` still has the content recorded beside `target`'s; nullopt when no
  // record describes the target's file as it is now.
  std::optional<bool> same(const storage::RepoFile& source, const storage::RepoFile& target) const;
  void remember(const storage::RepoFile& source, const storage::RepoFile& target);
  // Writes the records (atomically); failures are ignored: it is a cache.
  void save();

private:
  struct Checksums {
    std::string sha256;
    std::string git_blob_sha1;
    std::string etag;
  };
  struct Record {
    std::uint64_t size = 0;
    Checksums source;
    Checksums target;
  };
  // True or false when the two name a checksum in common, else nullopt.
  static std::optional<bool> agree(const Checksums& recorded, const storage::RepoFile& file);
  std::filesystem::path m_file;
  std::unordered_map<std::string, Record> m_records;
  bool m_changed = false;
};

} // namespace hubcache::compilecache
