#pragma once

// Packs the files of one upload into xorbs and one shard: chunks already packed in this
// upload are referenced, not stored again (dedup within a push), and small files share
// xorbs. Each xorb is handed to a sink as soon as it is full, so memory stays at one xorb.

#include "hubcache/xet/hash.hpp"
#include "hubcache/xet/shard.hpp"
#include "hubcache/xet/xorb.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
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
  std::size_t xorbs = 0;
};

class UploadPacker {
public:
  // Receives each finished xorb: its hash and serialized bytes.
  using XorbSink = std::function<void(const MerkleHash& hash, const std::vector<std::uint8_t>& bytes)>;
  explicit UploadPacker(XorbSink sink) : m_sink(std::move(sink)) {}

  PackedFile add_file(const std::filesystem::path& path);
  PackedFile add_bytes(Bytes data);
  // Sends the last xorb; returns the shard (no footer, verification and sha256 entries).
  std::vector<std::uint8_t> finish();
  const PackStats& stats() const noexcept { return m_stats; }

private:
  struct Location {
    std::size_t xorb = 0; // index among this upload's xorbs
    std::uint32_t chunk = 0;
  };
  struct PendingFile {
    FileInfo info; // term xorb hashes filled in at finish()
    std::vector<std::size_t> term_xorbs;
  };
  class FileBuilder;
  void add_chunk(FileBuilder& file, const MerkleHash& hash, Bytes data);
  void close_xorb();

  XorbSink m_sink;
  XorbBuilder m_builder;
  std::vector<MerkleHash> m_xorb_hashes; // of closed xorbs
  std::vector<XorbInfo> m_xorb_infos;
  std::map<MerkleHash, Location> m_packed;
  std::vector<PendingFile> m_files;
  PackStats m_stats;
};

} // namespace hubcache::xet
