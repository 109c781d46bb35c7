#include "hubcache/xet/shard.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace hubcache::xet {

const std::array<std::uint8_t, 32> shard_header_tag = {'H', 'F', 'R', 'e', 'p', 'o', 'M', 'e', 't', 'a', 'D',
                                                       'a', 't', 'a', 0,   85,  105, 103, 69,  106, 123, 129,
                                                       87,  131, 165, 189, 217, 92,  205, 209, 74,  169};

namespace {

constexpr MerkleHash bookend_hash()
{
  MerkleHash hash;
  hash.bytes.fill(0xFF);
  return hash;
}

class Writer {
public:
  void u32(std::uint32_t value) { little_endian(value, 4); }
  void u64(std::uint64_t value) { little_endian(value, 8); }
  void hash(const MerkleHash& value) { raw(value.bytes); }
  void raw(Bytes bytes) { m_bytes.insert(m_bytes.end(), bytes.begin(), bytes.end()); }
  void zeros(std::size_t count) { m_bytes.insert(m_bytes.end(), count, 0); }
  void bookend()
  {
    hash(bookend_hash());
    zeros(16);
  }
  std::size_t size() const noexcept { return m_bytes.size(); }
  std::vector<std::uint8_t> take() { return std::move(m_bytes); }

private:
  void little_endian(std::uint64_t value, int size)
  {
    for (int i = 0; i < size; ++i) {
      m_bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
    }
  }
  std::vector<std::uint8_t> m_bytes;
};

std::uint32_t count32(std::size_t count)
{
  if (count > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("serialize_shard: a count past 2^32");
  }
  return static_cast<std::uint32_t>(count);
}

void check_verification(const Shard& shard)
{
  bool any = false;
  bool all = true;
  for (const auto& file : shard.files) {
    if (!file.verification.empty() && file.verification.size() != file.terms.size()) {
      throw std::invalid_argument("serialize_shard: verification hashes not one per term");
    }
    bool has = !file.verification.empty() || file.terms.empty();
    any = any || !file.verification.empty();
    all = all && has;
  }
  if (any && !all) {
    throw std::invalid_argument("serialize_shard: verification hashes for only some files");
  }
}

void write_file(Writer& out, const FileInfo& file, bool with_verification)
{
  std::uint32_t flags =
    (with_verification ? file_flag_with_verification : 0U) | (file.sha256 ? file_flag_with_metadata_ext : 0U);
  out.hash(file.file_hash);
  out.u32(flags);
  out.u32(count32(file.terms.size()));
  out.zeros(8);
  for (const auto& term : file.terms) {
    out.hash(term.xorb_hash);
    out.u32(term.xorb_flags);
    out.u32(term.unpacked_size);
    out.u32(term.chunk_start);
    out.u32(term.chunk_end);
  }
  if (with_verification) {
    for (const auto& hash : file.verification) {
      out.hash(hash);
      out.zeros(16);
    }
  }
  if (file.sha256) {
    out.hash(*file.sha256);
    out.zeros(16);
  }
}

// (xorb hash, chunk index) of every file's first chunk.
std::set<std::pair<MerkleHash, std::uint32_t>> file_start_chunks(const Shard& shard)
{
  std::set<std::pair<MerkleHash, std::uint32_t>> starts;
  for (const auto& file : shard.files) {
    if (!file.terms.empty()) {
      starts.emplace(file.terms.front().xorb_hash, file.terms.front().chunk_start);
    }
  }
  return starts;
}

void write_xorb(Writer& out, const XorbInfo& xorb, const std::set<std::pair<MerkleHash, std::uint32_t>>& starts)
{
  out.hash(xorb.xorb_hash);
  out.u32(xorb.flags);
  out.u32(count32(xorb.chunks.size()));
  out.u32(xorb.unpacked_size);
  out.u32(xorb.serialized_size);
  for (std::uint32_t index = 0; index < xorb.chunks.size(); ++index) {
    const auto& chunk = xorb.chunks[index];
    bool file_start = starts.count({xorb.xorb_hash, index}) != 0;
    out.hash(chunk.hash);
    out.u32(chunk.byte_range_start);
    out.u32(chunk.size);
    out.u32(chunk.flags | (file_start ? chunk_flag_global_dedup : 0U));
    out.u32(0);
  }
}

void write_footer(Writer& out, const ShardFooter& given, const Shard& shard, std::uint64_t xorb_info_offset)
{
  std::uint64_t footer_offset = out.size();
  std::uint64_t materialized = 0;
  for (const auto& file : shard.files) {
    for (const auto& term : file.terms) {
      materialized += term.unpacked_size;
    }
  }
  std::uint64_t on_disk = 0;
  std::uint64_t stored = 0;
  for (const auto& xorb : shard.xorbs) {
    on_disk += xorb.serialized_size;
    stored += xorb.unpacked_size;
  }
  out.u64(shard_footer_version);
  out.u64(shard_header_size);
  out.u64(xorb_info_offset);
  // No lookup tables: each points at the footer with no entries, as xet-core writes.
  for (int table = 0; table < 3; ++table) {
    out.u64(footer_offset);
    out.u64(0);
  }
  out.hash(given.chunk_hash_hmac_key);
  out.u64(given.creation_timestamp);
  out.u64(given.key_expiry);
  out.zeros(48);
  out.u64(on_disk);
  out.u64(materialized);
  out.u64(stored);
  out.u64(footer_offset);
}

} // namespace

