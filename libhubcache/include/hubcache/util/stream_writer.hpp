#pragma once

#include "hubcache/util/fd.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

namespace hubcache::util {

// Writes a stream of bytes (a download, an uploaded part) into an open file from `offset`
// on, a block at a time, on a second thread: the caller keeps receiving and hashing while
// the previous block goes to disk.
//
// A big stream (`expected_size` >= k_direct_threshold) on a local disk file system (ext4,
// XFS, btrfs) bypasses the page cache (O_DIRECT): a multi-GB NEFF then costs one DMA per
// block instead of a copy into fresh page-cache pages, and does not evict what the host's
// other processes keep cached. The unaligned tail, and other file systems (NFS, where each
// such write is a synchronous round trip, tmpfs, FUSE), go through the page cache. Durability is still the caller's
// (fsync/syncfs): O_DIRECT does not flush the device's cache nor the file's metadata.
//
// Not thread-safe: one producer. Bytes handed to write() are copied.
class StreamWriter {
public:
  static constexpr std::size_t k_block_size = std::size_t{1} << 20;
  static constexpr std::uint64_t k_direct_threshold = std::uint64_t{8} << 20;

  // `fd` must stay open until finish() returns or the writer is destroyed; `what` names the
  // file in errors. `expected_size` is 0 when unknown.
  StreamWriter(const Fd& fd, std::filesystem::path what, std::uint64_t offset = 0, std::uint64_t expected_size = 0);
  ~StreamWriter();
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;

  // Throws IoError when an earlier block failed to write.
  void write(std::string_view data);
  // Writes what is left and waits for every block; throws IoError on any failure.
  void finish();
  std::uint64_t bytes_written() const { return m_handed_over + m_fill_size; }
  // How many of them went past the page cache (once finished).
  std::uint64_t direct_bytes() const { return m_direct_bytes; }

private:
  struct FreeBlock {
    void operator()(char* block) const noexcept;
  };
  using Block = std::unique_ptr<char, FreeBlock>;
  static Block allocate_block();

  void hand_over();
  void writer_loop();
  void write_block(const char* data, std::size_t size, std::uint64_t offset);
  void set_direct(bool on);
  void stop_thread() noexcept;

  int m_fd;
  std::filesystem::path m_what;
  std::uint64_t m_offset;
  bool m_direct = false;
  std::atomic<std::uint64_t> m_direct_bytes{0};

  Block m_fill;
  std::size_t m_fill_size = 0;
  std::uint64_t m_handed_over = 0; // bytes given to the writer thread so far

  std::mutex m_mutex;
  std::condition_variable m_changed;
  Block m_flight; // the block being written, owned by the thread while m_in_flight
  std::size_t m_flight_size = 0;
  std::uint64_t m_flight_offset = 0;
  bool m_in_flight = false;
  bool m_stopping = false;
  std::exception_ptr m_error;
  std::thread m_thread; // started with the first full block; small streams need none
};

} // namespace hubcache::util
