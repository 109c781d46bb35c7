#include <hubcache/util/hash.hpp>
#include <hubcache/xet/hash.hpp>

#include "xet_test_data.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

using namespace hubcache;
using namespace hubcache::xet;
using xet_test::hash_of;

TEST_SUITE_BEGIN("hubcache::xet::hash");

TEST_CASE("hash string: four little-endian u64 in hex, i.e. each 8-byte group reversed")
{
  MerkleHash hash;
  std::iota(hash.bytes.begin(), hash.bytes.end(), std::uint8_t{0});
  CHECK(hash.hex()
        == "0706050403020100"
           "0f0e0d0c0b0a0908"
           "1716151413121110"
           "1f1e1d1c1b1a1918");
  CHECK(MerkleHash::from_hex(hash.hex()) == hash);
  CHECK(MerkleHash::from_hex("0706050403020100"
                             "0F0E0D0C0B0A0908"
                             "1716151413121110"
                             "1F1E1D1C1B1A1918")
        == hash);
  CHECK(hash.last_u64() == 0x1f1e1d1c1b1a1918ULL);
}

TEST_CASE("hash string: anything but 64 hex digits is refused")
{
  CHECK_FALSE(MerkleHash::from_hex(""));
  CHECK_FALSE(MerkleHash::from_hex(std::string(63, '0')));
  CHECK_FALSE(MerkleHash::from_hex(std::string(65, '0')));
  CHECK_FALSE(MerkleHash::from_hex(std::string(63, '0') + "g"));
  CHECK_FALSE(MerkleHash::from_hex(std::string(62, '0') + " 0"));
  CHECK(MerkleHash::from_hex(std::string(64, '0'))->is_zero());
}

TEST_CASE("BLAKE3 keyed mode: official test vectors (BLAKE3-team/BLAKE3 test_vectors.json)")
{
  // Input byte i is i % 251; the key is the 32 ASCII bytes below. The lengths cross the
  // chunk (1024) and SIMD batch sizes, so the assembly units dispatch picks are covered.
  HashKey key;
  std::string_view key_text = "whats the Elvish word for friend";
  std::copy(key_text.begin(), key_text.end(), key.begin());
  auto input_of = [](std::size_t size) {
    std::vector<std::uint8_t> input(size);
    for (std::size_t i = 0; i < size; ++i) {
      input[i] = static_cast<std::uint8_t>(i % 251);
    }
    return input;
  };
  // keyed_hash of the first 32 bytes of output, as plain hex.
  auto plain_hex = [](const MerkleHash& hash) {
    util::DigestBytes<32> digest{hash.bytes};
    return digest.hex();
  };
  CHECK(plain_hex(keyed_hash(key, input_of(0))) == "92b2b75604ed3c761f9d6f62392c8a9227ad0ea3f09573e783f1498a4ed60d26");
  CHECK(plain_hex(keyed_hash(key, input_of(1))) == "6d7878dfff2f485635d39013278ae14f1454b8c0a3a2d34bc1ab38228a80c95b");
  CHECK(plain_hex(keyed_hash(key, input_of(1023)))
        == "c951ecdf03288d0fcc96ee3413563d8a6d3589547f2c2fb36d9786470f1b9d6e");
  CHECK(plain_hex(keyed_hash(key, input_of(1024)))
        == "75c46f6f3d9eb4f55ecaaee480db732e6c2105546f1e675003687c31719c7ba4");
  CHECK(plain_hex(keyed_hash(key, input_of(1025)))
        == "357dc55de0c7e382c900fd6e320acc04146be01db6a8ce7210b7189bd664ea69");
  CHECK(plain_hex(keyed_hash(key, input_of(8192)))
        == "dc9637c8845a770b4cbf76b8daec0eebf7dc2eac11498517f08d44c8fc00d58a");
  CHECK(plain_hex(keyed_hash(key, input_of(31744)))
        == "efa53b389ab67c593dba624d898d0f7353ab99e4ac9d42302ee64cbf9939a419");
  CHECK(plain_hex(keyed_hash(key, input_of(102400)))
        == "1c35d1a5811083fd7119f5d5d1ba027b4d01c0c6c49fb6ff2cf75393ea5db4a7");
}

TEST_CASE("the protocol's keys (spec hashing.md)")
{
  CHECK(data_key.front() == 102);
  CHECK(data_key.back() == 41);
  CHECK(internal_node_key.front() == 1);
  CHECK(internal_node_key.back() == 63);
  CHECK(verification_key.front() == 127);
  CHECK(verification_key.back() == 195);
  CHECK(std::all_of(zero_key.begin(), zero_key.end(), [](std::uint8_t byte) { return byte == 0; }));
  CHECK(chunk_hash({}) == keyed_hash(data_key, {}));
}

TEST_CASE("dedup HMAC and verification hash: xetchunk-wasm vectors (verified there against Rust)")
{
  auto first = hash_of("118bbac5c38b2bca9c2b7ae8307786de066696b91b2b5ccb7dbbd4608c966882");
  auto second = hash_of("7884d4de4bcc904767362a91e97eb6c2b6bc5f3a61b640d0cad8bb1129ff0827");
  auto key = hash_of("abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
  CHECK(hmac(first, key).hex() == "1e1f5ae2bae99fe030647a14a8c5fe6cdce57826387a7552236dfbebed533e04");
  std::vector<MerkleHash> range = {first, second};
  CHECK(verification_hash(range).hex() == "82d580dd3896919ef870af78b2c7bd21e67e79777922bbc8cef1fc21630c308c");
  // The same as BLAKE3 keyed with verification_key over the raw hash bytes.
  std::vector<std::uint8_t> raw(first.bytes.begin(), first.bytes.end());
  raw.insert(raw.end(), second.bytes.begin(), second.bytes.end());
  CHECK(verification_hash(range) == keyed_hash(verification_key, raw));
}

TEST_CASE("sha256 in the shard metadata extension: stored so that its hash string is the sha256 hex")
{
  util::Hasher hasher(util::HashAlgorithm::sha256);
  hasher.update("abc");
  auto digest = hasher.digest_bytes<32>();
  auto stored = MerkleHash::from_sha256(digest.bytes);
  CHECK(stored.hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Each 8-byte group is stored back to front.
  CHECK(stored.bytes[0] == digest.bytes[7]);
}

TEST_CASE("global dedup eligibility: a file's first chunk, or last u64 % 1024 == 0")
{
  MerkleHash hash;
  hash.bytes[24] = 0x00;
  hash.bytes[25] = 0x04; // last u64 = 1024
  CHECK(is_global_dedup_eligible(hash, false));
  hash.bytes[25] = 0x02; // 512
  CHECK_FALSE(is_global_dedup_eligible(hash, false));
  CHECK(is_global_dedup_eligible(hash, true));
  hash.bytes[0] = 0x00;
  CHECK(is_global_dedup_eligible(MerkleHash{}, false));
}

TEST_SUITE_END();