std::vector<std::uint8_t> serialize_shard(const Shard& shard)
{
  check_verification(shard);
  bool with_verification = std::any_of(shard.files.begin(), shard.files.end(),
                                       [](const FileInfo& file) { return !file.verification.empty(); });
  Writer out;
  out.raw(shard_header_tag);
  out.u64(shard_header_version);
  out.u64(shard.footer ? shard_footer_size : 0);
  for (const auto& file : shard.files) {
    write_file(out, file, with_verification);
  }
  out.bookend();
  std::uint64_t xorb_info_offset = out.size();
  auto starts = file_start_chunks(shard);
  for (const auto& xorb : shard.xorbs) {
    write_xorb(out, xorb, starts);
  }
  out.bookend();
  if (shard.footer) {
    write_footer(out, *shard.footer, shard, xorb_info_offset);
  }
  return out.take();
}

namespace {

// Reads little-endian fields of a shard, never past its end.
class Reader {
public:
  Reader(Bytes data, std::size_t offset) : m_data(data), m_offset(offset) {}

  std::size_t offset() const noexcept { return m_offset; }
  std::size_t remaining() const noexcept { return m_data.size() - m_offset; }
  void need(std::size_t count, const char* what) const
  {
    if (count > remaining()) {
      throw FormatError(std::string("truncated shard: ") + what + " at byte " + std::to_string(m_offset));
    }
  }
  std::uint32_t u32() { return static_cast<std::uint32_t>(little_endian(4)); }
  std::uint64_t u64() { return little_endian(8); }
  MerkleHash hash()
  {
    need(hash_size, "a hash");
    MerkleHash value;
    std::copy_n(m_data.begin() + static_cast<std::ptrdiff_t>(m_offset), hash_size, value.bytes.begin());
    m_offset += hash_size;
    return value;
  }
  void skip(std::size_t count)
  {
    need(count, "reserved bytes");
    m_offset += count;
  }

private:
  std::uint64_t little_endian(std::size_t size)
  {
    need(size, "an integer");
    std::uint64_t value = 0;
    for (std::size_t i = size; i-- > 0;) {
      value = (value << 8) | m_data[m_offset + i];
    }
    m_offset += size;
    return value;
  }
  Bytes m_data;
  std::size_t m_offset;
};

// Checks that `count` records of 48 bytes fit in what is left, before anything is allocated.
void need_records(const Reader& in, std::uint64_t count, const char* what)
{
  if (count > in.remaining() / shard_record_size) {
    throw FormatError(std::string("shard ") + what + " entry count " + std::to_string(count)
                      + " runs past the end of the shard");
  }
}

// Reads one file's records; `verification` tells whether its flags announce verification
// hashes (a file without terms has none to give).
FileInfo read_file(Reader& in, const MerkleHash& file_hash, bool& verification)
{
  FileInfo file{file_hash, {}, {}, std::nullopt};
  std::uint32_t flags = in.u32();
  std::uint32_t count = in.u32();
  in.skip(8);
  verification = (flags & file_flag_with_verification) != 0;
  bool metadata = (flags & file_flag_with_metadata_ext) != 0;
  std::uint64_t records = std::uint64_t{count} * (verification ? 2 : 1) + (metadata ? 1 : 0);
  need_records(in, records, "file");
  file.terms.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    FileTerm term;
    term.xorb_hash = in.hash();
    term.xorb_flags = in.u32();
    term.unpacked_size = in.u32();
    term.chunk_start = in.u32();
    term.chunk_end = in.u32();
    file.terms.push_back(term);
  }
  if (verification) {
    file.verification.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      file.verification.push_back(in.hash());
      in.skip(16);
    }
  }
  if (metadata) {
    file.sha256 = in.hash();
    in.skip(16);
  }
  return file;
}

