#include "hubcache/util/stream_writer.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/file_system.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <unistd.h>

namespace hubcache::util {

namespace {

// O_DIRECT wants the buffer, the file offset and the length aligned to the logical block
// size; 4 KiB covers every device and file system that accepts it.
constexpr std::size_t k_direct_alignment = 4096;

// Local disk file systems, where an O_DIRECT write is one DMA to the device. Elsewhere it
// can cost more than it saves: on NFS each write becomes a synchronous round trip to the
// server, on tmpfs the page cache is the storage.
bool direct_io_pays_off(int fd)
{
  return file_system_of(fd).kind == FileSystemKind::local_disk;
}

} // namespace

void StreamWriter::FreeBlock::operator()(char* block) const noexcept
{
  std::free(block);
}

StreamWriter::Block StreamWriter::allocate_block()
{
  void* memory = std::aligned_alloc(k_direct_alignment, k_block_size);
  if (memory == nullptr) {
    throw std::bad_alloc();
  }
  return Block(static_cast<char*>(memory));
}

StreamWriter::StreamWriter(const Fd& fd, std::filesystem::path what, std::uint64_t offset, std::uint64_t expected_size)
  : m_fd(fd.get()), m_what(std::move(what)), m_offset(offset)
{
  if (expected_size >= k_direct_threshold && offset % k_direct_alignment == 0 && direct_io_pays_off(m_fd)) {
    set_direct(true);
  }
}

StreamWriter::~StreamWriter()
{
  stop_thread();
  if (m_direct) {
    set_direct(false); // the descriptor goes on being used by its owner
  }
}

void StreamWriter::set_direct(bool on)
{
  int flags = ::fcntl(m_fd, F_GETFL);
  if (flags < 0) {
    m_direct = false;
    return;
  }
  int wanted = on ? (flags | O_DIRECT) : (flags & ~O_DIRECT);
  // A file system without O_DIRECT (tmpfs on older kernels, FUSE, ...) refuses it here or
  // at the first write: either way the stream goes through the page cache.
  m_direct = on && ::fcntl(m_fd, F_SETFL, wanted) == 0;
  if (!on) {
    ::fcntl(m_fd, F_SETFL, wanted);
  }
}

void StreamWriter::write(std::string_view data)
{
  while (!data.empty()) {
    if (!m_fill) {
      m_fill = allocate_block();
    }
    auto take = std::min(data.size(), k_block_size - m_fill_size);
    std::memcpy(m_fill.get() + m_fill_size, data.data(), take);
    m_fill_size += take;
    data.remove_prefix(take);
    if (m_fill_size == k_block_size) {
      hand_over();
    }
  }
}

void StreamWriter::hand_over()
{
  std::unique_lock lock(m_mutex);
  if (!m_thread.joinable()) {
    m_thread = std::thread([this] { writer_loop(); });
  }
  m_changed.wait(lock, [this] { return !m_in_flight; });
  if (m_error) {
    std::rethrow_exception(m_error);
  }
  std::swap(m_fill, m_flight);
  m_flight_size = std::exchange(m_fill_size, 0);
  m_flight_offset = m_offset + m_handed_over;
  m_handed_over += m_flight_size;
  m_in_flight = true;
  m_changed.notify_all();
}

void StreamWriter::writer_loop()
{
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_changed.wait(lock, [this] { return m_in_flight || m_stopping; });
    if (!m_in_flight) {
      return;
    }
    lock.unlock();
    std::exception_ptr error;
    try {
      write_block(m_flight.get(), m_flight_size, m_flight_offset);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !m_error) {
      m_error = error;
    }
    m_in_flight = false;
    m_changed.notify_all();
  }
}

void StreamWriter::write_block(const char* data, std::size_t size, std::uint64_t offset)
{
  while (size > 0) {
    bool aligned = size % k_direct_alignment == 0 && offset % k_direct_alignment == 0;
    if (m_direct && !aligned) {
      set_direct(false); // the tail: the page cache takes any length
    }
    ssize_t n = ::pwrite(m_fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && errno == EINVAL && m_direct) {
      set_direct(false); // accepted by fcntl, refused by the file system
      continue;
    }
    if (n < 0) {
      throw_write_error("cannot write " + m_what.string(), errno);
    }
    if (n == 0) {
      throw NoSpace("cannot write " + m_what.string() + ": no space written");
    }
    if (m_direct) {
      m_direct_bytes += static_cast<std::uint64_t>(n);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void StreamWriter::finish()
{
  if (m_thread.joinable()) {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [this] { return !m_in_flight; });
    if (m_error) {
      std::rethrow_exception(m_error);
    }
  }
  if (m_fill_size > 0) {
    // The writer thread is idle: its flags and offsets are ours again.
    write_block(m_fill.get(), m_fill_size, m_offset + m_handed_over);
    m_handed_over += std::exchange(m_fill_size, 0);
  }
  stop_thread();
}

void StreamWriter::stop_thread() noexcept
{
  if (!m_thread.joinable()) {
    return;
  }
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_changed.notify_all();
  m_thread.join();
  m_stopping = false;
}

} // namespace hubcache::util
