#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/environment.hpp"
#include "hubcache/util/file_stamp.hpp"
#include "hubcache/util/hash.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

// What neuron-cache remembers of the digests of local files, and comparing a local file
// with a repo's copy by whatever digest the store gives.
namespace hubcache::compilecache {

using util::FileStamp;
using util::stamp_of;

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
  EtagMatch match_xet_hash(const std::string& key, const std::filesystem::path& file, const FileStamp& stamp,
                           const std::string& etag);
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
// backend gives (sha256, else the git blob sha1, else an S3 ETag or a bucket's Xet hash:
// see DigestCache::match_etag); size alone when it gives none, or an ETag that cannot be
// reproduced. `root`: what local.path is relative to, when local.source is empty.
bool same_content(const storage::RepoFile& remote, const LocalFile& local, DigestCache& digests,
                  std::string_view root = {});

} // namespace hubcache::compilecache
