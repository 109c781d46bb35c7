#include "hubcache/xet/packer.hpp"

#include "hubcache/util/hash.hpp"
#include "hubcache/xet/chunker.hpp"
#include "hubcache/xet/file_hasher.hpp"
#include "hubcache/xet/merkle.hpp"

#include <algorithm>
#include <cstring>

namespace hubcache::xet {

void UploadPacker::PendingFile::append(const Location& at, const MerkleHash& hash, std::uint32_t chunk_size)
{
  auto& terms = info.terms;
  const bool extends = !terms.empty() && term_xorbs.back() == at.xorb && terms.back().chunk_end == at.chunk;
  if (!extends) {
    terms.push_back({});
    terms.back().chunk_start = at.chunk;
    terms.back().chunk_end = at.chunk;
    term_xorbs.push_back(at.xorb);
    term_chunks.emplace_back();
  }
  terms.back().chunk_end = at.chunk + 1;
  terms.back().unpacked_size += chunk_size;
  term_chunks.back().push_back(hash);
}

// One file being read: its chunks' nodes and its sha256 (its terms are in m_files, placed
// as dedup answers allow).
class UploadPacker::FileBuilder {
public:
  std::size_t index = 0;
  std::vector<HashedNode> nodes;
  util::Hasher sha256{util::HashAlgorithm::sha256};
  std::uint64_t size = 0;

