#pragma once

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/compilecache/digest_cache.hpp"
#include "hubcache/compilecache/remote_snapshot.hpp"
#include "hubcache/compilecache/usage.hpp"
#include "hubcache/util/environment.hpp"

#include <filesystem>
#include <optional>
#include <string_view>

namespace hubcache::compilecache {

// What neuron-cache remembers about one local compile cache, outside its root: the digests
// of its files, the flags files found good, each entry's last use, and per repo what the
// repo held at a head and whether the last push left it holding everything. Each is read
// when first asked for; save() writes what was read and changed (nothing for a read-only
// run such as a dry run) and lets it go.
class LocalCache {
public:
  // The remembered files at their default places (see each type's default_path).
  LocalCache(std::filesystem::path root, const util::Environment& env, bool read_only = false);

  const std::filesystem::path& root() const { return m_root; }
  DigestCache& digests();
  FlagsMemo& flags_memo();
  UsageRecords& usage();
  // What `repo_spec`'s repo held at a head, and the push that left it whole.
  RemoteSnapshot snapshot(std::string_view repo_spec) const;

  void save();

private:
  std::filesystem::path m_root;
  const util::Environment& m_env;
  bool m_read_only;
  std::optional<DigestCache> m_digests;
  std::optional<FlagsMemo> m_flags_memo;
  std::optional<UsageRecords> m_usage;
};

} // namespace hubcache::compilecache
