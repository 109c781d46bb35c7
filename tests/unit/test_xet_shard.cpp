#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>
#include <hubcache/xet/shard.hpp>

#include "xet_test_data.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

using namespace hubcache;
using namespace hubcache::xet;
using xet_test::hash_of;

TEST_SUITE_BEGIN("hubcache::xet::shard");

namespace xet_shard_test {

namespace {

std::vector<std::uint8_t> read_bytes(const std::string& relative)
{
  auto text = util::read_file(std::string(NEURON_CACHE_TEST_DATA) + "/" + relative);
  return {text.begin(), text.end()};
}

MerkleHash numbered(std::uint8_t value)
{
  MerkleHash hash;
  hash.bytes.fill(value);
  return hash;
}

// Two files over two xorbs, with verification hashes and one sha256 extension.
Shard sample_shard()
{
  Shard shard;
  FileInfo first{numbered(1), {{numbered(10), 0, 300, 0, 3}, {numbered(11), 0, 50, 2, 3}}, {}, std::nullopt};
  first.verification = {numbered(20), numbered(21)};
  auto digest = util::Sha256Bytes::from_hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  first.sha256 = MerkleHash::from_sha256(digest->bytes);
  FileInfo second{numbered(2), {{numbered(11), 0, 80, 0, 2}}, {numbered(22)}, std::nullopt};
  shard.files = {first, second};
  XorbInfo xorb10{
    numbered(10), 0, {{numbered(30), 0, 100, 0}, {numbered(31), 100, 100, 0}, {numbered(32), 200, 100, 0}}, 300, 170};
  XorbInfo xorb11{
    numbered(11), 0, {{numbered(33), 0, 40, 0}, {numbered(34), 40, 40, 0}, {numbered(35), 80, 50, 0}}, 130, 138};
  shard.xorbs = {xorb10, xorb11};
  return shard;
}

std::uint64_t u64_at(const std::vector<std::uint8_t>& bytes, std::size_t offset)
{
  std::uint64_t value = 0;
  for (std::size_t i = 8; i-- > 0;) {
    value = (value << 8) | bytes.at(offset + i);
  }
  return value;
}

std::uint32_t u32_at(const std::vector<std::uint8_t>& bytes, std::size_t offset)
{
  return static_cast<std::uint32_t>(u64_at(bytes, offset) & 0xffffffffU);
}

} // namespace

TEST_CASE("a dedup answer of the Hub (huggingface.js tests/gpt2-64-8bits.tflite.shard)")
{
  auto bytes = read_bytes("xet/gpt2-64-8bits.tflite.shard");
  auto expected = nlohmann::json::parse(
    util::read_file(std::string(NEURON_CACHE_TEST_DATA) + "/xet/gpt2-64-8bits.tflite.shard.expected.json"));
  auto shard = parse_shard(bytes);
  REQUIRE(shard.footer);
  CHECK(shard.files.empty());
  CHECK(shard.footer->chunk_hash_hmac_key.hex() == expected["hmac_key"].get<std::string>());
  REQUIRE(shard.xorbs.size() == expected["xorbs"].size());
  for (std::size_t i = 0; i < shard.xorbs.size(); ++i) {
    const auto& xorb = shard.xorbs[i];
    const auto& want = expected["xorbs"][i];
    CHECK(xorb.xorb_hash.hex() == want["hash"].get<std::string>());
    REQUIRE(xorb.chunks.size() == want["chunk_count"].get<std::size_t>());
    CHECK(xorb.chunks.front().hash.hex() == want["first_chunk_hash"].get<std::string>());
    CHECK(xorb.chunks.back().hash.hex() == want["last_chunk_hash"].get<std::string>());
    std::string joined;
    std::uint32_t offset = 0;
    for (const auto& chunk : xorb.chunks) {
      joined += (joined.empty() ? "" : "\n") + chunk.hash.hex();
      CHECK(chunk.byte_range_start == offset);
      offset += chunk.size;
    }
    CHECK(offset == xorb.unpacked_size);
    CHECK(util::hex_digest(util::HashAlgorithm::sha256, joined) == want["chunk_hashes_sha256"].get<std::string>());
  }
  // Its chunk hashes are HMACs with the footer's key (huggingface.js shardParser.spec.ts).
  auto plain = hash_of("9502eec19d4b0c9f7b389228fa801f68ecdf15d69ccd1da2f9ddbd0219898335");
  CHECK(hmac(plain, shard.footer->chunk_hash_hmac_key) == shard.xorbs[1].chunks[0].hash);
}

TEST_CASE("shard layout: header, file records, bookends, xorb records (spec shard.md)")
{
  auto bytes = serialize_shard(sample_shard());
  CHECK(std::equal(shard_header_tag.begin(), shard_header_tag.end(), bytes.begin()));
  CHECK(std::string(bytes.begin(), bytes.begin() + 14) == "HFRepoMetaData");
  CHECK(u64_at(bytes, 32) == 2);
  CHECK(u64_at(bytes, 40) == 0); // no footer
  // File 1: header, 2 terms, 2 verification entries, the sha256 extension.
  CHECK(bytes[48] == 1);
  CHECK(u32_at(bytes, 80) == (file_flag_with_verification | file_flag_with_metadata_ext));
  CHECK(u32_at(bytes, 84) == 2);
  CHECK(bytes[96] == 10);
  CHECK(u32_at(bytes, 96 + 36) == 300);
  CHECK(u32_at(bytes, 96 + 44) == 3);
  CHECK(bytes[192] == 20);
  CHECK(bytes[240] == 21);
  MerkleHash sha256;
  std::copy_n(bytes.begin() + 288, 32, sha256.bytes.begin());
  CHECK(sha256.hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // File 2 at 336: header, 1 term, 1 verification entry; then the bookend at 480.
  CHECK(u32_at(bytes, 336 + 32) == file_flag_with_verification);
  CHECK(std::all_of(bytes.begin() + 480, bytes.begin() + 512, [](std::uint8_t b) { return b == 0xff; }));
  CHECK(std::all_of(bytes.begin() + 512, bytes.begin() + 528, [](std::uint8_t b) { return b == 0; }));
  // Xorb 10 at 528: the first chunk of file 1 gets the global dedup flag, as in xet-core.
  CHECK(bytes[528] == 10);
  CHECK(u32_at(bytes, 528 + 36) == 3);
  CHECK(u32_at(bytes, 528 + 40) == 300);
  CHECK(u32_at(bytes, 528 + 44) == 170);
  CHECK(u32_at(bytes, 576 + 40) == chunk_flag_global_dedup);
  CHECK(u32_at(bytes, 624 + 40) == 0);
  CHECK(u32_at(bytes, 624 + 32) == 100);
  // Xorb 11 at 720: its chunk 0 starts file 2.
  CHECK(u32_at(bytes, 768 + 40) == chunk_flag_global_dedup);
  CHECK(bytes.size() == 720 + 4 * 48 + 48);
}

TEST_CASE("shards round-trip, with and without footer")
{
  auto shard = sample_shard();
  auto parsed = parse_shard(serialize_shard(shard));
  CHECK_FALSE(parsed.footer);
  REQUIRE(parsed.files.size() == 2);
  CHECK(parsed.files[0].file_hash == numbered(1));
  CHECK(parsed.files[0].terms.size() == 2);
  CHECK(parsed.files[0].terms[1].chunk_start == 2);
  CHECK(parsed.files[0].verification == shard.files[0].verification);
  CHECK(parsed.files[0].sha256 == shard.files[0].sha256);
  CHECK_FALSE(parsed.files[1].sha256);
  REQUIRE(parsed.xorbs.size() == 2);
  CHECK(parsed.xorbs[1].chunks[2].byte_range_start == 80);
  CHECK(parsed.xorbs[0].chunks[0].flags == chunk_flag_global_dedup);

  shard.footer = ShardFooter{};
  shard.footer->chunk_hash_hmac_key = numbered(7);
  shard.footer->creation_timestamp = 1700000000;
  auto bytes = serialize_shard(shard);
  CHECK(u64_at(bytes, 40) == shard_footer_size);
  auto with_footer = parse_shard(bytes);
  REQUIRE(with_footer.footer);
  const auto& footer = *with_footer.footer;
  CHECK(footer.file_info_offset == 48);
  CHECK(footer.xorb_info_offset == 528);
  CHECK(footer.footer_offset == bytes.size() - shard_footer_size);
  CHECK(footer.lookups[0] == footer.footer_offset);
  CHECK(footer.lookups[1] == 0);
  CHECK(footer.chunk_hash_hmac_key == numbered(7));
  CHECK(footer.creation_timestamp == 1700000000);
  CHECK(footer.stored_bytes_on_disk == 170 + 138);
  CHECK(footer.stored_bytes == 300 + 130);
  CHECK(footer.materialized_bytes == 300 + 50 + 80);
  CHECK(with_footer.files.size() == 2);
}

TEST_CASE("an empty shard and a shard without verification")
{
  auto empty = serialize_shard({});
  CHECK(empty.size() == shard_header_size + 2 * shard_record_size);
  auto parsed = parse_shard(empty);
  CHECK(parsed.files.empty());
  CHECK(parsed.xorbs.empty());
  Shard plain;
  plain.files.push_back({numbered(3), {{numbered(4), 0, 10, 0, 1}}, {}, std::nullopt});
  auto bytes = serialize_shard(plain);
  CHECK(u32_at(bytes, 48 + 32) == 0);
  CHECK(parse_shard(bytes).files.at(0).verification.empty());
}

TEST_CASE("serialize_shard refuses verification for only some files, or not one per term")
{
  Shard shard = sample_shard();
  shard.files[1].verification.clear();
  CHECK_THROWS_AS(serialize_shard(shard), std::invalid_argument);
  shard = sample_shard();
  shard.files[0].verification.pop_back();
  CHECK_THROWS_AS(serialize_shard(shard), std::invalid_argument);
}

TEST_CASE("hostile shards: clear FormatError, never a read past the buffer")
{
  auto error_of = [](std::vector<std::uint8_t> bytes) {
    try {
      parse_shard(bytes);
    } catch (const FormatError& error) {
      return std::string(error.what());
    }
    return std::string("(no error)");
  };
  auto good = serialize_shard(sample_shard());
  CHECK(error_of({}).find("no shard header tag") != std::string::npos);
  auto bad = good;
  bad[3] = 'x';
  CHECK(error_of(bad).find("no shard header tag") != std::string::npos);
  bad = good;
  bad[32] = 3;
  CHECK(error_of(bad).find("header version") != std::string::npos);
  bad = good;
  bad[40] = 100;
  CHECK(error_of(bad).find("neither 0 nor 200") != std::string::npos);
  bad = good;
  bad[84] = 0xff; // file 1 claims 255 terms
  CHECK(error_of(bad).find("runs past the end") != std::string::npos);
  bad = good;
  bad[528 + 39] = 0x7f; // xorb 10 claims 2^31 + 3 chunks
  CHECK(error_of(bad).find("runs past the end") != std::string::npos);
  bad = good;
  bad[368 + 3] = 0; // file 2 loses its verification flag
  CHECK(error_of(bad) != "(no error)");
  bad = good;
  bad.push_back(0);
  CHECK(error_of(bad).find("bytes after the last section") != std::string::npos);

  auto shard = sample_shard();
  shard.footer = ShardFooter{};
  auto footed = serialize_shard(shard);
  bad = footed;
  bad[footed.size() - shard_footer_size] = 2;
  CHECK(error_of(bad).find("footer version") != std::string::npos);
  bad = footed;
  bad[footed.size() - 8] ^= 1;
  CHECK(error_of(bad).find("footer offsets") != std::string::npos);
  bad = footed;
  bad[footed.size() - shard_footer_size + 16] ^= 1; // xorb_info_offset
  CHECK(error_of(bad).find("footer offsets") != std::string::npos);
  CHECK(error_of(std::vector<std::uint8_t>(max_shard_bytes + shard_footer_size + 1)).find("more than")
        != std::string::npos);

  for (std::size_t size = 0; size < good.size(); ++size) {
    CAPTURE(size);
    CHECK(error_of(std::vector<std::uint8_t>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(size)))
          != "(no error)");
  }
}

TEST_SUITE_END();

} // namespace xet_shard_test
