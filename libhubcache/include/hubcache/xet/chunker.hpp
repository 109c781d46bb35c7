#pragma once

// Xet content-defined chunking (spec `chunking.md`; xet-core `deduplication/chunking.rs`):
// a gear rolling hash over the bytes, a boundary where its top 16 bits are zero, chunks of
// 8 KiB to 128 KiB (64 KiB on average past the minimum). Streaming: blocks of any size go
// in, chunks come out with their hash; at most one chunk (128 KiB) is held in memory.

#include "hubcache/xet/hash.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace hubcache::xet {

inline constexpr std::size_t target_chunk_size = 64 * 1024;
inline constexpr std::size_t min_chunk_size = target_chunk_size / 8;
inline constexpr std::size_t max_chunk_size = target_chunk_size * 2;
// (target - 1) shifted to the top of the u64: the bits that must be zero at a boundary.
inline constexpr std::uint64_t boundary_mask = 0xFFFF000000000000ULL;

// The gear table (srijs/rust-gearhash DEFAULT_TABLE), one random u64 per byte value.
extern const std::array<std::uint64_t, 256> gear_table;

struct Chunk {
  MerkleHash hash;
  std::uint64_t offset = 0; // in the stream
  std::uint32_t size = 0;
};

// Gets each chunk with its bytes; the bytes are valid only during the call.
using ChunkSink = std::function<void(const Chunk&, Bytes)>;

class Chunker {
public:
  // Cuts `block`, the next bytes of the stream, and hands every chunk completed to `sink`.
  void update(Bytes block, const ChunkSink& sink);
  // Hands the last, partial chunk to `sink` (none for an empty stream) and starts over.
  void finish(const ChunkSink& sink);

private:
  // Where the current chunk ends in `data` (which follows m_pending), if it ends there.
  std::optional<std::size_t> next_boundary(Bytes data);
  void emit(Bytes bytes, const ChunkSink& sink);

  std::uint64_t m_gear = 0;
  std::uint64_t m_offset = 0;          // stream offset of the current chunk
  std::vector<std::uint8_t> m_pending; // its bytes seen in earlier blocks
};

// All chunks of an in-memory buffer.
std::vector<Chunk> chunk_bytes(Bytes data);

} // namespace hubcache::xet
