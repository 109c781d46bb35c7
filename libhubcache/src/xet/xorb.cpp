#include "hubcache/xet/xorb.hpp"

#include "hubcache/xet/chunker.hpp"

#include <algorithm>
#include <string>
#include <string_view>

namespace hubcache::xet {

namespace {

constexpr std::uint8_t chunk_header_version = 0;
// The start of xet-core's xorb footer (XorbObjectInfoV1).
constexpr std::string_view footer_ident = "XETBLOB";
// xet-core refuses a stored size above twice the maximum chunk size.
constexpr std::size_t max_stored_chunk_size = 2 * max_chunk_size;

void put_u24(std::uint8_t* out, std::size_t value) noexcept
{
  out[0] = static_cast<std::uint8_t>(value);
  out[1] = static_cast<std::uint8_t>(value >> 8);
  out[2] = static_cast<std::uint8_t>(value >> 16);
}

std::uint32_t get_u24(const std::uint8_t* in) noexcept
{
  return static_cast<std::uint32_t>(in[0]) | static_cast<std::uint32_t>(in[1]) << 8
         | static_cast<std::uint32_t>(in[2]) << 16;
}

bool starts_footer(Bytes rest) noexcept
{
  return rest.size() >= footer_ident.size() && std::equal(footer_ident.begin(), footer_ident.end(), rest.begin());
}

// The chunk header at `offset`, checked; the caller knows 8 bytes remain.
XorbChunk read_chunk_header(Bytes xorb, std::size_t offset)
{
  const std::uint8_t* header = xorb.data() + offset;
  std::string where = " (chunk header at byte " + std::to_string(offset) + ")";
  if (header[0] != chunk_header_version) {
    throw FormatError("unknown xorb chunk header version " + std::to_string(header[0]) + where);
  }
  XorbChunk chunk;
  chunk.header_offset = static_cast<std::uint32_t>(offset);
  chunk.stored_size = get_u24(header + 1);
  chunk.size = get_u24(header + 5);
  if (header[4] > static_cast<std::uint8_t>(CompressionScheme::bg4_lz4)) {
    throw FormatError("unknown xorb chunk compression scheme " + std::to_string(header[4]) + where);
  }
  chunk.scheme = static_cast<CompressionScheme>(header[4]);
  if (chunk.size > max_chunk_size || chunk.stored_size > max_stored_chunk_size) {
    throw FormatError("xorb chunk larger than the protocol allows" + where);
  }
  if (chunk.stored_size > xorb.size() - offset - chunk_header_size) {
    throw FormatError("truncated xorb chunk" + where);
  }
  if (chunk.scheme == CompressionScheme::none && chunk.stored_size != chunk.size) {
    throw FormatError("uncompressed xorb chunk whose two sizes differ" + where);
  }
  return chunk;
}

} // namespace

bool XorbBuilder::add(const MerkleHash& hash, Bytes data)
{
  if (data.size() > max_chunk_size) {
    throw std::logic_error("XorbBuilder::add: a chunk over the maximum chunk size");
  }
  if (m_chunks.size() >= max_xorb_chunks || m_unpacked + data.size() > m_capacity) {
    return false;
  }
  auto compressed = compress_chunk(data);
  Bytes stored = compressed.scheme == CompressionScheme::none ? data : Bytes(compressed.bytes);
  if (m_bytes.size() + chunk_header_size + stored.size() > m_capacity) {
    return false;
  }
  if (m_bytes.capacity() == 0) {
    // Once, the most this xorb can weigh: growing by doubling would copy it and hold up to
    // 1.5 times that while copying. Pages are touched only as they are written.
    m_bytes.reserve(m_capacity);
  }
  std::size_t offset = m_bytes.size();
  m_bytes.resize(offset + chunk_header_size);
  std::uint8_t* header = m_bytes.data() + offset;
  header[0] = chunk_header_version;
  put_u24(header + 1, stored.size());
  header[4] = static_cast<std::uint8_t>(compressed.scheme);
  put_u24(header + 5, data.size());
  m_bytes.insert(m_bytes.end(), stored.begin(), stored.end());
  m_chunks.push_back({hash, static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(stored.size()),
                      static_cast<std::uint32_t>(data.size()), compressed.scheme});
  m_unpacked += data.size();
  return true;
}

MerkleHash XorbBuilder::hash() const
{
  std::vector<HashedNode> nodes;
  nodes.reserve(m_chunks.size());
  for (const auto& chunk : m_chunks) {
    nodes.push_back({chunk.hash, chunk.size});
  }
  return xorb_hash(nodes);
}

void XorbBuilder::clear()
{
  m_bytes.clear();
  m_chunks.clear();
  m_unpacked = 0;
}

XorbLayout read_xorb_layout(Bytes xorb)
{
  if (xorb.size() > max_xorb_input_bytes) {
    throw FormatError("xorb of " + std::to_string(xorb.size()) + " bytes, more than the protocol allows");
  }
  XorbLayout layout;
  std::size_t offset = 0;
  while (offset < xorb.size() && !starts_footer(xorb.subspan(offset))) {
    if (xorb.size() - offset < chunk_header_size) {
      throw FormatError("truncated xorb chunk header at byte " + std::to_string(offset));
    }
    if (layout.chunks.size() == max_xorb_chunks) {
      throw FormatError("xorb with more than " + std::to_string(max_xorb_chunks) + " chunks");
    }
    auto chunk = read_chunk_header(xorb, offset);
    layout.unpacked_size += chunk.size;
    if (layout.unpacked_size > max_xorb_bytes) {
      throw FormatError("xorb holding more than " + std::to_string(max_xorb_bytes) + " bytes of chunks");
    }
    offset += chunk_header_size + chunk.stored_size;
    layout.chunks.push_back(chunk);
  }
  if (layout.chunks.empty()) {
    throw FormatError("xorb without chunks");
  }
  layout.chunks_end = offset;
  return layout;
}

std::vector<std::uint8_t> xorb_chunk_data(Bytes xorb, const XorbChunk& chunk)
{
  std::vector<std::uint8_t> scratch;
  const auto view = xorb_chunk_view(xorb, chunk, scratch);
  if (view.data() != scratch.data()) {
    scratch.assign(view.begin(), view.end());
  }
  return scratch;
}

Bytes xorb_chunk_view(Bytes xorb, const XorbChunk& chunk, std::vector<std::uint8_t>& scratch)
{
  if (chunk.header_offset > xorb.size()
      || chunk_header_size + std::size_t{chunk.stored_size} > xorb.size() - chunk.header_offset) {
    throw FormatError("xorb chunk outside the xorb");
  }
  const auto stored = xorb.subspan(chunk.header_offset + chunk_header_size, chunk.stored_size);
  if (chunk.scheme == CompressionScheme::none) {
    if (stored.size() != chunk.size) {
      throw FormatError("an uncompressed xorb chunk holds " + std::to_string(stored.size()) + " bytes, its header says "
                        + std::to_string(chunk.size));
    }
    return stored;
  }
  scratch.resize(chunk.size);
  decompress_chunk(chunk.scheme, stored, scratch);
  return scratch;
}

DecodedXorb decode_xorb(Bytes xorb)
{
  DecodedXorb decoded{read_xorb_layout(xorb), {}};
  std::vector<HashedNode> nodes;
  nodes.reserve(decoded.layout.chunks.size());
  std::vector<std::uint8_t> scratch;
  for (auto& chunk : decoded.layout.chunks) {
    chunk.hash = chunk_hash(xorb_chunk_view(xorb, chunk, scratch));
    nodes.push_back({chunk.hash, chunk.size});
  }
  decoded.hash = xorb_hash(nodes);
  return decoded;
}

} // namespace hubcache::xet
