#include "hubcache/util/anonymous_file.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/file_system.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace hubcache::util {

AnonymousFile::AnonymousFile(const std::filesystem::path& directory) : m_directory(directory)
{
  m_fd = Fd(::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!m_fd && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // No O_TMPFILE here: a unique name, gone before anything is written to it.
    std::string name = (directory / "neuron-cache-scratch.XXXXXX").string();
    m_fd = Fd(::mkostemp(name.data(), O_CLOEXEC));
    if (m_fd) {
      ::unlink(name.c_str());
    }
  }
  if (!m_fd) {
    throw IoError("cannot create a scratch file in " + directory.string() + ": " + std::strerror(errno),
                  "check TMPDIR points at a writable directory");
  }
}

namespace {

void write_all_at(const Fd& fd, std::uint64_t offset, std::string_view data, const std::filesystem::path& directory)
{
  while (!data.empty()) {
    auto n = ::pwrite(fd.get(), data.data(), data.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw_write_error("cannot write a scratch file in " + directory.string(), errno);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
}

} // namespace

void AnonymousFile::write(std::string_view data)
{
  // At the end, by offset: readers use their own descriptor offsets (fd() is dup'ed and sought).
  write_all_at(m_fd, m_size, data, m_directory);
  m_size += data.size();
}

void AnonymousFile::write_at(std::uint64_t offset, std::string_view data)
{
  if (offset > m_size || data.size() > m_size - offset) {
    throw IoError("cannot write past the end of a scratch file in " + m_directory.string());
  }
  write_all_at(m_fd, offset, data, m_directory);
}

} // namespace hubcache::util
