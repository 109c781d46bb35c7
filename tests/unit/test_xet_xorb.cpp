#include <hubcache/xet/chunker.hpp>
#include <hubcache/xet/compression.hpp>
#include <hubcache/xet/xorb.hpp>

#include "xet_test_data.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include <array>
#include <bit>
#include <string>

using namespace hubcache;
using namespace hubcache::xet;

TEST_SUITE_BEGIN("hubcache::xet::xorb");

namespace xet_xorb_test {

namespace {

// 4-byte records of three random bytes and a fourth that stays the same for 64 records,
// stepping through popcounts 0..8: BG4 then LZ4 compresses it (plain LZ4 cannot), and
// every popcount bin is filled, as xet-core's predictor needs to count a group.
std::vector<std::uint8_t> structured_data(std::size_t size, std::uint64_t seed)
{
  static constexpr std::array<std::uint8_t, 9> levels = {0x00, 0x01, 0x03, 0x07, 0x0f, 0x1f, 0x3f, 0x7f, 0xff};
  auto data = xet_test::splitmix64_data(size, seed);
  for (std::size_t i = 3; i < size; i += 4) {
    data[i] = levels[(i / 4 / 64) % levels.size()];
  }
  return data;
}

std::vector<std::uint8_t> header(std::uint8_t version, std::uint32_t stored, std::uint8_t scheme, std::uint32_t size)
{
  return {version,
          static_cast<std::uint8_t>(stored),
          static_cast<std::uint8_t>(stored >> 8),
          static_cast<std::uint8_t>(stored >> 16),
          scheme,
          static_cast<std::uint8_t>(size),
          static_cast<std::uint8_t>(size >> 8),
          static_cast<std::uint8_t>(size >> 16)};
}

void append(std::vector<std::uint8_t>& to, const std::vector<std::uint8_t>& bytes)
{
  to.insert(to.end(), bytes.begin(), bytes.end());
}

template <typename Call>
std::string format_error_of(Call&& call)
{
  try {
    call();
  } catch (const FormatError& error) {
    return error.what();
  }
  return "(no error)";
}

} // namespace

TEST_CASE("BG4 split and regroup, for every length modulo 4")
{
  std::string_view text = "abcdefg";
  auto groups = bg4_split(xet_test::bytes_of(text));
  CHECK(std::string(groups.begin(), groups.end()) == "aebfcgd");
  for (std::size_t size = 0; size < 12; ++size) {
    auto data = xet_test::splitmix64_data(size, size);
    auto split = bg4_split(data);
    std::vector<std::uint8_t> back(size);
    bg4_regroup(split, back);
    CHECK(back == data);
  }
}

TEST_CASE("BG4 predictor's histograms: byte bit counts per position modulo 4, as counted one byte at a time")
{
  const auto counted_one_by_one = [](const std::vector<std::uint8_t>& data) {
    BitCountHistograms histograms{};
    for (std::size_t i = 0; i < data.size(); ++i) {
      ++histograms[i % 4][static_cast<std::size_t>(std::popcount(data[i]))];
    }
    return histograms;
  };
  // Sizes around the packed counters' emptying (127 rounds of 4 bytes) and odd tails; bytes
  // all of one count fill one 7-bit field to its limit.
  for (std::size_t size : {0, 1, 3, 4, 5, 507, 508, 509, 512, 1016, 1017, 65539}) {
    for (auto data : {xet_test::splitmix64_data(size, size), std::vector<std::uint8_t>(size, 0xFF),
                      std::vector<std::uint8_t>(size, 0), structured_data(size, 3)}) {
      CAPTURE(size);
      CHECK(bit_count_histograms(data) == counted_one_by_one(data));
    }
  }
}

TEST_CASE("BG4 predictor (xet-core BG4Predictor)")
{
  CHECK_FALSE(bg4_recommended(std::vector<std::uint8_t>(65536, 0)));
  CHECK_FALSE(bg4_recommended(xet_test::splitmix64_data(65536, 1)));
  CHECK(bg4_recommended(structured_data(65536, 2)));
  CHECK_FALSE(bg4_recommended({}));
}

TEST_CASE("LZ4 frames: ours carry the frame magic; a frame of the lz4 1.9.4 CLI decodes")
{
  auto frame = lz4_compress(std::vector<std::uint8_t>(1000, 'x'));
  REQUIRE(frame.size() > 4);
  CHECK(frame[0] == 0x04);
  CHECK(frame[1] == 0x22);
  CHECK(frame[2] == 0x4d);
  CHECK(frame[3] == 0x18);
  // `printf 'xet xet ... xet!' | lz4 -c -B4` (with a content checksum).
  std::vector<std::uint8_t> cli = {0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7, 0x0e, 0x00, 0x00, 0x00,
                                   0x4f, 0x78, 0x65, 0x74, 0x20, 0x04, 0x00, 0x14, 0x50, 0x20, 0x78,
                                   0x65, 0x74, 0x21, 0x00, 0x00, 0x00, 0x00, 0x96, 0x80, 0xa8, 0x81};
  std::vector<std::uint8_t> out(48);
  lz4_decompress(cli, out);
  CHECK(std::string(out.begin(), out.end()) == "xet xet xet xet xet xet xet xet xet xet xet xet!");
  std::vector<std::uint8_t> short_out(47);
  CHECK(format_error_of([&] { lz4_decompress(cli, short_out); }).find("more than") != std::string::npos);
  std::vector<std::uint8_t> long_out(49);
  CHECK(format_error_of([&] { lz4_decompress(cli, long_out); }).find("decodes to 48") != std::string::npos);
  cli[30] ^= 1; // the content checksum
  CHECK(format_error_of([&] { lz4_decompress(cli, out); }).find("corrupt") != std::string::npos);
  auto truncated = std::vector<std::uint8_t>(frame.begin(), frame.end() - 2);
  std::vector<std::uint8_t> thousand(1000);
  CHECK(format_error_of([&] { lz4_decompress(truncated, thousand); }) != "(no error)");
}

TEST_CASE("a xorb round-trips: each chunk compressed as xet-core chooses, hashes preserved")
{
  std::vector<std::vector<std::uint8_t>> chunks = {std::vector<std::uint8_t>(70000, 0),
                                                   xet_test::splitmix64_data(90000, 3),
                                                   structured_data(65536, 4),
                                                   xet_test::splitmix64_data(100, 5),
                                                   {}};
  XorbBuilder builder;
  std::vector<HashedNode> nodes;
  for (const auto& chunk : chunks) {
    auto hash = chunk_hash(chunk);
    REQUIRE(builder.add(hash, chunk));
    nodes.push_back({hash, chunk.size()});
  }
  const auto& built = builder.chunks();
  CHECK(built[0].scheme == CompressionScheme::lz4);
  CHECK(built[1].scheme == CompressionScheme::none);
  CHECK(built[2].scheme == CompressionScheme::bg4_lz4);
  CHECK(built[3].scheme == CompressionScheme::none);
  CHECK(builder.hash() == xorb_hash(nodes));
  CHECK(builder.unpacked_size() == 70000 + 90000 + 65536 + 100);

  // The first header: version 0, stored size, scheme 1, size 70000 = 0x011170.
  const auto& bytes = builder.bytes();
  CHECK(bytes[0] == 0);
  CHECK((bytes[1] | bytes[2] << 8 | bytes[3] << 16) == static_cast<int>(built[0].stored_size));
  CHECK(bytes[4] == 1);
  CHECK(bytes[5] == 0x70);
  CHECK(bytes[6] == 0x11);
  CHECK(bytes[7] == 0x01);

  auto decoded = decode_xorb(bytes);
  CHECK(decoded.hash == builder.hash());
  REQUIRE(decoded.layout.chunks.size() == chunks.size());
  CHECK(decoded.layout.chunks_end == bytes.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    CHECK(decoded.layout.chunks[i].hash == nodes[i].hash);
    CHECK(decoded.layout.chunks[i].header_offset == built[i].header_offset);
    CHECK(xorb_chunk_data(bytes, decoded.layout.chunks[i]) == chunks[i]);
  }
  // The view reads a chunk stored uncompressed in place and decompresses the others into
  // the scratch buffer.
  std::vector<std::uint8_t> scratch;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const auto view = xorb_chunk_view(bytes, decoded.layout.chunks[i], scratch);
    CHECK(std::equal(view.begin(), view.end(), chunks[i].begin(), chunks[i].end()));
    const bool in_xorb = view.data() >= bytes.data() && view.data() < bytes.data() + bytes.size();
    CHECK(in_xorb == (built[i].scheme == CompressionScheme::none && !chunks[i].empty()));
  }
  builder.clear();
  CHECK(builder.empty());
  CHECK(builder.bytes().empty());
}

