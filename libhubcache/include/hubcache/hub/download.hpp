#pragma once

#include "hubcache/util/fs.hpp"
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
  // The announced size, before the first byte: a target may pick how to write by it.
  virtual void expect(std::uint64_t /*size*/) {}
  virtual void restart() = 0;
  virtual void write(std::string_view chunk) = 0;
  virtual util::FileDigests digests() = 0;
};

// The content of one file in memory (for small files). A file beyond `limit` bytes is not
// one a reader of small files should hold: write() throws InvalidArgument instead of
// growing without bound (a hostile repo can hold a file of any size).
class StringDownloadTarget final : public DownloadTarget {
public:
  explicit StringDownloadTarget(std::uint64_t limit = util::k_default_read_limit) : m_limit(limit) {}
  void restart() override { content.clear(); }
  void write(std::string_view chunk) override;
  util::FileDigests digests() override;
  std::string content;

private:
  std::uint64_t m_limit;
};

struct DownloadResult {
  std::uint64_t size = 0;
  std::string sha256;
  std::string commit;        // X-Repo-Commit, when sent
  std::string git_blob_sha1; // when computed (regular files, or asked for by the listing)
};

// What a tree listing said of a file, which its download must match as well as what the
// resolve answer announces (the answer may describe other bytes than the listing did).
struct ListedContent {
  std::uint64_t size = 0;
  std::string sha256;        // LFS files
  std::string git_blob_sha1; // regular files
};

} // namespace hubcache::hub
