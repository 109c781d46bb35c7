#include "hubcache/xet/cas_upload.hpp"

namespace hubcache::xet {

CasUpload::CasUpload(CasClient& cas)
  : m_cas(cas), m_uploads(cas),
    m_packer([this](const MerkleHash& hash,
                    std::vector<std::uint8_t> bytes) { m_packer.recycle(m_uploads.send(hash, std::move(bytes))); },
             [this](const MerkleHash& chunk) { return m_cas.query_chunk(chunk); })
{}

PackStats CasUpload::finish()
{
  if (m_packer.has_files()) {
    auto shard = m_packer.finish();
    m_uploads.wait(); // the shard names the xorbs: the CAS must hold them first
    m_cas.upload_shard(shard);
  }
  return m_packer.stats();
}

} // namespace hubcache::xet
