#include "hubcache/xet/compression.hpp"

#include <lz4frame.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

namespace hubcache::xet {

namespace {

LZ4F_preferences_t frame_preferences() noexcept
{
  LZ4F_preferences_t preferences;
  std::memset(&preferences, 0, sizeof preferences);
  preferences.frameInfo.blockSizeID = LZ4F_max64KB;
  preferences.frameInfo.blockMode = LZ4F_blockIndependent;
  return preferences;
}

struct DecompressionContextDeleter {
  void operator()(LZ4F_dctx* context) const noexcept { LZ4F_freeDecompressionContext(context); }
};
using DecompressionContext = std::unique_ptr<LZ4F_dctx, DecompressionContextDeleter>;

DecompressionContext new_decompression_context()
{
  LZ4F_dctx* context = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&context, LZ4F_VERSION))) {
    throw std::bad_alloc();
  }
  return DecompressionContext(context);
}

// The sizes of the four BG4 groups of n bytes.
std::array<std::size_t, 4> bg4_group_sizes(std::size_t n) noexcept
{
  std::size_t split = n / 4;
  std::size_t rest = n % 4;
  return {split + (rest > 0 ? 1 : 0), split + (rest > 1 ? 1 : 0), split + (rest > 2 ? 1 : 0), split};
}

} // namespace

std::vector<std::uint8_t> lz4_compress(Bytes data)
{
  auto preferences = frame_preferences();
  std::vector<std::uint8_t> out(LZ4F_compressFrameBound(data.size(), &preferences));
  std::size_t written = LZ4F_compressFrame(out.data(), out.size(), data.data(), data.size(), &preferences);
  if (LZ4F_isError(written)) {
    throw FormatError(std::string("LZ4 compression failed: ") + LZ4F_getErrorName(written));
  }
  out.resize(written);
  return out;
}

void lz4_decompress(Bytes frames, std::span<std::uint8_t> out)
{
  auto context = new_decompression_context();
  std::size_t in = 0;
  std::size_t produced = 0;
  std::size_t status = 0;
  while (in < frames.size()) {
    std::size_t source_size = frames.size() - in;
    std::size_t destination_size = out.size() - produced;
    status = LZ4F_decompress(context.get(), out.data() + produced, &destination_size, frames.data() + in, &source_size,
                             nullptr);
    if (LZ4F_isError(status)) {
      throw FormatError(std::string("corrupt LZ4 data in a xorb chunk: ") + LZ4F_getErrorName(status));
    }
    in += source_size;
    produced += destination_size;
    if (source_size == 0 && destination_size == 0) {
      // No room left for what the frame still holds: more bytes than the header says.
      throw FormatError("an LZ4 chunk decodes to more than its declared " + std::to_string(out.size()) + " bytes");
    }
  }
  if (status != 0) {
    throw FormatError("truncated LZ4 frame in a xorb chunk");
  }
  if (produced != out.size()) {
    throw FormatError("an LZ4 chunk decodes to " + std::to_string(produced) + " bytes, its header says "
                      + std::to_string(out.size()));
  }
}

std::vector<std::uint8_t> bg4_split(Bytes data)
{
  std::vector<std::uint8_t> out(data.size());
  auto sizes = bg4_group_sizes(data.size());
  std::array<std::size_t, 4> start = {0, sizes[0], sizes[0] + sizes[1], sizes[0] + sizes[1] + sizes[2]};
  for (std::size_t i = 0; i < data.size(); ++i) {
    out[start[i % 4] + i / 4] = data[i];
  }
  return out;
}

void bg4_regroup(Bytes groups, std::span<std::uint8_t> out)
{
  auto sizes = bg4_group_sizes(out.size());
  std::array<std::size_t, 4> start = {0, sizes[0], sizes[0] + sizes[1], sizes[0] + sizes[1] + sizes[2]};
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = groups[start[i % 4] + i / 4];
  }
}

