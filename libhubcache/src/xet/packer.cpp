#include "hubcache/xet/packer.hpp"

#include "hubcache/util/hash.hpp"
#include "hubcache/xet/chunker.hpp"
#include "hubcache/xet/file_hasher.hpp"
#include "hubcache/xet/merkle.hpp"

#include <algorithm>
#include <cstring>

namespace hubcache::xet {

// One file being packed: its chunks' nodes, its terms so far and its sha256.
class UploadPacker::FileBuilder {
public:
  PendingFile pending;
  std::vector<HashedNode> nodes;
  std::vector<std::vector<MerkleHash>> term_chunks; // chunk hashes of each term, for verification
  std::vector<Location> term_starts;
  util::Hasher sha256{util::HashAlgorithm::sha256};
  std::uint64_t size = 0;

  void append(const Location& at, const MerkleHash& hash, std::uint32_t chunk_size)
  {
    auto& terms = pending.info.terms;
    const bool extends = !terms.empty() && pending.term_xorbs.back() == at.xorb && terms.back().chunk_end == at.chunk;
    if (!extends) {
      terms.push_back({});
      terms.back().chunk_start = at.chunk;
      terms.back().chunk_end = at.chunk;
      pending.term_xorbs.push_back(at.xorb);
      term_chunks.emplace_back();
    }
    terms.back().chunk_end = at.chunk + 1;
    terms.back().unpacked_size += chunk_size;
    term_chunks.back().push_back(hash);
    nodes.push_back({hash, chunk_size});
  }

