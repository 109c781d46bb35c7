#include "hubcache/compilecache/local_cache.hpp"

namespace hubcache::compilecache {

LocalCache::LocalCache(std::filesystem::path root, const util::Environment& env, bool read_only)
  : m_root(std::move(root)), m_env(env), m_read_only(read_only)
{}

DigestCache& LocalCache::digests()
{
  if (!m_digests) {
    m_digests.emplace(DigestCache::default_path(m_root, m_env));
  }
  return *m_digests;
}

FlagsMemo& LocalCache::flags_memo()
{
  if (!m_flags_memo) {
    m_flags_memo.emplace(FlagsMemo::default_path(m_root, m_env));
  }
  return *m_flags_memo;
}

UsageRecords& LocalCache::usage()
{
  if (!m_usage) {
    m_usage.emplace(UsageRecords::default_path(m_root, m_env));
  }
  return *m_usage;
}

RemoteSnapshot LocalCache::snapshot(std::string_view repo_spec) const
{
  return RemoteSnapshot(RemoteSnapshot::default_path(m_root, repo_spec, m_env));
}

void LocalCache::save()
{
  if (m_read_only) {
    return;
  }
  // Each is written once: asked for again, it is read again.
  if (m_flags_memo) {
    m_flags_memo->save();
    m_flags_memo.reset();
  }
  if (m_usage) {
    m_usage->save();
    m_usage.reset();
  }
  if (m_digests) {
    m_digests->save();
    m_digests.reset();
  }
}

} // namespace hubcache::compilecache
