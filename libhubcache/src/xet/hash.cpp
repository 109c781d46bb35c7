#include "hubcache/xet/hash.hpp"

#include <blake3.h>

namespace hubcache::xet {

const HashKey data_key = {102, 151, 245, 119, 91,  149, 80, 222, 49,  53,  203, 172, 165, 151, 24,  28,
                          157, 228, 33,  16,  155, 235, 43, 88,  180, 208, 176, 75,  147, 173, 242, 41};
const HashKey internal_node_key = {1,  126, 197, 199, 165, 71,  41,  150, 253, 148, 102, 102, 180, 138, 2,   230,
                                   93, 221, 83,  111, 55,  199, 109, 210, 248, 99,  82,  230, 74,  83,  113, 63};
const HashKey verification_key = {127, 24,  87, 214, 206, 86,  237, 102, 18, 127, 249, 19,  231, 165, 195, 243,
                                  164, 205, 38, 213, 181, 219, 73,  230, 65, 36,  152, 127, 40,  251, 148, 195};
const HashKey zero_key = {};

namespace {

int hex_value(char c) noexcept
{
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

} // namespace

std::string MerkleHash::hex() const
{
  static constexpr char digits[] = "0123456789abcdef";
  std::string text(2 * hash_size, '0');
  std::size_t out = 0;
  for (std::size_t group = 0; group < hash_size; group += 8) {
    for (std::size_t i = 8; i-- > 0;) {
      std::uint8_t byte = bytes[group + i];
      text[out++] = digits[byte >> 4];
      text[out++] = digits[byte & 0xf];
    }
  }
  return text;
}

std::optional<MerkleHash> MerkleHash::from_hex(std::string_view text) noexcept
{
  if (text.size() != 2 * hash_size) {
    return std::nullopt;
  }
  MerkleHash hash;
  std::size_t in = 0;
  for (std::size_t group = 0; group < hash_size; group += 8) {
    for (std::size_t i = 8; i-- > 0;) {
      int high = hex_value(text[in]);
      int low = hex_value(text[in + 1]);
      if (high < 0 || low < 0) {
        return std::nullopt;
      }
      hash.bytes[group + i] = static_cast<std::uint8_t>(high * 16 + low);
      in += 2;
    }
  }
  return hash;
}

MerkleHash MerkleHash::from_sha256(std::span<const std::uint8_t, hash_size> digest) noexcept
{
  MerkleHash hash;
  for (std::size_t group = 0; group < hash_size; group += 8) {
    for (std::size_t i = 0; i < 8; ++i) {
      hash.bytes[group + i] = digest[group + 7 - i];
    }
  }
  return hash;
}

std::uint64_t MerkleHash::last_u64() const noexcept
{
  std::uint64_t value = 0;
  for (std::size_t i = hash_size; i-- > hash_size - 8;) {
    value = (value << 8) | bytes[i];
  }
  return value;
}

bool MerkleHash::is_zero() const noexcept
{
  return *this == MerkleHash{};
}

MerkleHash keyed_hash(const HashKey& key, Bytes data) noexcept
{
  blake3_hasher hasher;
  blake3_hasher_init_keyed(&hasher, key.data());
  blake3_hasher_update(&hasher, data.data(), data.size());
  MerkleHash hash;
  blake3_hasher_finalize(&hasher, hash.bytes.data(), hash.bytes.size());
  return hash;
}

MerkleHash chunk_hash(Bytes chunk) noexcept
{
  return keyed_hash(data_key, chunk);
}

MerkleHash hmac(const MerkleHash& hash, const MerkleHash& key) noexcept
{
  return keyed_hash(key.bytes, hash.bytes);
}

MerkleHash verification_hash(std::span<const MerkleHash> chunk_hashes) noexcept
{
  blake3_hasher hasher;
  blake3_hasher_init_keyed(&hasher, verification_key.data());
  for (const auto& hash : chunk_hashes) {
    blake3_hasher_update(&hasher, hash.bytes.data(), hash.bytes.size());
  }
  MerkleHash result;
  blake3_hasher_finalize(&hasher, result.bytes.data(), result.bytes.size());
  return result;
}

bool is_global_dedup_eligible(const MerkleHash& chunk, bool first_chunk_of_file) noexcept
{
  return first_chunk_of_file || chunk.last_u64() % 1024 == 0;
}

} // namespace hubcache::xet