  PackedFile finish()
  {
    for (const auto& hashes : term_chunks) {
      pending.info.verification.push_back(verification_hash(hashes));
    }
    pending.info.file_hash = file_hash(nodes);
    const auto digest = sha256.raw_digest();
    std::array<std::uint8_t, hash_size> raw{};
    std::memcpy(raw.data(), digest.data(), hash_size);
    pending.info.sha256 = MerkleHash::from_sha256(raw);
    return PackedFile{pending.info.file_hash, pending.info.sha256->hex(), size};
  }
};

std::optional<UploadPacker::Location> UploadPacker::stored_location(const MerkleHash& hash) const
{
  for (const auto& answer : m_remote) {
    const auto listed = answer.key.is_zero() ? hash : hmac(hash, answer.key);
    if (const auto found = answer.chunks.find(listed); found != answer.chunks.end()) {
      return found->second;
    }
  }
  return std::nullopt;
}

// Queries the CAS for an eligible chunk not already known (xet-core's rule: a file's first
// chunk or a hash 0 mod 1024) and keeps every chunk its answer lists, so that later chunks
// of those xorbs match without asking. xet-core asks for every such chunk; to keep a first
// push of many small files to a few queries, each miss in a row doubles the bytes of new
// chunks the next query waits for (from dedup_query_min_spacing up to dedup_query_interval,
// the JS client's spacing), and a hit asks again at once.
std::optional<UploadPacker::Location> UploadPacker::ask_cas(const MerkleHash& hash, bool first_of_file)
{
  if (!m_query || m_bytes_since_miss < m_query_spacing || !is_global_dedup_eligible(hash, first_of_file)
      || !m_asked.insert(hash).second) {
    return std::nullopt;
  }
  ++m_stats.dedup_queries;
  const auto answer = m_query(hash);
  if (answer) {
    remember(*answer);
  }
  auto found = stored_location(hash);
  if (found) {
    m_query_spacing = 0;
  } else {
    m_bytes_since_miss = 0;
    m_query_spacing = std::clamp(2 * m_query_spacing, dedup_query_min_spacing, dedup_query_interval);
  }
  return found;
}

// Answers with the same HMAC key (the CAS's, per period) share one table: a lookup costs one
// HMAC per key, not per answer.
void UploadPacker::remember(const Shard& answer)
{
  const auto key = answer.footer ? answer.footer->chunk_hash_hmac_key : MerkleHash{};
  auto known = std::find_if(m_remote.begin(), m_remote.end(), [&](const RemoteChunks& r) { return r.key == key; });
  if (known == m_remote.end()) {
    known = m_remote.insert(m_remote.end(), RemoteChunks{key, {}});
  }
  for (const auto& xorb : answer.xorbs) {
    const auto [seen, fresh] = m_remote_xorb_index.emplace(xorb.xorb_hash, m_remote_xorbs.size());
    if (fresh) {
      m_remote_xorbs.push_back(xorb.xorb_hash);
    }
    const auto index = remote_xorb | seen->second;
    for (std::uint32_t c = 0; c < xorb.chunks.size(); ++c) {
      known->chunks.emplace(xorb.chunks[c].hash, Location{index, c});
    }
  }
}

void UploadPacker::add_chunk(FileBuilder& file, const MerkleHash& hash, Bytes data)
{
  const auto size = static_cast<std::uint32_t>(data.size());
  if (const auto found = m_packed.find(hash); found != m_packed.end()) {
    m_stats.deduplicated_bytes += size;
    file.append(found->second, hash, size);
    return;
  }
  auto stored = stored_location(hash);
  if (!stored) {
    stored = ask_cas(hash, file.nodes.empty());
  }
  if (stored) {
    m_stats.stored_bytes += size;
    file.append(*stored, hash, size);
    return;
  }
  m_bytes_since_miss += size;
  if (!m_builder.add(hash, data)) {
    close_xorb();
    m_builder.add(hash, data);
  }
  const Location at{m_xorb_hashes.size(), static_cast<std::uint32_t>(m_builder.chunks().size() - 1)};
  m_packed.emplace(hash, at);
  m_stats.new_bytes += size;
  file.append(at, hash, size);
}

void UploadPacker::close_xorb()
{
  if (m_builder.empty()) {
    return;
  }
  XorbInfo info;
  info.xorb_hash = m_builder.hash();
  std::uint32_t offset = 0;
  for (const auto& chunk : m_builder.chunks()) {
    info.chunks.push_back({chunk.hash, offset, chunk.size, 0});
    offset += chunk.size;
  }
  info.unpacked_size = offset;
  info.serialized_size = static_cast<std::uint32_t>(m_builder.bytes().size());
  m_xorb_hashes.push_back(info.xorb_hash);
  m_sink(info.xorb_hash, m_builder.take_bytes());
  m_xorb_infos.push_back(std::move(info));
  m_builder.clear();
  ++m_stats.xorbs;
}

PackedFile UploadPacker::add_bytes(Bytes data)
{
  FileBuilder file;
  Chunker chunker;
  const ChunkSink sink = [&](const Chunk& chunk, Bytes bytes) { add_chunk(file, chunk.hash, bytes); };
  file.sha256.update(std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
  file.size = data.size();
  chunker.update(data, sink);
  chunker.finish(sink);
  auto packed = file.finish();
  m_files.push_back(std::move(file.pending));
  return packed;
}

PackedFile UploadPacker::add_file(const std::filesystem::path& path)
{
  FileBuilder file;
  Chunker chunker;
  const ChunkSink sink = [&](const Chunk& chunk, Bytes bytes) { add_chunk(file, chunk.hash, bytes); };
  for_each_block(path, [&](Bytes piece) {
    file.sha256.update(std::string_view(reinterpret_cast<const char*>(piece.data()), piece.size()));
    file.size += piece.size();
    chunker.update(piece, sink);
  });
  chunker.finish(sink);
  auto packed = file.finish();
  m_files.push_back(std::move(file.pending));
  return packed;
}

std::vector<std::uint8_t> UploadPacker::finish()
{
  close_xorb();
  Shard shard;
  for (auto& file : m_files) {
    for (std::size_t t = 0; t < file.info.terms.size(); ++t) {
      const auto index = file.term_xorbs[t];
      file.info.terms[t].xorb_hash =
        (index & remote_xorb) != 0 ? m_remote_xorbs.at(index & ~remote_xorb) : m_xorb_hashes.at(index);
    }
    shard.files.push_back(std::move(file.info));
  }
  shard.xorbs = std::move(m_xorb_infos);
  m_files.clear();
  return serialize_shard(shard);
}

} // namespace hubcache::xet
