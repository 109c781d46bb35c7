#pragma once

// Xet hashes: the 32-byte MerkleHash, its string form, and the keyed BLAKE3 hashes of the
// Xet protocol (chunk, internal node, file, term verification, dedup HMAC). Spec:
// huggingface.co/docs/xet/hashing; reference xet-core `merklehash`.

#include "hubcache/error.hpp"

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hubcache::xet {

// Xet data (xorb, shard) that is malformed, truncated or beyond the protocol's limits.
class FormatError : public IntegrityError {
  using IntegrityError::IntegrityError;
};

using Bytes = std::span<const std::uint8_t>;

inline constexpr std::size_t hash_size = 32;

// A hash as its 32 raw bytes (the order BLAKE3 outputs and the binary formats store).
struct MerkleHash {
  std::array<std::uint8_t, hash_size> bytes{};

  // The Xet hash string: the bytes read as four little-endian u64, each written as 16
  // lowercase hex digits, i.e. the bytes of each 8-byte group reversed. Used in URLs, JSON
  // and merkle node text; it is NOT the plain hex of the bytes.
  std::string hex() const;
  // The inverse: exactly 64 lowercase or uppercase hex digits, else nullopt.
  static std::optional<MerkleHash> from_hex(std::string_view text) noexcept;
  // A SHA-256 digest (raw bytes) as the shard's metadata extension stores it: so that hex()
  // gives the usual sha256 hex (xet-core `Sha256::from_be_bytes`, JS `writeHashToArray`).
  static MerkleHash from_sha256(std::span<const std::uint8_t, hash_size> digest) noexcept;

  // The little-endian u64 of bytes 24..31: the value the merkle cut and the global-dedup
  // rules take modulo (xet-core `MerkleHash % u64`).
  std::uint64_t last_u64() const noexcept;
  bool is_zero() const noexcept;

  auto operator<=>(const MerkleHash&) const = default;
};

using HashKey = std::array<std::uint8_t, hash_size>;

// The protocol's BLAKE3 keys (spec `hashing.md`).
extern const HashKey data_key;          // chunk hashes
extern const HashKey internal_node_key; // merkle internal nodes
extern const HashKey verification_key;  // term verification (range) hashes
extern const HashKey zero_key;          // file hashes

// BLAKE3 in keyed mode, 32-byte output.
MerkleHash keyed_hash(const HashKey& key, Bytes data) noexcept;

// The hash of one chunk's bytes.
MerkleHash chunk_hash(Bytes chunk) noexcept;
// BLAKE3 keyed with `key`'s raw bytes over `hash`'s raw bytes: the global-dedup HMAC of a
// chunk hash with a shard footer's chunk_hash_hmac_key.
MerkleHash hmac(const MerkleHash& hash, const MerkleHash& key) noexcept;
// The verification hash of a term: over the raw bytes of its chunks' hashes, in order.
MerkleHash verification_hash(std::span<const MerkleHash> chunk_hashes) noexcept;
// A chunk that may be looked up in the global dedup index: the first chunk of a file, or
// a hash whose last_u64() is a multiple of 1024.
bool is_global_dedup_eligible(const MerkleHash& chunk, bool first_chunk_of_file) noexcept;

} // namespace hubcache::xet
