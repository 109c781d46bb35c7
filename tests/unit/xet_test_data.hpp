#pragma once

// Deterministic inputs of the Xet reference test vectors (xet-core chunking.rs tests,
// huggingface.js packages/xetchunk-wasm/tests/index.test.ts).

#include <hubcache/xet/hash.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xet_test {

// SplitMix64 bytes, each u64 little-endian (xet-core `create_random_data(n, seed)`).
inline std::vector<std::uint8_t> splitmix64_data(std::size_t size, std::uint64_t seed)
{
  std::vector<std::uint8_t> data;
  data.reserve(size + 8);
  std::uint64_t state = seed;
  while (data.size() < size) {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    for (int i = 0; i < 8; ++i) {
      data.push_back(static_cast<std::uint8_t>(z >> (8 * i)));
    }
  }
  data.resize(size);
  return data;
}

// (i * a + b) & 0xff (xetchunk-wasm `makeData`, "verified against Rust thin-wasm").
inline std::vector<std::uint8_t> linear_data(std::size_t size, std::size_t a, std::size_t b)
{
  std::vector<std::uint8_t> data(size);
  for (std::size_t i = 0; i < size; ++i) {
    data[i] = static_cast<std::uint8_t>((i * a + b) & 0xff);
  }
  return data;
}

inline hubcache::xet::MerkleHash hash_of(std::string_view hex)
{
  auto hash = hubcache::xet::MerkleHash::from_hex(hex);
  if (!hash) {
    throw std::invalid_argument("bad hash string in a test: " + std::string(hex));
  }
  return *hash;
}

inline hubcache::xet::Bytes bytes_of(std::string_view text)
{
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

} // namespace xet_test
