#include "buffered_server.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace testhub {

namespace {

constexpr std::size_t k_read_buffer_bytes = 256 * 1024;
// How often a connection waiting for its next request looks whether the server stopped.
constexpr int k_idle_poll_ms = 100;

void address_of(const sockaddr_storage& address, std::string& ip, int& port)
{
  char host[NI_MAXHOST] = {};
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), sizeof(address), host, sizeof(host), nullptr, 0,
                  NI_NUMERICHOST)
      == 0) {
    ip = host;
  }
  if (address.ss_family == AF_INET)
    port = ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
  else if (address.ss_family == AF_INET6)
    port = ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
}

timeval timeval_of(time_t seconds, time_t microseconds)
{
  timeval value{};
  value.tv_sec = seconds;
  value.tv_usec = static_cast<suseconds_t>(microseconds);
  return value;
}

int milliseconds_of(const timeval& value)
{
  return static_cast<int>(value.tv_sec * 1000 + value.tv_usec / 1000);
}

// One connection's byte stream: reads served from a buffer refilled by one recv at a time,
// writes sent straight away; the socket's own timeouts (SO_RCVTIMEO, SO_SNDTIMEO) bound both.
class BufferedSocketStream final : public httplib::Stream {
public:
  BufferedSocketStream(socket_t sock, int read_timeout_ms, int write_timeout_ms)
    : m_sock(sock), m_read_timeout_ms(read_timeout_ms), m_write_timeout_ms(write_timeout_ms),
      m_buffer(k_read_buffer_bytes)
  {}

  bool is_readable() const override { return has_buffered() || poll_for(POLLIN, m_read_timeout_ms) > 0; }
  bool is_writable() const override { return poll_for(POLLOUT, m_write_timeout_ms) > 0; }

  ssize_t read(char* ptr, std::size_t size) override
  {
    if (!has_buffered()) {
      // A caller asking for more than the buffer holds gets its bytes without the copy.
      if (size >= m_buffer.size())
        return receive(ptr, size);
      const auto got = receive(m_buffer.data(), m_buffer.size());
      if (got <= 0)
        return got;
      m_begin = 0;
      m_end = static_cast<std::size_t>(got);
    }
    const auto count = std::min(size, m_end - m_begin);
    std::memcpy(ptr, m_buffer.data() + m_begin, count);
    m_begin += count;
    return static_cast<ssize_t>(count);
  }

  ssize_t write(const char* ptr, std::size_t size) override
  {
    for (;;) {
      const auto sent = ::send(m_sock, ptr, size, MSG_NOSIGNAL);
      if (sent >= 0 || errno != EINTR)
        return sent;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override
  {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (getpeername(m_sock, reinterpret_cast<sockaddr*>(&address), &length) == 0)
      address_of(address, ip, port);
  }

  void get_local_ip_and_port(std::string& ip, int& port) const override
  {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (getsockname(m_sock, reinterpret_cast<sockaddr*>(&address), &length) == 0)
      address_of(address, ip, port);
  }

  socket_t socket() const override { return m_sock; }

  bool has_buffered() const { return m_begin < m_end; }

  // Waits up to timeout_ms for the socket to be ready; > 0 when it is.
  int poll_for(short events, int timeout_ms) const
  {
    pollfd entry{m_sock, events, 0};
    for (;;) {
      const auto ready = ::poll(&entry, 1, timeout_ms);
      if (ready >= 0 || errno != EINTR)
        return ready;
    }
  }

private:
  ssize_t receive(char* into, std::size_t size)
  {
    for (;;) {
      const auto got = ::recv(m_sock, into, size, 0);
      if (got >= 0 || errno != EINTR)
        return got;
    }
  }

  socket_t m_sock;
  int m_read_timeout_ms;
  int m_write_timeout_ms;
  std::vector<char> m_buffer;
  std::size_t m_begin = 0;
  std::size_t m_end = 0;
};

} // namespace

bool BufferedServer::process_and_close_socket(socket_t sock)
{
  const auto read_timeout = timeval_of(read_timeout_sec_, read_timeout_usec_);
  const auto write_timeout = timeval_of(write_timeout_sec_, write_timeout_usec_);
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &read_timeout, sizeof(read_timeout));
  setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &write_timeout, sizeof(write_timeout));

  BufferedSocketStream stream(sock, milliseconds_of(read_timeout), milliseconds_of(write_timeout));
  // The next request of a kept-alive connection: already buffered, or arriving within the
  // keep-alive timeout while the server still runs.
  const auto next_request_arrives = [&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
    while (!stream.has_buffered()) {
      if (svr_sock_ == INVALID_SOCKET || std::chrono::steady_clock::now() > deadline)
        return false;
      const auto ready = stream.poll_for(POLLIN, k_idle_poll_ms);
      if (ready < 0)
        return false;
      if (ready > 0)
        return true;
    }
    return true;
  };

  auto answered = false;
  for (auto left = keep_alive_max_count_; left > 0 && next_request_arrives(); --left) {
    auto connection_closed = false;
    answered = process_request(stream, left == 1, connection_closed, nullptr);
    if (!answered || connection_closed)
      break;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return answered;
}

} // namespace testhub
