#include <hubcache/xet/chunker.hpp>
#include <hubcache/xet/merkle.hpp>

#include "xet_test_data.hpp"

#include <doctest/doctest.h>

using namespace hubcache::xet;
using xet_test::bytes_of;
using xet_test::hash_of;

TEST_SUITE_BEGIN("hubcache::xet::merkle");

namespace xet_merkle_test {

namespace {

std::vector<HashedNode> nodes_of(const std::vector<Chunk>& chunks)
{
  std::vector<HashedNode> nodes;
  for (const auto& chunk : chunks) {
    nodes.push_back({chunk.hash, chunk.size});
  }
  return nodes;
}

// A hash whose last u64 is `value` (the cut rule looks only there) and whose first byte
// is `tag`.
MerkleHash hash_with(std::uint8_t tag, std::uint64_t value)
{
  MerkleHash hash;
  hash.bytes[0] = tag;
  for (int i = 0; i < 8; ++i) {
    hash.bytes[24 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(value >> (8 * i));
  }
  return hash;
}

} // namespace

TEST_CASE("xorb and file hashes: xetchunk-wasm vectors (verified there against Rust)")
{
  auto small = nodes_of(chunk_bytes(xet_test::linear_data(200000, 7, 13)));
  REQUIRE(small.size() == 2);
  CHECK(xorb_hash(small).hex() == "f0755d96ee199d4f01e83da9fe2c38353de7fd38fb79a320a7d50be510026f74");
  CHECK(file_hash(small).hex() == "d88d9e0b760f32c90b7c6592b4cb85251c01bb797371e3c637087b96ac578723");

  auto large = nodes_of(chunk_bytes(xet_test::linear_data(1000000, 13, 37)));
  REQUIRE(large.size() == 8);
  CHECK(xorb_hash(large).hex() == "7be289d851485c40dcde52dbcf37a7823a5ef0bfcdf1ca1c5a32ad9594c71571");
  CHECK(file_hash(large).hex() == "041a50f3639f4a080a89237025d643e2a3e22935ca5d7dbc1a38f5c1e859f859");
}

TEST_CASE("empty and single inputs")
{
  CHECK(aggregate_hash({}).is_zero());
  CHECK(xorb_hash({}).is_zero());
  // An empty file's hash is all zeros, not the keyed hash of a zero root (CAS rejects that).
  CHECK(file_hash({}).is_zero());
  CHECK(keyed_hash(zero_key, MerkleHash{}.bytes).hex().substr(0, 8) != "00000000");
  HashedNode one{hash_with(1, 5), 100};
  std::vector<HashedNode> single = {one};
  CHECK(aggregate_hash(single) == one.hash);
  CHECK(file_hash(single) == keyed_hash(zero_key, one.hash.bytes));
}

TEST_CASE("internal node: BLAKE3 keyed over \"{hash string} : {size}\\n\" per child")
{
  HashedNode a{hash_with(1, 3), 65536};
  HashedNode b{hash_with(2, 7), 0};
  std::vector<HashedNode> children = {a, b};
  std::string text = a.hash.hex() + " : 65536\n" + b.hash.hex() + " : 0\n";
  auto merged = merge_nodes(children);
  CHECK(merged.hash == keyed_hash(internal_node_key, bytes_of(text)));
  CHECK(merged.size == 65536);
  // Two nodes make one group whatever their hashes.
  CHECK(aggregate_hash(children) == merged.hash);
}

TEST_CASE("groups: cut after index >= 2 when last u64 % 4 == 0, else at 9 nodes")
{
  // 12 nodes, none divisible by 4: groups of 9 and 3, then those two merge.
  std::vector<HashedNode> nodes;
  for (std::uint8_t i = 0; i < 12; ++i) {
    nodes.push_back({hash_with(i, 1), i});
  }
  auto first = merge_nodes(std::span(nodes).first(9));
  auto second = merge_nodes(std::span(nodes).subspan(9));
  std::vector<HashedNode> level = {first, second};
  CHECK(aggregate_hash(nodes) == merge_nodes(level).hash);

  // Node 1 divisible by 4 does not cut (index < 2); node 3 does: groups [0..3], [4..6].
  nodes.resize(7);
  nodes[1].hash = hash_with(1, 8);
  nodes[3].hash = hash_with(3, 4);
  first = merge_nodes(std::span(nodes).first(4));
  second = merge_nodes(std::span(nodes).subspan(4));
  level = {first, second};
  CHECK(aggregate_hash(nodes) == merge_nodes(level).hash);
}

TEST_CASE("a file hash over many chunks builds several levels")
{
  auto nodes = nodes_of(chunk_bytes(xet_test::splitmix64_data(6 * 1024 * 1024, 11)));
  REQUIRE(nodes.size() > 81);
  auto root = aggregate_hash(nodes);
  CHECK(xorb_hash(nodes) == root);
  CHECK(file_hash(nodes) == keyed_hash(zero_key, root.bytes));
  // Order matters.
  std::swap(nodes[0], nodes[1]);
  CHECK(aggregate_hash(nodes) != root);
}

TEST_SUITE_END();

} // namespace xet_merkle_test
