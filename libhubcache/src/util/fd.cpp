#include "hubcache/util/fd.hpp"

#include <cerrno>
#include <unistd.h>

namespace hubcache::util {

void Fd::reset(int fd) noexcept
{
  if (m_fd >= 0) {
    ::close(m_fd);
  }
  m_fd = fd;
}

int Fd::close_checked() noexcept
{
  if (m_fd < 0) {
    return 0;
  }
  int result = ::close(release());
  return result == 0 ? 0 : errno;
}

} // namespace hubcache::util
