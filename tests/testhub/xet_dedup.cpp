// The test CAS's global dedup (spec `deduplication.md`, `api.md` GET /v1/chunks): accepted
// shards index their eligible chunks; a query for one answers a shard with a footer whose
// xorb section lists the xorbs to reference, chunk hashes HMAC'd with the footer's key, as
// the real CAS does (the client HMACs its own chunk hashes to find matches).

#include <algorithm>
#include <ctime>

#include "http_util.hpp"
#include "hubcache/util/fs.hpp"
#include "xet_cas.hpp"

namespace testhub {

namespace xet = hubcache::xet;

namespace {

constexpr std::size_t k_max_answer_xorbs = 32;
constexpr std::uint64_t k_key_lifetime_s = 86400;

} // namespace

// Like the real CAS (and xet-core's local server), a shard answers for the chunks its own
// xorb section holds: each file's first chunk when its first term is in one of them, and
// every chunk whose hash is 0 mod 1024. A shard whose files all reference older xorbs
// indexes nothing, so a chunk keeps answering with the shard that stored it.
void XetCas::index_for_dedup(const xet::Shard& shard)
{
  std::vector<std::string> shard_xorbs;
  for (const auto& xorb : shard.xorbs)
    shard_xorbs.push_back(xorb.xorb_hash.hex());
  std::string journal; // appended once: one line per chunk indexed
  journal.reserve(shard.files.size() * (100 + 65 * std::min(shard_xorbs.size(), k_max_answer_xorbs)));
  // The xorb holding the chunk first, then the shard's others, each once.
  const auto index = [&](const xet::MerkleHash& chunk, const std::string& holder) {
    std::string listing = holder + "\n";
    std::size_t listed = 1;
    for (const auto& other : shard_xorbs) {
      if (other != holder && listed < k_max_answer_xorbs) {
        listing += other + "\n";
        ++listed;
      }
    }
    // By hand (hex hashes and newlines only): a shard of 10,000 small files indexes 10,000 chunks.
    journal += R"({"chunk":")" + chunk.hex() + R"(","xorbs":")";
    for (const char c : listing)
      journal += c == '\n' ? std::string_view("\\n") : std::string_view(&c, 1);
    journal += "\"}\n";
    m_dedup[chunk.hex()] = std::move(listing);
  };
  std::lock_guard lock(m_mutex);
  std::string hashes_of; // the chunk hashes of the last xorb read: a shard's files share few
  std::vector<xet::MerkleHash> hashes;
  for (const auto& file : shard.files) {
    if (file.terms.empty())
      continue;
    const auto& first = file.terms.front();
    const auto holder = first.xorb_hash.hex();
    if (std::find(shard_xorbs.begin(), shard_xorbs.end(), holder) == shard_xorbs.end())
      continue;
    if (holder != hashes_of)
      hashes = chunk_hashes(hashes_of = holder);
    index(hashes.at(first.chunk_start), holder);
  }
  for (const auto& xorb : shard.xorbs) {
    for (const auto& chunk : xorb.chunks) {
      if (xet::is_global_dedup_eligible(chunk.hash, false))
        index(chunk.hash, xorb.xorb_hash.hex());
    }
  }
  append_journal("dedup.jsonl", journal);
}

xet::XorbInfo XetCas::xorb_info(const std::string& hash) const
{
  const auto hashes = chunk_hashes(hash);
  const auto layout = xorb_layout(hash);
  xet::XorbInfo info;
  info.xorb_hash = *xet::MerkleHash::from_hex(hash);
  for (std::size_t i = 0; i < hashes.size() && i < layout.chunks.size(); ++i) {
    info.chunks.push_back({xet::hmac(hashes[i], m_dedup_key), info.unpacked_size, layout.chunks[i].size, 0});
    info.unpacked_size += layout.chunks[i].size;
  }
  info.serialized_size = static_cast<std::uint32_t>(layout.chunks_end);
  return info;
}

std::optional<std::string> XetCas::dedup_answer(const std::string& chunk_hash) const
{
  if (!is_hex(chunk_hash, 64))
    return std::nullopt;
  std::string listing;
  {
    std::lock_guard lock(m_mutex);
    const auto it = m_dedup.find(chunk_hash);
    if (it == m_dedup.end())
      return std::nullopt;
    listing = it->second;
  }
  xet::Shard shard;
  for (const auto& xorb : split(listing, '\n')) {
    if (has_xorb(xorb))
      shard.xorbs.push_back(xorb_info(xorb));
  }
  xet::ShardFooter footer;
  footer.chunk_hash_hmac_key = m_dedup_key;
  footer.creation_timestamp = static_cast<std::uint64_t>(std::time(nullptr));
  footer.key_expiry = footer.creation_timestamp + k_key_lifetime_s;
  shard.footer = footer;
  const auto bytes = xet::serialize_shard(shard);
  return std::string(bytes.begin(), bytes.end());
}

} // namespace testhub