TEST_CASE("a xorb with xet-core's footer: chunks end where \"XETBLOB\" starts")
{
  XorbBuilder builder;
  auto data = xet_test::splitmix64_data(5000, 8);
  REQUIRE(builder.add(chunk_hash(data), data));
  auto bytes = builder.bytes();
  std::string footer = "XETBLOB\x01 and the rest of XorbObjectInfoV1";
  bytes.insert(bytes.end(), footer.begin(), footer.end());
  auto decoded = decode_xorb(bytes);
  CHECK(decoded.layout.chunks.size() == 1);
  CHECK(decoded.layout.chunks_end == builder.bytes().size());
  CHECK(decoded.hash == builder.hash());
}

TEST_CASE("xorb builder limits: 8192 chunks, 64 MiB")
{
  XorbBuilder builder;
  std::vector<std::uint8_t> one = {7};
  for (std::size_t i = 0; i < max_xorb_chunks; ++i) {
    REQUIRE(builder.add(chunk_hash(one), one));
  }
  CHECK_FALSE(builder.add(chunk_hash(one), one));
  CHECK(builder.chunks().size() == max_xorb_chunks);
  CHECK(decode_xorb(builder.bytes()).layout.chunks.size() == max_xorb_chunks);

  builder.clear();
  std::vector<std::uint8_t> zeros(max_chunk_size, 0);
  auto hash = chunk_hash(zeros);
  for (std::size_t i = 0; i < max_xorb_bytes / max_chunk_size; ++i) {
    REQUIRE(builder.add(hash, zeros));
  }
  CHECK(builder.unpacked_size() == max_xorb_bytes);
  CHECK_FALSE(builder.add(hash, one));
  CHECK_THROWS_AS(builder.add(hash, std::vector<std::uint8_t>(max_chunk_size + 1)), std::logic_error);
}

