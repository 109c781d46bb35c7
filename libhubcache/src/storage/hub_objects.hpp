#pragma once

// How a push's LFS objects reach a Hub repo before the commits that name them: packed into
// a Xet push sealed segment by segment (with a write token asked of the Hub directly, else
// when the LFS batch offers Xet), or through the LFS batch and its uploads. It remembers what
// is on the Hub across the passes of a push; after one Xet failure the rest goes through LFS.

#include "hub_xet.hpp"

#include "hubcache/hub/api.hpp"
#include "hubcache/util/hash.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace hubcache::storage {

class HubObjectUploader {
public:
  // Called with the bytes of each piece an LFS upload sent.
  using Sent = std::function<void(std::uint64_t bytes)>;
  HubObjectUploader(hub::HubApi& api, std::string repo_id, std::string branch, XetPush::SourceOf source_of, Sent sent,
                    std::vector<std::string>& warnings);

  // On the Hub: an upload finished, or its segment was sealed.
  bool on_hub(const util::Sha256Bytes& sha256) const { return m_on_hub.count(sha256) != 0; }
  // Packed into the Xet segment not sealed yet.
  bool in_segment(const util::Sha256Bytes& sha256) const { return m_unsealed.count(sha256) != 0; }
  bool segment_open() const { return !m_unsealed.empty(); }

  // Sends `objects` (`digests`: the same, as bytes). True when they went into the Xet
  // segment (on the Hub once it is sealed); false when LFS uploaded them (on the Hub now).
  bool send(const std::vector<hub::LfsObjectRef>& objects, const std::set<util::Sha256Bytes>& digests);
  // A file whose sha256 is not known yet.
  struct UnhashedFile {
    std::string path;
    std::uint64_t size = 0;
  };
  // Packs `files` into the Xet segment, each hashed in the same read as its chunks;
  // `packed(k, sha256)` names each one packed. Returns how many were: none when Xet does not
  // carry this push (LFS, or the LFS batch has not offered it yet), fewer than all when it
  // failed on the way (the caller sends the rest through LFS).
  std::size_t pack_unhashed(const std::vector<UnhashedFile>& files,
                            const std::function<void(std::size_t k, const util::Sha256Bytes& sha256)>& packed);
  // Sends the segment's shard. After it, xet_failed() says whether what the segment held
  // must be sent again (send() then goes through LFS).
  void seal();
  bool xet_failed() const { return m_xet_failed; }
  const XetPushStats& xet() const { return m_xet; }

private:
  bool send_through_lfs(const std::vector<hub::LfsObjectRef>& objects, const std::set<util::Sha256Bytes>& digests);
  void pack(const std::vector<hub::LfsObjectRef>& objects, const std::set<util::Sha256Bytes>& digests);
  void fail_xet(const Error& error);
  // The Xet push, opened with a token asked directly the first time; nullptr when Xet does
  // not carry this push (yet).
  XetPush* xet_session();

  hub::HubApi& m_api;
  std::string m_repo_id;
  std::string m_branch;
  XetPush::SourceOf m_source_of;
  Sent m_sent;
  std::vector<std::string>& m_warnings;
  std::set<util::Sha256Bytes> m_on_hub;   // survives re-plans: objects stay on the Hub
  std::set<util::Sha256Bytes> m_unsealed; // packed into the segment not sealed yet
  std::unique_ptr<XetPush> m_xet_push;    // open while Xet carries the push
  bool m_xet_failed = false;              // one Xet failure: LFS for the rest of the push
  bool m_xet_token_refused = false;       // no write token asked directly: the LFS batch negotiates
  XetPushStats m_xet;
};

} // namespace hubcache::storage