BitCountHistograms bit_count_histograms(Bytes data)
{
  // Each byte adds 1 to the 7-bit field (of nine in a 64-bit word) of its bit count, in its
  // position's word: adds in registers, not increments in memory that wait on each other
  // when bytes in a row have the same count (it was a quarter of a push's CPU). A field
  // holds 127: the words are emptied into the histograms every 127 rounds of 4 bytes.
  static constexpr auto field_of = [] {
    std::array<std::uint64_t, 256> table{};
    for (unsigned byte = 0; byte < 256; ++byte) {
      table[byte] = std::uint64_t{1} << (7 * std::popcount(byte));
    }
    return table;
  }();
  constexpr std::size_t k_rounds = 127;
  BitCountHistograms histograms{};
  const auto empty_into_histograms = [&](const std::array<std::uint64_t, 4>& packed) {
    for (std::size_t group = 0; group < 4; ++group) {
      for (std::size_t bin = 0; bin < 9; ++bin) {
        histograms[group][bin] += static_cast<std::uint32_t>((packed[group] >> (7 * bin)) & 0x7F);
      }
    }
  };
  std::size_t i = 0;
  while (i + 4 <= data.size()) {
    std::array<std::uint64_t, 4> packed{};
    const auto end = i + 4 * std::min(k_rounds, (data.size() - i) / 4);
    for (; i < end; i += 4) {
      packed[0] += field_of[data[i]];
      packed[1] += field_of[data[i + 1]];
      packed[2] += field_of[data[i + 2]];
      packed[3] += field_of[data[i + 3]];
    }
    empty_into_histograms(packed);
  }
  for (; i < data.size(); ++i) {
    ++histograms[i % 4][static_cast<std::size_t>(std::popcount(data[i]))];
  }
  return histograms;
}

bool bg4_recommended(Bytes data)
{
  // Per position modulo 4, how many bytes have 0..8 bits set.
  const auto histograms = bit_count_histograms(data);
  // A base count of 1 keeps every probability of the sum above zero.
  std::array<std::uint32_t, 9> base_counts;
  base_counts.fill(1);
  std::array<std::uint32_t, 4> totals{};
  std::uint32_t base_total = 0;
  for (std::size_t group = 0; group < 4; ++group) {
    for (std::size_t bin = 0; bin < 9; ++bin) {
      base_counts[bin] += histograms[group][bin];
      totals[group] += histograms[group][bin];
    }
    base_total += totals[group];
  }
  double max_divergence = 0;
  for (std::size_t group = 0; group < 4; ++group) {
    // xet-core computes p·ln(p/q) with p = 0 too: 0·(-inf) = NaN, and f64::max ignores a
    // NaN, so a group with an empty bin (or no bytes) never counts. Same choice here.
    const auto& histogram = histograms[group];
    if (std::find(histogram.begin(), histogram.end(), 0U) != histogram.end()) {
      continue;
    }
    double divergence = 0;
    for (std::size_t bin = 0; bin < 9; ++bin) {
      double p = static_cast<double>(histogram[bin]) / static_cast<double>(totals[group]);
      double q = static_cast<double>(base_counts[bin]) / static_cast<double>(base_total);
      divergence += p * std::log(p / q);
    }
    max_divergence = std::max(max_divergence, divergence);
  }
  return max_divergence > 0.02;
}

CompressedChunk compress_chunk(Bytes data)
{
  CompressedChunk chunk;
  if (bg4_recommended(data)) {
    chunk.scheme = CompressionScheme::bg4_lz4;
    chunk.bytes = lz4_compress(bg4_split(data));
  } else {
    chunk.scheme = CompressionScheme::lz4;
    chunk.bytes = lz4_compress(data);
  }
  if (chunk.bytes.size() >= data.size()) {
    chunk.scheme = CompressionScheme::none;
    chunk.bytes.clear();
  }
  return chunk;
}

void decompress_chunk(CompressionScheme scheme, Bytes stored, std::span<std::uint8_t> out)
{
  switch (scheme) {
  case CompressionScheme::none:
    if (stored.size() != out.size()) {
      throw FormatError("an uncompressed xorb chunk holds " + std::to_string(stored.size()) + " bytes, its header says "
                        + std::to_string(out.size()));
    }
    std::copy(stored.begin(), stored.end(), out.begin());
    return;
  case CompressionScheme::lz4: lz4_decompress(stored, out); return;
  case CompressionScheme::bg4_lz4: {
    std::vector<std::uint8_t> groups(out.size());
    lz4_decompress(stored, groups);
    bg4_regroup(groups, out);
    return;
  }
  }
  throw FormatError("unknown xorb chunk compression scheme " + std::to_string(static_cast<unsigned>(scheme)));
}

} // namespace hubcache::xet
