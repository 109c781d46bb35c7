#pragma once

#include <utility>

namespace hubcache::util {

// Owns one file descriptor and closes it on destruction. The only place descriptors are
// closed by hand is close_checked(), for writes whose errors surface at close.
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) noexcept : m_fd(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : m_fd(other.release()) {}
  Fd& operator=(Fd&& other) noexcept
  {
    if (this != &other) {
      reset(other.release());
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const noexcept { return m_fd; }
  bool valid() const noexcept { return m_fd >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  int release() noexcept { return std::exchange(m_fd, -1); }
  void reset(int fd = -1) noexcept;
  // Closes now; returns errno of a failed close(2), 0 on success.
  int close_checked() noexcept;

private:
  int m_fd = -1;
};

} // namespace hubcache::util