  PackedFile finish(PendingFile& pending)
  {
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

// A chunk is worth a query when it is eligible (xet-core's rule: a file's first chunk or a
// hash 0 mod 1024) and not asked before. xet-core asks for every such chunk; to keep a
// first push of many small files to a few queries, each miss in a row doubles the bytes of
// new chunks the next query waits for (from dedup_query_min_spacing up to
// dedup_query_interval, the JS client's spacing), and a hit asks again at once.
bool UploadPacker::wants_query(const MerkleHash& hash, bool first_of_file, std::uint64_t bytes_since_miss,
                               std::uint64_t spacing) const
{
  return m_query && bytes_since_miss >= spacing && is_global_dedup_eligible(hash, first_of_file)
         && m_asked.count(hash) == 0;
}

std::future<std::optional<Shard>>& UploadPacker::launch(const MerkleHash& hash)
{
  auto found = m_launched.find(hash);
  if (found == m_launched.end()) {
    ++m_stats.dedup_queries;
    found = m_launched.emplace(hash, std::async(std::launch::async, [this, hash] { return m_query(hash); })).first;
  }
  return found->second;
}

std::size_t UploadPacker::queries_unanswered() const
{
  return static_cast<std::size_t>(std::count_if(m_launched.begin(), m_launched.end(), [](const auto& query) {
    return query.second.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
  }));
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

// Places one chunk: a reference to a chunk already packed or stored, or into the xorb being
// filled. At a query, false when its answer is not in yet and `wait` is false; nothing is
// changed then, and the same call later decides the same way.
bool UploadPacker::place(std::size_t file, const MerkleHash& hash, Bytes data, bool first_of_file, bool wait)
{
  const auto size = static_cast<std::uint32_t>(data.size());
  auto& pending = m_files[file];
  if (const auto found = m_packed.find(hash); found != m_packed.end()) {
    m_stats.deduplicated_bytes += size;
    pending.append(found->second, hash, size);
    return true;
  }
  auto stored = stored_location(hash);
  if (!stored && wants_query(hash, first_of_file, m_bytes_since_miss, m_query_spacing)) {
    auto& query = launch(hash);
    if (!wait && query.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      return false;
    }
    auto answer = query.get();
    m_launched.erase(hash);
    m_asked.insert(hash);
    if (answer) {
      remember(*answer);
      m_lookahead.stale = true; // what is known changed: the queries ahead are guessed again
    }
    stored = stored_location(hash);
    if (stored) {
      m_query_spacing = 0;
    } else {
      m_bytes_since_miss = 0;
      m_query_spacing = std::clamp(2 * m_query_spacing, dedup_query_min_spacing, dedup_query_interval);
    }
  }
  if (stored) {
    m_stats.stored_bytes += size;
    pending.append(*stored, hash, size);
    return true;
  }
  m_bytes_since_miss += size;
  if (!m_builder.add(hash, data)) {
    close_xorb();
    m_builder.add(hash, data);
  }
  const Location at{m_xorb_hashes.size(), static_cast<std::uint32_t>(m_builder.chunks().size() - 1)};
  m_packed.emplace(hash, at);
  m_stats.new_bytes += size;
  pending.append(at, hash, size);
  return true;
}

// A chunk goes in at once unless chunks before it wait, or it waits for its own answer:
// then it is kept, with its bytes, and packing goes on ahead while the queries it would
// ask next go out (at most dedup_lookahead_bytes kept: then the oldest answer is waited for).
void UploadPacker::add_chunk(std::size_t file, const MerkleHash& hash, Bytes data, bool first_of_file)
{
  if (m_queue.empty() && place(file, hash, data, first_of_file, false)) {
    m_lookahead.stale = true; // placed without being looked at: the guess starts again from here
    return;
  }
  m_queue.push_back(QueuedChunk{file, hash, std::vector<std::uint8_t>(data.begin(), data.end()), first_of_file});
  m_queued_bytes += data.size();
  place_queued(false);
  prefetch_queries();
}

// Places the kept chunks whose answers are in; with `drain`, all of them, waiting.
void UploadPacker::place_queued(bool drain)
{
  while (!m_queue.empty()) {
    const bool full = m_queued_bytes > dedup_lookahead_bytes || m_queue.size() > dedup_lookahead_chunks;
    auto& chunk = m_queue.front();
    if (!place(chunk.file, chunk.hash, chunk.data, chunk.first_of_file, drain || full)) {
      return;
    }
    m_queued_bytes -= chunk.data.size();
    m_lookahead.new_chunks.erase(chunk.hash);
    m_queue.pop_front();
    ++m_queue_front;
  }
}

// Walks the kept chunks as the placing will, supposing every query not answered yet
// misses (the common case: new chunks), and asks ahead the queries that supposes, up to
// dedup_queries_in_flight at once. A wrong guess costs a query, never a wrong placing:
// the placing uses only the answers to the queries it asks itself, in order.
void UploadPacker::prefetch_queries()
{
  auto& ahead = m_lookahead;
  // After a hit the next chunks are likely stored too (a re-push): a guess of misses would
  // mostly ask queries the answer makes needless.
  if (!m_query || (m_query_spacing == 0 && !m_asked.empty())) {
    return;
  }
  if (ahead.stale || ahead.next < m_queue_front) {
    ahead = Lookahead{m_queue_front, m_bytes_since_miss, m_query_spacing, {}, false};
  }
  const auto end = m_queue_front + m_queue.size();
  for (; ahead.next < end; ++ahead.next) {
    const auto& chunk = m_queue[ahead.next - m_queue_front];
    if (m_packed.count(chunk.hash) != 0 || ahead.new_chunks.count(chunk.hash) != 0 || stored_location(chunk.hash)) {
      continue;
    }
    if (wants_query(chunk.hash, chunk.first_of_file, ahead.bytes_since_miss, ahead.spacing)) {
      if (m_launched.count(chunk.hash) == 0 && queries_unanswered() >= dedup_queries_in_flight) {
        return; // looked at again once an answer is in
      }
      launch(chunk.hash);
      ahead.bytes_since_miss = 0;
      ahead.spacing = std::clamp(2 * ahead.spacing, dedup_query_min_spacing, dedup_query_interval);
    }
    ahead.bytes_since_miss += chunk.data.size();
    ahead.new_chunks.insert(chunk.hash);
  }
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
  if (m_spare.capacity() > 0) {
    m_builder.reuse(std::move(m_spare));
    m_spare = {};
  }
  ++m_stats.xorbs;
}

PackedFile UploadPacker::add_bytes(Bytes data)
{
  return add_stream([&](const std::function<void(Bytes)>& piece) { piece(data); });
}

PackedFile UploadPacker::add_file(const std::filesystem::path& path)
{
  return add_stream([&](const std::function<void(Bytes)>& piece) { for_each_block(path, piece); });
}

PackedFile UploadPacker::add_stream(const std::function<void(const std::function<void(Bytes)>&)>& read)
{
  FileBuilder file;
  file.index = m_files.size();
  m_files.emplace_back();
  Chunker chunker;
  const ChunkSink sink = [&](const Chunk& chunk, Bytes bytes) {
    add_chunk(file.index, chunk.hash, bytes, file.nodes.empty());
    file.nodes.push_back({chunk.hash, bytes.size()});
  };
  read([&](Bytes piece) {
    file.sha256.update(std::string_view(reinterpret_cast<const char*>(piece.data()), piece.size()));
    file.size += piece.size();
    chunker.update(piece, sink);
  });
  chunker.finish(sink);
  return file.finish(m_files[file.index]);
}

std::vector<std::uint8_t> UploadPacker::finish()
{
  place_queued(true);
  close_xorb();
  Shard shard;
  for (auto& file : m_files) {
    for (std::size_t t = 0; t < file.info.terms.size(); ++t) {
      const auto index = file.term_xorbs[t];
      file.info.terms[t].xorb_hash =
        (index & remote_xorb) != 0 ? m_remote_xorbs.at(index & ~remote_xorb) : m_xorb_hashes.at(index);
      file.info.verification.push_back(verification_hash(file.term_chunks[t]));
    }
    shard.files.push_back(std::move(file.info));
  }
  shard.xorbs = std::move(m_xorb_infos);
  m_xorb_infos.clear();
  m_files.clear();
  return serialize_shard(shard);
}

} // namespace hubcache::xet
