#pragma once

// Xet for Hub repositories: the reader HubApi downloads Xet-stored files with, and the
// push of a commit's LFS objects through Xet (with a token asked directly, or when the LFS
// batch chose it).

#include "hubcache/hub/api.hpp"
#include "hubcache/hub/config.hpp"

#include <cstdint>
#include <functional>
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

// Uploads the objects a batch answered with the "xet" transfer: their chunks packed into
// shared xorbs (each chunk once), then one shard naming every file with its sha256. The
// commit that follows names them by sha256 as for LFS. Throws on any failure (the caller
// falls back to LFS).
XetPushStats push_through_xet(const hub::HubConfig& config, const std::vector<hub::LfsBatchObject>& answer,
                              const std::function<hub::HubApi::UploadSource(const std::string& oid)>& source_of);
// The same for `objects` with a write token asked of the Hub directly (`token_url`, its
// xet-write-token route), without an LFS batch, as huggingface_hub >= 1.20 does: objects the
// repo already holds cost a chunk query, not an upload. nullopt when the Hub answers that
// route with no token (nothing was sent: the LFS batch decides); throws on a failure after.
std::optional<XetPushStats>
push_through_xet(const hub::HubConfig& config, const std::string& token_url,
                 const std::vector<hub::LfsObjectRef>& objects,
                 const std::function<hub::HubApi::UploadSource(const std::string& oid)>& source_of);

} // namespace hubcache::storage
