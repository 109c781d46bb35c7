#pragma once

// The test Hub's Xet content-addressed store (CAS), without HTTP: xorbs verified against
// their hash on upload, shards verified against the stored xorbs (terms, verification
// hashes, file hash, sha256), and file reconstructions. Layout under <data>/xet:
//   xorbs/<hash>           the xorb as uploaded (any footer kept)
//   xorbs/<hash>.chunks    its chunk hashes, 32 bytes each, in order
//   files.jsonl            one line per file a shard added: {"hash", "size", "sha256",
//                          "terms": [{"xorb", "start", "end", "size"}]}, appended a shard at a time
//   dedup.jsonl            one line per chunk a global dedup query answers for: {"chunk", "xorbs"}
// The two journals are read back into memory at start: a shard of 40,000 small files costs
// two appends, not 120,000 files (the real CAS's cost does not grow with files per shard).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hubcache/xet/shard.hpp"
#include "hubcache/xet/xorb.hpp"
#include "storage.hpp"

namespace testhub {

struct XetTerm {
  std::string xorb; // hash string
  std::uint32_t chunk_start = 0;
  std::uint32_t chunk_end = 0; // exclusive
  std::uint64_t size = 0;      // unpacked bytes
};

struct XetFile {
  std::string hash; // file hash string
  std::string sha256;
  std::uint64_t size = 0;
  std::vector<XetTerm> terms;
};

class XetCas {
public:
  explicit XetCas(stdfs::path root);

  // Verifies a xorb against `hash` (chunk hashes, merkle root, limits); HubError 400 if not.
  // Returns whether it was new.
  bool put_xorb(const std::string& hash, const std::string& body);
  bool has_xorb(const std::string& hash) const;
  stdfs::path xorb_path(const std::string& hash) const;
  // Chunk layout of a stored xorb (physical offsets), for reconstruction byte ranges.
  hubcache::xet::XorbLayout xorb_layout(const std::string& hash) const;

  // Verifies a shard against the stored xorbs and records its files. Every file must carry
  // verification entries; a repo's also a sha256 (a Git repo commits it as an LFS pointer),
  // a bucket's need not (hub-buckets-and-limits.md §1.2: no sha256 for buckets). No file is
  // rebuilt: a reader that needs one whole has it rebuilt when it first asks (reconstruct).
  std::vector<XetFile> put_shard(const std::string& body, bool for_bucket = false);
  // Writes the bytes of a recorded file to `out` (atomically).
  void reconstruct(const XetFile& file, const stdfs::path& out) const;

  // Global dedup (xet_dedup.cpp): a shard with a footer whose xorb section lists the xorbs
  // holding `chunk_hash`'s chunk and their shard's others, chunk hashes HMAC'd with a key
  // of this CAS; nullopt (a 404) for a chunk no accepted shard made eligible.
  std::optional<std::string> dedup_answer(const std::string& chunk_hash) const;

  std::optional<XetFile> file(const std::string& file_hash) const;
  std::optional<std::string> file_hash_of_sha256(const std::string& sha256) const;

private:
  std::vector<hubcache::xet::MerkleHash> chunk_hashes(const std::string& xorb) const;
  // The uncompressed bytes of chunks [start, end) of a stored xorb, one chunk at a time,
  // from its file or from that file already open.
  static void read_chunks(int fd, const std::string& xorb, const hubcache::xet::XorbLayout& layout, std::uint32_t start,
                          std::uint32_t end, const std::function<void(hubcache::xet::Bytes)>& consume);
  void for_each_chunk(const std::string& xorb, const hubcache::xet::XorbLayout& layout, std::uint32_t start,
                      std::uint32_t end, const std::function<void(hubcache::xet::Bytes)>& consume) const;
  // Records a shard's files, in memory and in files.jsonl (one append).
  void record(const std::vector<XetFile>& files);
  void load_journals();
  void append_journal(const std::string& name, const std::string& lines);
  // Indexes the eligible chunks a verified shard's own xorbs hold: a file's first chunk, and
  // every chunk whose hash is 0 mod 1024 (spec `deduplication.md`).
  void index_for_dedup(const hubcache::xet::Shard& shard);
  hubcache::xet::XorbInfo xorb_info(const std::string& hash) const;

  stdfs::path m_root;
  hubcache::xet::MerkleHash m_dedup_key; // random per run, never zero
  mutable std::mutex m_mutex;            // xorb and file records are written whole, renamed into place
  // Guarded by m_mutex: files by hash, sha256 -> file hash, chunk hash -> xorbs (one per line).
  std::unordered_map<std::string, XetFile> m_files;
  std::unordered_map<std::string, std::string> m_sha256;
  std::unordered_map<std::string, std::string> m_dedup;
  // Xorb layouts (chunk headers) once read: a range is then read without the whole xorb.
  mutable std::unordered_map<std::string, hubcache::xet::XorbLayout> m_layouts;
};

} // namespace testhub
