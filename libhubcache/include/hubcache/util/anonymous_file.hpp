#pragma once

#include "hubcache/util/fd.hpp"

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace hubcache::util {

// A scratch file without a name, in `directory`: nothing is left behind however the
// process ends (even SIGKILL), and no other process can open it by name. For payloads
// built on disk and read back through fd(), such as a commit body. O_TMPFILE where the
// filesystem supports it, else a unique name unlinked at once.
class AnonymousFile {
public:
  explicit AnonymousFile(const std::filesystem::path& directory);

  void write(std::string_view data);
  // Overwrites bytes already written (the file does not grow).
  void write_at(std::uint64_t offset, std::string_view data);
  std::uint64_t size() const { return m_size; }
  const Fd& fd() const { return m_fd; }
  // Names the file in messages.
  const std::filesystem::path& directory() const { return m_directory; }

private:
  std::filesystem::path m_directory;
  Fd m_fd;
  std::uint64_t m_size = 0;
};

} // namespace hubcache::util
