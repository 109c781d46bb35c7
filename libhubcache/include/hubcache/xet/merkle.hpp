#pragma once

// Merkle aggregation of (hash, size) nodes into one root: the xorb hash and the file hash
// (spec `hashing.md`; xet-core `merklehash/aggregated_hashes.rs`). Not a binary tree: each
// level cuts the node list into groups of 2 to 9 where a hash's last_u64() % 4 == 0.

#include "hubcache/xet/hash.hpp"

#include <cstdint>
#include <span>

namespace hubcache::xet {

struct HashedNode {
  MerkleHash hash;
  std::uint64_t size = 0;
};

// The aggregated root of `nodes`: one node is returned as is, no node gives the all-zero
// hash.
MerkleHash aggregate_hash(std::span<const HashedNode> nodes);
// The hash of an internal node over `children`: BLAKE3 keyed with internal_node_key over
// "{hash string} : {size}\n" per child. Its size is the sum of the children's.
HashedNode merge_nodes(std::span<const HashedNode> children);
// The xorb hash of a xorb holding `chunks` (chunk hash, uncompressed size) in order.
MerkleHash xorb_hash(std::span<const HashedNode> chunks);
// The file hash of a file made of `chunks`: the aggregated root hashed again with the
// all-zero key; an empty file's is the all-zero hash.
MerkleHash file_hash(std::span<const HashedNode> chunks);

} // namespace hubcache::xet
