#pragma once

// Xet for Hub repositories: the reader HubApi downloads Xet-stored files with, and the
// push of a commit's LFS objects through Xet (with a token asked directly, or when the LFS
// batch chose it), sealed segment by segment so that commits need not wait for it all.

#include "hubcache/hub/api.hpp"
#include "hubcache/hub/config.hpp"
#include "hubcache/util/hash.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hubcache::storage {

// Reads Xet files for a HubApi built from `config` (a read token per file, the CAS client's
// parallel range fetches bounded by config.workers).
hub::XetReader make_xet_reader(const hub::HubConfig& config);

struct XetPushStats {
  std::uint64_t new_bytes = 0;          // chunk bytes uploaded in xorbs
  std::uint64_t deduplicated_bytes = 0; // chunk bytes found earlier in the same push
  std::uint64_t stored_bytes = 0;       // chunk bytes the CAS already held (global dedup)
  std::size_t xorbs = 0;
};

// One push's LFS objects through Xet, in segments: each segment's files are packed into
// xorbs that go up as they fill (a chunk met earlier in the push, in any segment, is
// referenced, not sent again; chunks the CAS holds are found by chunk queries), and seal()
// sends the segment's shard once the CAS holds every xorb it names: from then on a commit
// may name those files by sha256, as for LFS. One CAS token (renewed as needed) for it all.
// Any failure throws (the caller falls back to LFS for what was not sealed).
class XetPush {
public:
  using SourceOf = std::function<hub::HubApi::UploadSource(const std::string& oid)>;
  // With a write token asked of the Hub directly (`token_url`, its xet-write-token route),
  // as huggingface_hub >= 1.20 does; nullptr when the route gives no token (nothing was
  // sent: the LFS batch decides).
  static std::unique_ptr<XetPush> open(const hub::HubConfig& config, const std::string& token_url);
  // With the token of an LFS batch answer that chose the "xet" transfer.
  static std::unique_ptr<XetPush> open(const hub::HubConfig& config, const std::vector<hub::LfsBatchObject>& answer);
  ~XetPush();
  XetPush(const XetPush&) = delete;
  XetPush& operator=(const XetPush&) = delete;

  // Packs `objects` (IntegrityError when a file no longer has the size and sha256 planned).
  void add(const std::vector<hub::LfsObjectRef>& objects, const SourceOf& source_of);
  // Packs a file whose sha256 is not known yet, hashed in the same read as its chunks (the
  // spec's upload flow); returns the sha256 (IntegrityError when it is no longer `size` long).
  util::Sha256Bytes add_unhashed(const std::string& path, std::uint64_t size);
  // Sends the segment's shard; returns what the push sent so far, in all.
  XetPushStats seal();

private:
  struct Session;
  explicit XetPush(std::unique_ptr<Session> session);
  std::unique_ptr<Session> m_session;
};

} // namespace hubcache::storage
