#pragma once

#include "hubcache/http/client.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/anonymous_file.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace hubcache::storage {

// The NDJSON commit payload, written to a scratch file so that many regular files never
// sit in memory together. The file has no name: a commit killed mid-way leaves nothing in
// TMPDIR. The body is built ahead, while the previous commit is in flight; the header line
// names that commit as its parent, so it goes last, into room kept at the front.
class CommitPayload {
public:
  explicit CommitPayload(std::size_t header_room);

  void append(std::string_view data) { m_file.write(data); }

  // One regular file's line: its bytes base64-encoded, read in pieces.
  void append_regular_file(const std::string& path_in_repo, const FileSource& source);

  bool fits(std::string_view header) const { return header.size() <= m_room; }

  // The request body: `header` (which fits), then the body.
  http::FileSlice finish(std::string_view header);

private:
  util::AnonymousFile m_file;
  std::size_t m_room;
};

} // namespace hubcache::storage