TEST_CASE("hostile xorbs: clear FormatError, never a read past the buffer")
{
  auto error_of = [](const std::vector<std::uint8_t>& xorb) { return format_error_of([&] { decode_xorb(xorb); }); };
  CHECK(error_of({}).find("without chunks") != std::string::npos);
  CHECK(error_of({0, 1, 0, 0, 0}).find("truncated xorb chunk header") != std::string::npos);
  auto body = std::vector<std::uint8_t>(10, 'a');
  auto make = [&body](std::vector<std::uint8_t> head) {
    append(head, body);
    return head;
  };
  CHECK(error_of(make(header(1, 10, 0, 10))).find("version 1") != std::string::npos);
  CHECK(error_of(make(header(0, 10, 3, 10))).find("compression scheme 3") != std::string::npos);
  CHECK(error_of(make(header(0, 10, 0, max_chunk_size + 1))).find("larger than") != std::string::npos);
  CHECK(error_of(make(header(0, 2 * max_chunk_size + 1, 1, 10))).find("larger than") != std::string::npos);
  CHECK(error_of(make(header(0, 11, 0, 11))).find("truncated xorb chunk") != std::string::npos);
  CHECK(error_of(make(header(0, 10, 0, 9))).find("sizes differ") != std::string::npos);
  CHECK(error_of(make(header(0, 10, 1, 10))).find("corrupt LZ4") != std::string::npos);
  CHECK(error_of(make(header(0, 10, 2, 10))).find("corrupt LZ4") != std::string::npos);

  // A frame decoding to more, or fewer, bytes than the header says.
  auto frame = lz4_compress(std::vector<std::uint8_t>(1000, 'x'));
  auto stored = static_cast<std::uint32_t>(frame.size());
  auto more = header(0, stored, 1, 999);
  append(more, frame);
  CHECK(error_of(more).find("more than its declared 999") != std::string::npos);
  auto fewer = header(0, stored, 1, 1001);
  append(fewer, frame);
  CHECK(error_of(fewer).find("decodes to 1000") != std::string::npos);

  // 8193 empty chunks; 513 chunks claiming 128 KiB each.
  std::vector<std::uint8_t> many;
  for (std::size_t i = 0; i <= max_xorb_chunks; ++i) {
    append(many, header(0, 0, 0, 0));
  }
  CHECK(error_of(many).find("more than 8192 chunks") != std::string::npos);
  auto big_frame = lz4_compress(std::vector<std::uint8_t>(max_chunk_size, 0));
  std::vector<std::uint8_t> heavy;
  for (std::size_t i = 0; i <= max_xorb_bytes / max_chunk_size; ++i) {
    append(heavy, header(0, static_cast<std::uint32_t>(big_frame.size()), 1, max_chunk_size));
    append(heavy, big_frame);
  }
  CHECK(error_of(heavy).find("more than 67108864 bytes") != std::string::npos);
  CHECK(error_of(std::vector<std::uint8_t>(max_xorb_input_bytes + 1, 0)).find("more than the protocol allows")
        != std::string::npos);
}

TEST_CASE("every truncation of a xorb is refused or ends on a chunk boundary")
{
  XorbBuilder builder;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    auto data = seed == 1 ? std::vector<std::uint8_t>(3000, 9) : xet_test::splitmix64_data(3000, seed);
    REQUIRE(builder.add(chunk_hash(data), data));
  }
  const auto& bytes = builder.bytes();
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    CAPTURE(size);
    std::vector<std::uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
    bool on_boundary = false;
    for (const auto& chunk : builder.chunks()) {
      on_boundary = on_boundary || (size != 0 && size == chunk.header_offset);
    }
    if (on_boundary) {
      CHECK_NOTHROW(decode_xorb(prefix));
    } else {
      CHECK_THROWS_AS(decode_xorb(prefix), FormatError);
    }
  }
}

TEST_CASE("xorb_chunk_data refuses a chunk outside the buffer")
{
  XorbChunk chunk;
  chunk.header_offset = 4;
  chunk.stored_size = 10;
  chunk.size = 10;
  std::vector<std::uint8_t> small(16);
  CHECK_THROWS_AS(xorb_chunk_data(small, chunk), FormatError);
  chunk.header_offset = 100;
  CHECK_THROWS_AS(xorb_chunk_data(small, chunk), FormatError);
  // An uncompressed chunk whose two sizes differ is refused, not read as a view.
  std::vector<std::uint8_t> scratch;
  chunk.header_offset = 0;
  chunk.stored_size = 4;
  chunk.size = 5;
  CHECK_THROWS_AS(xorb_chunk_view(small, chunk, scratch), FormatError);
}

TEST_SUITE_END();

} // namespace xet_xorb_test
