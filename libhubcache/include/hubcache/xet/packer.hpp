#pragma once

// Packs the files of one upload into xorbs and one shard: chunks already packed in this
// upload are referenced, not stored again (dedup within a push), and small files share
// xorbs. Each xorb is handed to a sink as soon as it is full, so memory stays at one xorb.
// With a dedup query (the CAS's global dedup, spec `deduplication.md`), chunks the CAS
// already holds are referenced in its xorbs instead of uploaded. Queries go out ahead of
// the packing (see UploadPacker::prefetch_queries), so their latency overlaps.

#include "hubcache/xet/hash.hpp"
#include "hubcache/xet/shard.hpp"
#include "hubcache/xet/xorb.hpp"

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hubcache::xet {

struct PackedFile {
  MerkleHash file_hash;
  std::string sha256; // hex
  std::uint64_t size = 0;
};

struct PackStats {
  std::uint64_t new_bytes = 0;          // chunk bytes packed into xorbs
  std::uint64_t deduplicated_bytes = 0; // chunk bytes found earlier in the same upload
  std::uint64_t stored_bytes = 0;       // chunk bytes the CAS already held (global dedup)
  std::size_t xorbs = 0;
  std::size_t dedup_queries = 0;
};

// Asks the CAS whether it holds a chunk: a shard whose xorb section lists stored xorbs
// (chunk hashes HMAC'd with its footer's key when that key is not zero), or nullopt.
// Called on other threads, up to dedup_queries_in_flight at once.
using DedupQuery = std::function<std::optional<Shard>(const MerkleHash& chunk)>;

// Global dedup query spacing after misses in a row, in bytes of new chunks: the first miss
// waits dedup_query_min_spacing, each further one twice as long, up to the JS client's
// INTERVAL_BETWEEN_REMOTE_DEDUP; a hit resets it (see UploadPacker::wants_query).
inline constexpr std::uint64_t dedup_query_min_spacing = 64 * 1024;
inline constexpr std::uint64_t dedup_query_interval = 4'000'000;

// How far packing may run ahead of a dedup answer it waits for: the chunks (and their
// bytes) kept until the answer says where they go, and the queries asked ahead meanwhile.
inline constexpr std::uint64_t dedup_lookahead_bytes = 8 * 1024 * 1024;
inline constexpr std::size_t dedup_lookahead_chunks = 2048;
inline constexpr std::size_t dedup_queries_in_flight = 4;

// The xorbs an upload cuts: an eighth of the 64 MiB the protocol allows, so that a push
// stays within 64 MB of memory (the xorb being filled and the one being uploaded) and a
// pull's ranges stay small, for a few more requests (one per 8 MiB of new chunks).
inline constexpr std::size_t upload_xorb_bytes = 8 * 1024 * 1024;

class UploadPacker {
public:
  // Receives each finished xorb: its hash and serialized bytes (handed over).
  using XorbSink = std::function<void(const MerkleHash& hash, std::vector<std::uint8_t> bytes)>;
  explicit UploadPacker(XorbSink sink, DedupQuery query = {}) : m_sink(std::move(sink)), m_query(std::move(query)) {}

  PackedFile add_file(const std::filesystem::path& path);
  PackedFile add_bytes(Bytes data);
  // Sends the xorb being filled; returns the shard (no footer, verification and sha256
  // entries) of the files added since the last call and the xorbs closed since. Packing may
  // go on after it: later files reference chunks packed before, in xorbs already sent.
  std::vector<std::uint8_t> finish();
  bool has_files() const noexcept { return !m_files.empty(); }
  // A xorb buffer the sink is done with (sent): the next xorb is built in it.
  void recycle(std::vector<std::uint8_t> buffer) noexcept { m_spare = std::move(buffer); }
  const PackStats& stats() const noexcept { return m_stats; }

private:
  struct Location {
    std::size_t xorb = 0; // index among this upload's xorbs, or remote_xorb | index in m_remote_xorbs
    std::uint32_t chunk = 0;
  };
  static constexpr std::size_t remote_xorb = std::size_t{1} << 63;
  // The chunks of one dedup answer, by their hash as it lists them (HMAC'd with `key`).
  struct RemoteChunks {
    MerkleHash key;
    std::map<MerkleHash, Location> chunks;
  };
  // A file's terms as its chunks are placed; the verification hashes and xorb hashes are
  // filled in at finish().
  struct PendingFile {
    FileInfo info;
    std::vector<std::size_t> term_xorbs;
    std::vector<std::vector<MerkleHash>> term_chunks;
    void append(const Location& at, const MerkleHash& hash, std::uint32_t chunk_size);
  };
  // A chunk that waits, with a copy of its bytes, for a dedup answer on it or before it.
  struct QueuedChunk {
    std::size_t file = 0;
    MerkleHash hash;
    std::vector<std::uint8_t> data;
    bool first_of_file = false;
  };
  // Where the dedup queries ahead of the placed chunks stand: the spacing they would have
  // if every query still unanswered misses, as of chunk `next` of the queue.
  struct Lookahead {
    std::uint64_t next = 0; // sequence number of the next queued chunk to look at
    std::uint64_t bytes_since_miss = 0;
    std::uint64_t spacing = 0;
    std::set<MerkleHash> new_chunks; // looked at, would be packed
    bool stale = true;
  };
  class FileBuilder;
  // One file whose bytes `read` hands over in order, piece by piece.
  PackedFile add_stream(const std::function<void(const std::function<void(Bytes)>&)>& read);
  void add_chunk(std::size_t file, const MerkleHash& hash, Bytes data, bool first_of_file);
  bool place(std::size_t file, const MerkleHash& hash, Bytes data, bool first_of_file, bool wait);
  void place_queued(bool drain);
  void prefetch_queries();
  bool wants_query(const MerkleHash& hash, bool first_of_file, std::uint64_t bytes_since_miss,
                   std::uint64_t spacing) const;
  std::future<std::optional<Shard>>& launch(const MerkleHash& hash);
  std::size_t queries_unanswered() const;
  void close_xorb();
  std::optional<Location> stored_location(const MerkleHash& hash) const;
  void remember(const Shard& answer);

  XorbSink m_sink;
  XorbBuilder m_builder{upload_xorb_bytes};
  std::vector<std::uint8_t> m_spare;
  std::vector<MerkleHash> m_xorb_hashes; // of closed xorbs
  std::vector<XorbInfo> m_xorb_infos;
  std::map<MerkleHash, Location> m_packed;
  std::vector<PendingFile> m_files;
  DedupQuery m_query;
  std::vector<MerkleHash> m_remote_xorbs;
  std::map<MerkleHash, std::size_t> m_remote_xorb_index;
  std::vector<RemoteChunks> m_remote;
  std::set<MerkleHash> m_asked; // answers taken into account
  std::uint64_t m_bytes_since_miss = 0;
  std::uint64_t m_query_spacing = 0;
  std::deque<QueuedChunk> m_queue;
  std::uint64_t m_queue_front = 0; // sequence number of m_queue.front()
  std::uint64_t m_queued_bytes = 0;
  Lookahead m_lookahead;
  PackStats m_stats;
  // Last: joined (their queries finish) before anything they use goes.
  std::map<MerkleHash, std::future<std::optional<Shard>>> m_launched;
};

} // namespace hubcache::xet
