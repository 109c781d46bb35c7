// Linked only into the portable binary (cmake/Portable.cmake), whose libstdc++ is static.
// Debian 12's libstdc++.a refers to arc4random (std::random_device's "default" source), which
// glibc gained in 2.36; the hosts neuron-cache ships to have glibc 2.34 (Amazon Linux 2023)
// and 2.35 (Ubuntu 22.04). Defined here, the reference binds to this definition at link time
// and the binary needs no GLIBC_2.36 symbol. getrandom has been in glibc since 2.25.
#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include <sys/random.h>

extern "C" std::uint32_t arc4random() noexcept
{
  std::uint32_t value = 0;
  // getrandom blocks only until the kernel's pool is first seeded, and returns all four
  // bytes at once for requests this small; EINTR is the one error worth retrying.
  while (getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {
    if (errno != EINTR) {
      std::abort();
    }
  }
  return value;
}
