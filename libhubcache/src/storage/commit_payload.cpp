#include "commit_payload.hpp"

#include "hubcache/hub/protocol.hpp"
#include "hubcache/util/fs.hpp"

#include <filesystem>

namespace hubcache::storage {

namespace stdfs = std::filesystem;

CommitPayload::CommitPayload(std::size_t header_room) : m_file(stdfs::temp_directory_path()), m_room(header_room)
{
  append(std::string(m_room, ' '));
}

void CommitPayload::append_regular_file(const std::string& path_in_repo, const FileSource& source)
{
  append(hub::commit_file_line_prefix(path_in_repo));
  if (!source.is_file()) {
    append(hub::base64_encode(source.bytes()));
  } else {
    // Whole chunks of a multiple of 3 bytes encode without padding in the middle.
    stdfs::path file(source.file_for(path_in_repo));
    util::read_chunks(
      util::open_regular_file(file), file,
      [&](const char* data, std::size_t size) { append(hub::base64_encode(std::string_view(data, size))); }, 3 * 65536);
  }
  append(hub::k_commit_file_line_suffix);
}

http::FileSlice CommitPayload::finish(std::string_view header)
{
  const auto start = m_room - header.size();
  m_file.write_at(start, header);
  return http::FileSlice{m_file.directory() / "(commit payload)", start, m_file.size() - start, m_file.fd().get()};
}

} // namespace hubcache::storage
