#pragma once

// Xorbs: the storage unit of Xet, a run of chunks each as an 8-byte header (version 0,
// u24 stored size, compression scheme, u24 uncompressed size) and its stored bytes (spec
// `xorb.md`). xet-core appends a footer starting "XETBLOB"; the JS client sends none.

#include "hubcache/xet/compression.hpp"
#include "hubcache/xet/hash.hpp"
#include "hubcache/xet/merkle.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hubcache::xet {

inline constexpr std::size_t max_xorb_bytes = 64 * 1024 * 1024;
inline constexpr std::size_t max_xorb_chunks = 8 * 1024;
inline constexpr std::size_t chunk_header_size = 8;
// What a xorb read from outside may weigh: 64 MiB of chunks, their headers, and a footer.
inline constexpr std::size_t max_xorb_input_bytes = max_xorb_bytes + max_xorb_chunks * chunk_header_size + (1 << 20);

// One chunk's place in a serialized xorb.
struct XorbChunk {
  MerkleHash hash;                 // zero until the chunk is decoded and hashed
  std::uint32_t header_offset = 0; // physical offset of its header
  std::uint32_t stored_size = 0;   // bytes after the header
  std::uint32_t size = 0;          // uncompressed
  CompressionScheme scheme = CompressionScheme::none;
};

// Packs chunks into one xorb, compressing each as xet-core does.
class XorbBuilder {
public:
  // `capacity`: the most chunk data and serialized bytes this xorb takes (at most 64 MiB).
  explicit XorbBuilder(std::size_t capacity = max_xorb_bytes) : m_capacity(std::min(capacity, max_xorb_bytes)) {}
  // Appends a chunk; false (nothing changed) when it would take the xorb past 8192 chunks,
  // its capacity of chunk data or its capacity serialized. A chunk over 128 KiB is a logic error.
  bool add(const MerkleHash& hash, Bytes data);

  bool empty() const noexcept { return m_chunks.empty(); }
  const std::vector<std::uint8_t>& bytes() const noexcept { return m_bytes; }
  // Hands the serialized bytes over (the builder is then to be cleared).
  std::vector<std::uint8_t> take_bytes() noexcept { return std::move(m_bytes); }
  // Takes `buffer` (a xorb handed over earlier, sent) for the next xorb's bytes: its pages
  // are reused instead of fresh ones faulted in. Call after clear().
  void reuse(std::vector<std::uint8_t> buffer) noexcept
  {
    m_bytes = std::move(buffer);
    m_bytes.clear();
  }
  const std::vector<XorbChunk>& chunks() const noexcept { return m_chunks; }
  std::uint64_t unpacked_size() const noexcept { return m_unpacked; }
  // The xorb hash: the aggregated root of its (chunk hash, size) list.
  MerkleHash hash() const;
  void clear();

private:
  std::size_t m_capacity;
  std::vector<std::uint8_t> m_bytes;
  std::vector<XorbChunk> m_chunks;
  std::uint64_t m_unpacked = 0;
};

// The chunk headers of a serialized xorb, checked against the limits and the buffer.
struct XorbLayout {
  std::vector<XorbChunk> chunks;
  std::size_t chunks_end = 0; // where the chunk stream ends (a footer, if any, follows)
  std::uint64_t unpacked_size = 0;
};
XorbLayout read_xorb_layout(Bytes xorb);

// A chunk's uncompressed bytes.
std::vector<std::uint8_t> xorb_chunk_data(Bytes xorb, const XorbChunk& chunk);
// The same without a copy when the chunk is stored uncompressed (a view into `xorb`), else
// decompressed into `scratch` (reused from chunk to chunk): what readers of whole xorbs
// and ranges (a CAS checking one, a pull) use.
Bytes xorb_chunk_view(Bytes xorb, const XorbChunk& chunk, std::vector<std::uint8_t>& scratch);

// Every chunk decoded and hashed, and the xorb hash they give: what a CAS checks before it
// stores a xorb under a hash. FormatError on any malformed part.
struct DecodedXorb {
  XorbLayout layout; // with each chunk's hash filled in
  MerkleHash hash;
};
DecodedXorb decode_xorb(Bytes xorb);

} // namespace hubcache::xet