XorbInfo read_xorb(Reader& in, const MerkleHash& xorb_hash)
{
  XorbInfo xorb{xorb_hash, in.u32(), {}, 0, 0};
  std::uint32_t count = in.u32();
  xorb.unpacked_size = in.u32();
  xorb.serialized_size = in.u32();
  need_records(in, count, "xorb");
  xorb.chunks.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    XorbChunkInfo chunk;
    chunk.hash = in.hash();
    chunk.byte_range_start = in.u32();
    chunk.size = in.u32();
    chunk.flags = in.u32();
    in.skip(4);
    xorb.chunks.push_back(chunk);
  }
  return xorb;
}

// Reads both sections into `shard`; returns where the xorb section starts.
std::size_t read_sections(Reader& in, Shard& shard)
{
  bool any_verification = false;
  bool all_verification = true;
  for (MerkleHash hash = in.hash(); hash != bookend_hash(); hash = in.hash()) {
    bool has = false;
    shard.files.push_back(read_file(in, hash, has));
    any_verification = any_verification || has;
    all_verification = all_verification && has;
  }
  in.skip(16);
  if (any_verification && !all_verification) {
    throw FormatError("shard with verification hashes for only some files");
  }
  std::size_t xorb_info_offset = in.offset();
  for (MerkleHash hash = in.hash(); hash != bookend_hash(); hash = in.hash()) {
    shard.xorbs.push_back(read_xorb(in, hash));
  }
  in.skip(16);
  return xorb_info_offset;
}

ShardFooter read_footer(Reader& in)
{
  if (in.u64() != shard_footer_version) {
    throw FormatError("unknown shard footer version");
  }
  ShardFooter footer;
  footer.file_info_offset = in.u64();
  footer.xorb_info_offset = in.u64();
  for (auto& value : footer.lookups) {
    value = in.u64();
  }
  footer.chunk_hash_hmac_key = in.hash();
  footer.creation_timestamp = in.u64();
  footer.key_expiry = in.u64();
  in.skip(48);
  footer.stored_bytes_on_disk = in.u64();
  footer.materialized_bytes = in.u64();
  footer.stored_bytes = in.u64();
  footer.footer_offset = in.u64();
  return footer;
}

} // namespace

Shard parse_shard(Bytes data)
{
  if (data.size() > max_shard_bytes + shard_footer_size) {
    throw FormatError("shard of " + std::to_string(data.size()) + " bytes, more than the protocol allows");
  }
  if (data.size() < shard_header_size || !std::equal(shard_header_tag.begin(), shard_header_tag.end(), data.begin())) {
    throw FormatError("not a Xet shard (no shard header tag)");
  }
  Reader header(data, shard_header_tag.size());
  if (header.u64() != shard_header_version) {
    throw FormatError("unknown shard header version");
  }
  std::uint64_t footer_size = header.u64();
  if (footer_size != 0 && footer_size != shard_footer_size) {
    throw FormatError("shard footer size " + std::to_string(footer_size) + " is neither 0 nor 200");
  }
  if (footer_size > data.size() - shard_header_size) {
    throw FormatError("truncated shard: no room for its footer");
  }
  const std::size_t body_end = data.size() - footer_size;
  Shard shard;
  Reader body(data.first(body_end), shard_header_size);
  std::size_t xorb_info_offset = read_sections(body, shard);
  if (footer_size == 0) {
    if (body.remaining() != 0) {
      throw FormatError("bytes after the last section of a shard without footer");
    }
    return shard;
  }
  Reader tail(data, body_end);
  shard.footer = read_footer(tail);
  if (shard.footer->file_info_offset != shard_header_size || shard.footer->xorb_info_offset != xorb_info_offset
      || shard.footer->footer_offset != body_end) {
    throw FormatError("shard footer offsets that do not match its sections");
  }
  return shard;
}

} // namespace hubcache::xet
