#pragma once

#include "hubcache/util/hash.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace hubcache::hub {

// Where downloaded bytes go. `restart()` drops what was written (the server ignored our
// Range); `digests()` reads back what was written when streaming hashes were impossible.
class DownloadTarget {
public:
  virtual ~DownloadTarget() = default;
  virtual void restart() = 0;
  virtual void write(std::string_view chunk) = 0;
  virtual util::FileDigests digests() = 0;
};

// The content of one file in memory (for small files).
class StringDownloadTarget final : public DownloadTarget {
public:
  void restart() override { content.clear(); }
  void write(std::string_view chunk) override { content.append(chunk); }
  util::FileDigests digests() override;
  std::string content;
};

struct DownloadResult {
  std::uint64_t size = 0;
  std::string sha256;
  std::string commit; // X-Repo-Commit, when sent
};

} // namespace hubcache::hub
