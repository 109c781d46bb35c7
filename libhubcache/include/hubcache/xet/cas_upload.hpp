#pragma once

// One upload of many files into the Xet CAS, as every push (Hub repo or bucket) makes it:
// files packed into xorbs that go up on a second thread while the next is packed, chunks
// the CAS already holds left out (global dedup), and the shard last, once the CAS holds
// every xorb it names.

#include "hubcache/xet/cas_client.hpp"
#include "hubcache/xet/packer.hpp"

namespace hubcache::xet {

class CasUpload {
public:
  explicit CasUpload(CasClient& cas);
  CasUpload(const CasUpload&) = delete;
  CasUpload& operator=(const CasUpload&) = delete;

  PackedFile add_file(const std::filesystem::path& path) { return m_packer.add_file(path); }
  PackedFile add_bytes(Bytes data) { return m_packer.add_bytes(data); }
  // Sends the xorb being filled, waits for the CAS to hold them all, uploads the shard of
  // the files added since the last call (none: nothing is sent); returns where the bytes
  // went, in all. Files may be added after it, for the next shard.
  PackStats finish();

private:
  CasClient& m_cas;
  BackgroundXorbUploads m_uploads;
  UploadPacker m_packer;
};

} // namespace hubcache::xet
