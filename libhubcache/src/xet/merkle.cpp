#include "hubcache/xet/merkle.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

namespace hubcache::xet {

namespace {

// Group sizes and the mean branching factor (xet-core MIN_GROUP_SIZE, MAX_GROUP_SIZE,
// AGGREGATED_HASHES_MEAN_TREE_BRANCHING_FACTOR).
constexpr std::size_t min_group_size = 2;
constexpr std::size_t max_group_size = 9;
constexpr std::uint64_t branching_factor = 4;

// How many of `nodes` form the next group (xet-core `next_merge_cut`).
std::size_t next_merge_cut(std::span<const HashedNode> nodes)
{
  if (nodes.size() <= min_group_size) {
    return nodes.size();
  }
  std::size_t end = std::min(max_group_size, nodes.size());
  for (std::size_t i = min_group_size; i < end; ++i) {
    if (nodes[i].hash.last_u64() % branching_factor == 0) {
      return i + 1;
    }
  }
  return end;
}

} // namespace

HashedNode merge_nodes(std::span<const HashedNode> children)
{
  // At most 9 children of 64 + 3 + 20 + 1 bytes: no allocation beyond the first.
  std::string text;
  text.reserve(children.size() * 88);
  std::uint64_t total = 0;
  for (const auto& child : children) {
    text += child.hash.hex();
    text += " : ";
    char digits[24];
    auto [end, error] = std::to_chars(digits, digits + sizeof digits, child.size);
    text.append(digits, end);
    text += '\n';
    total += child.size;
  }
  auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  return {keyed_hash(internal_node_key, bytes), total};
}

MerkleHash aggregate_hash(std::span<const HashedNode> nodes)
{
  if (nodes.empty()) {
    return {};
  }
  std::vector<HashedNode> level(nodes.begin(), nodes.end());
  while (level.size() > 1) {
    std::size_t written = 0;
    for (std::size_t read = 0; read < level.size();) {
      std::size_t cut = next_merge_cut(std::span(level).subspan(read));
      level[written++] = merge_nodes(std::span(level).subspan(read, cut));
      read += cut;
    }
    level.resize(written);
  }
  return level.front().hash;
}

MerkleHash xorb_hash(std::span<const HashedNode> chunks)
{
  return aggregate_hash(chunks);
}

MerkleHash file_hash(std::span<const HashedNode> chunks)
{
  if (chunks.empty()) {
    return {};
  }
  return keyed_hash(zero_key, aggregate_hash(chunks).bytes);
}

} // namespace hubcache::xet
