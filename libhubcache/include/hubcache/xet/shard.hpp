#pragma once

// Shards: the metadata of an upload (spec `shard.md`; xet-core `metadata_shard`). A 48-byte
// header, the file-info section (per file its terms, verification hashes and the sha256
// extension Git repos need), the xorb (CAS) info section (per xorb its chunks), each closed
// by a bookend, then lookup tables and a 200-byte footer, both optional: xet-core uploads
// without them (footer_size 0), the JS client with a footer, dedup answers carry both.

#include "hubcache/xet/hash.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace hubcache::xet {

inline constexpr std::size_t shard_header_size = 48;
inline constexpr std::size_t shard_record_size = 48;
inline constexpr std::size_t shard_footer_size = 200;
inline constexpr std::size_t max_shard_bytes = 64 * 1024 * 1024;
inline constexpr std::uint64_t shard_header_version = 2;
inline constexpr std::uint64_t shard_footer_version = 1;
inline constexpr std::uint32_t file_flag_with_verification = 1U << 31;
inline constexpr std::uint32_t file_flag_with_metadata_ext = 1U << 30;
// In a xorb chunk entry's flags: a chunk worth a global dedup query (a file's first chunk).
inline constexpr std::uint32_t chunk_flag_global_dedup = 1U << 31;

// The shard header's tag: "HFRepoMetaData", a zero byte, 17 magic bytes.
extern const std::array<std::uint8_t, 32> shard_header_tag;

// Chunks [chunk_start, chunk_end) of a xorb, in a file's reconstruction.
struct FileTerm {
  MerkleHash xorb_hash;
  std::uint32_t xorb_flags = 0;
  std::uint32_t unpacked_size = 0;
  std::uint32_t chunk_start = 0;
  std::uint32_t chunk_end = 0; // exclusive
};

struct FileInfo {
  MerkleHash file_hash;
  std::vector<FileTerm> terms;
  // Empty, or one verification hash per term (required on upload).
  std::vector<MerkleHash> verification;
  // The sha256 metadata extension as stored (MerkleHash::from_sha256 of the digest, so
  // that hex() is the sha256 hex); required for Git repos, absent for buckets.
  std::optional<MerkleHash> sha256;
};

struct XorbChunkInfo {
  MerkleHash hash;
  std::uint32_t byte_range_start = 0; // cumulative uncompressed offset in the xorb
  std::uint32_t size = 0;             // uncompressed
  std::uint32_t flags = 0;            // chunk_flag_global_dedup
};

struct XorbInfo {
  MerkleHash xorb_hash;
  std::uint32_t flags = 0;
  std::vector<XorbChunkInfo> chunks;
  std::uint32_t unpacked_size = 0;   // sum of the chunk sizes
  std::uint32_t serialized_size = 0; // bytes of the serialized xorb
};

struct ShardFooter {
  std::uint64_t file_info_offset = 0;
  std::uint64_t xorb_info_offset = 0;
  // file, xorb and chunk lookup tables: offset and entry count each
  std::array<std::uint64_t, 6> lookups{};
  MerkleHash chunk_hash_hmac_key; // zero: chunk hashes are plain
  std::uint64_t creation_timestamp = 0;
  std::uint64_t key_expiry = 0;
  std::uint64_t stored_bytes_on_disk = 0;
  std::uint64_t materialized_bytes = 0;
  std::uint64_t stored_bytes = 0;
  std::uint64_t footer_offset = 0;
};

struct Shard {
  std::vector<FileInfo> files;
  std::vector<XorbInfo> xorbs;
  std::optional<ShardFooter> footer;
};

// The shard's bytes. With a footer, its offsets, byte totals and lookup table entries (none)
// are computed; its key, timestamp and expiry are taken as given. As xet-core does, the
// first chunk of each file, when its xorb is in the shard, gets chunk_flag_global_dedup.
// std::invalid_argument when the shard breaks the format's rules (verification hashes not
// one per term, or present for only some files; a count past u32).
std::vector<std::uint8_t> serialize_shard(const Shard& shard);

// Parses a shard read from outside; FormatError when it is malformed, truncated, larger
// than 64 MiB, or gives verification hashes for only some files. Bytes between the xorb
// section and a footer (lookup tables) are skipped; without a footer none may follow.
Shard parse_shard(Bytes data);

} // namespace hubcache::xet
