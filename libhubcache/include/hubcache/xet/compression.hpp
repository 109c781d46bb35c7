#pragma once

// Xorb chunk compression (spec `xorb.md`; xet-core `xorb_object/compression_scheme.rs`):
// LZ4 frames, optionally after byte grouping 4 (BG4: bytes split by position mod 4, the
// four groups concatenated), chosen per chunk the way xet-core's default `Auto` does.

#include "hubcache/xet/hash.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace hubcache::xet {

enum class CompressionScheme : std::uint8_t { none = 0, lz4 = 1, bg4_lz4 = 2 };

// LZ4 frame (64 KiB independent blocks, no checksums: lz4_flex FrameEncoder's defaults).
std::vector<std::uint8_t> lz4_compress(Bytes data);
// Decodes LZ4 frames (several may follow each other) into exactly out.size() bytes;
// FormatError when they are malformed, truncated, or decode to another size.
void lz4_decompress(Bytes frames, std::span<std::uint8_t> out);

// BG4: group k holds the bytes at positions k, k+4, ...; groups 0..2 take the remainder.
std::vector<std::uint8_t> bg4_split(Bytes data);
// The inverse; groups.size() == out.size().
void bg4_regroup(Bytes groups, std::span<std::uint8_t> out);
// Per position modulo 4, how many bytes have 0, 1, ... 8 bits set (BG4Predictor's input).
using BitCountHistograms = std::array<std::array<std::uint32_t, 9>, 4>;
BitCountHistograms bit_count_histograms(Bytes data);
// xet-core's BG4Predictor: BG4 when the per-position byte popcount distributions differ
// (maximum KL divergence from their sum > 0.02).
bool bg4_recommended(Bytes data);

struct CompressedChunk {
  CompressionScheme scheme = CompressionScheme::none;
  std::vector<std::uint8_t> bytes; // empty for `none`: the chunk's own bytes are stored
};
// xet-core `serialize_chunk` with CompressionScheme::Auto: BG4+LZ4 when recommended, else
// LZ4; stored uncompressed when that is not smaller.
CompressedChunk compress_chunk(Bytes data);
// Decodes a chunk's stored bytes into out (its uncompressed size, from its header).
void decompress_chunk(CompressionScheme scheme, Bytes stored, std::span<std::uint8_t> out);

} // namespace hubcache::xet
