#pragma once

// A download into a temp file next to its destination, renamed into place only once
// verified (the Hub and bucket backends).

#include "hubcache/hub/download.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"

#include <filesystem>
#include <optional>

namespace hubcache::storage {

class FileDownloadTarget final : public hub::DownloadTarget {
public:
  explicit FileDownloadTarget(std::filesystem::path destination) : m_destination(std::move(destination))
  {
    m_file.emplace(m_destination);
  }
  void expect(std::uint64_t size) override { m_file->stream(size); }
  void restart() override
  {
    m_file.reset();
    m_file.emplace(m_destination);
  }
  void write(std::string_view chunk) override { m_file->write(chunk); }
  util::FileDigests digests() override
  {
    m_file->complete_writes();
    return util::digest_file(m_file->temp_path());
  }
  void commit(bool flush) { m_file->commit(flush); }

private:
  std::filesystem::path m_destination;
  std::optional<util::AtomicFile> m_file;
};

} // namespace hubcache::storage
