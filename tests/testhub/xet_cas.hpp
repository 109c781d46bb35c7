#pragma once

// The test Hub's Xet content-addressed store (CAS), without HTTP: xorbs verified against
// their hash on upload, shards verified against the stored xorbs (terms, verification
// hashes, file hash, sha256), and file reconstructions. Layout under <data>/xet:
//   xorbs/<hash>           the xorb as uploaded (any footer kept)
//   xorbs/<hash>.chunks    its chunk hashes, 32 bytes each, in order
//   files/<file hash>.json {"size", "sha256", "terms": [{"xorb", "start", "end", "size"}]}
//   sha256/<sha256>        the file hash a sha256 maps to
//   dedup/<chunk hash>     the xorbs a global dedup query for that chunk answers with

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
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

// A file a verified shard added: its bytes reconstructed into `content` (a temp file the
// caller moves into the repo's LFS store, the "bridge" for non-Xet readers).
struct XetShardFile {
  XetFile file;
  stdfs::path content;
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
  // verification entries and a sha256 (a Git repo commits it as an LFS pointer).
  std::vector<XetShardFile> put_shard(const std::string& body, const stdfs::path& temp_dir);

  // Global dedup (xet_dedup.cpp): a shard with a footer whose xorb section lists the xorbs
  // holding `chunk_hash`'s chunk and their shard's others, chunk hashes HMAC'd with a key
  // of this CAS; nullopt (a 404) for a chunk no accepted shard made eligible.
  std::optional<std::string> dedup_answer(const std::string& chunk_hash) const;

  std::optional<XetFile> file(const std::string& file_hash) const;
  std::optional<std::string> file_hash_of_sha256(const std::string& sha256) const;

private:
  std::vector<hubcache::xet::MerkleHash> chunk_hashes(const std::string& xorb) const;
  void record(const XetFile& file);
  // Indexes the eligible chunks a verified shard's own xorbs hold: a file's first chunk, and
  // every chunk whose hash is 0 mod 1024 (spec `deduplication.md`).
  void index_for_dedup(const hubcache::xet::Shard& shard);
  hubcache::xet::XorbInfo xorb_info(const std::string& hash) const;

  stdfs::path m_root;
  hubcache::xet::MerkleHash m_dedup_key; // random per run, never zero
  mutable std::mutex m_mutex;            // xorb and file records are written whole, renamed into place
};

} // namespace testhub
