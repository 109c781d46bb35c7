#include "hub_objects.hpp"

namespace hubcache::storage {

HubObjectUploader::HubObjectUploader(hub::HubApi& api, std::string repo_id, std::string branch,
                                     XetPush::SourceOf source_of, Sent sent, std::vector<std::string>& warnings)
  : m_api(api), m_repo_id(std::move(repo_id)), m_branch(std::move(branch)), m_source_of(std::move(source_of)),
    m_sent(std::move(sent)), m_warnings(warnings)
{}

bool HubObjectUploader::send(const std::vector<hub::LfsObjectRef>& objects, const std::set<util::Sha256Bytes>& digests)
{
  if (objects.empty()) {
    return false;
  }
  try {
    if (xet_session() != nullptr) {
      pack(objects, digests);
      return true;
    }
  } catch (const Error& error) {
    fail_xet(error); // these go through LFS below, the segment's earlier ones once the caller sends them again
  }
  return send_through_lfs(objects, digests);
}

std::size_t HubObjectUploader::pack_unhashed(const std::vector<UnhashedFile>& files,
                                             const std::function<void(std::size_t k, const util::Sha256Bytes&)>& packed)
{
  std::size_t count = 0;
  try {
    if (xet_session() == nullptr) {
      return 0;
    }
    for (; count < files.size(); ++count) {
      const auto sha256 = m_xet_push->add_unhashed(files[count].path, files[count].size);
      m_unsealed.insert(sha256);
      packed(count, sha256);
    }
  } catch (const Error& error) {
    fail_xet(error);
  }
  return count;
}

XetPush* HubObjectUploader::xet_session()
{
  // A write token first, as huggingface_hub >= 1.20 asks for it: no LFS batch (a request per
  // 256 objects) when the Hub stores through Xet.
  if (!m_api.config().xet || m_xet_failed) {
    return nullptr;
  }
  if (!m_xet_push && !m_xet_token_refused) {
    m_xet_push = XetPush::open(m_api.config(), m_api.api_url(m_repo_id, "xet-write-token/" + m_branch));
    m_xet_token_refused = !m_xet_push; // the LFS batch offers Xet, or not
  }
  return m_xet_push.get();
}

bool HubObjectUploader::send_through_lfs(const std::vector<hub::LfsObjectRef>& objects,
                                         const std::set<util::Sha256Bytes>& digests)
{
  const bool offer_xet = m_api.config().xet && !m_xet_failed;
  auto answer = m_api.lfs_batch(m_repo_id, m_branch, objects, offer_xet);
  std::vector<hub::LfsObjectRef> to_send;
  for (const auto& object : answer) {
    if (object.upload) {
      to_send.push_back({object.oid, object.size});
    }
  }
  if (to_send.empty()) {
    m_on_hub.insert(digests.begin(), digests.end()); // the repo holds them all: nothing to send
    return false;
  }
  if (offer_xet && answer.front().xet) {
    try {
      m_xet_push = XetPush::open(m_api.config(), answer);
      pack(to_send, digests);
      return true;
    } catch (const Error& error) {
      fail_xet(error);
      answer = m_api.lfs_batch(m_repo_id, m_branch, objects, false);
    }
  }
  m_api.lfs_upload(answer, m_source_of, m_sent);
  m_on_hub.insert(digests.begin(), digests.end());
  return false;
}

void HubObjectUploader::pack(const std::vector<hub::LfsObjectRef>& objects, const std::set<util::Sha256Bytes>& digests)
{
  m_xet_push->add(objects, m_source_of);
  m_unsealed.insert(digests.begin(), digests.end());
}

void HubObjectUploader::seal()
{
  if (!m_xet_push || m_unsealed.empty()) {
    return;
  }
  try {
    m_xet = m_xet_push->seal();
    m_on_hub.merge(m_unsealed);
    m_unsealed.clear();
  } catch (const Error& error) {
    fail_xet(error);
  }
}

void HubObjectUploader::fail_xet(const Error& error)
{
  // Nothing of the segment is committed yet: it and the rest of this push go through LFS.
  m_xet_failed = true;
  m_xet_push.reset();
  m_unsealed.clear();
  m_warnings.push_back(std::string("Xet upload failed (") + error.what() + "); pushing through LFS instead");
}

} // namespace hubcache::storage
