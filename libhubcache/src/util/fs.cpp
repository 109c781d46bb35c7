#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"

#include "hubcache/util/file_system.hpp"

#include "hubcache/error.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <random>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

namespace hubcache::util {

namespace {

// Live temp files, in memory a signal handler may read: a slot is free (0), being changed
// (1) or holds a path to remove on a fatal signal (2).
constexpr std::size_t k_signal_slots = 256;
constexpr std::size_t k_signal_path_max = 4096;
std::atomic<int> g_slot_state[k_signal_slots];
char g_slot_path[k_signal_slots][k_signal_path_max];

int register_for_signal_cleanup(const stdfs::path& path)
{
  const auto& text = path.native();
  if (text.size() >= k_signal_path_max) {
    return -1;
  }
  for (std::size_t i = 0; i < k_signal_slots; ++i) {
    int expected = 0;
    if (g_slot_state[i].compare_exchange_strong(expected, 1)) {
      std::memcpy(g_slot_path[i], text.c_str(), text.size() + 1);
      g_slot_state[i].store(2);
      return static_cast<int>(i);
    }
  }
  return -1; // more live temp files than slots: those rely on the next run's sweep
}

void unregister_for_signal_cleanup(int slot)
{
  if (slot >= 0) {
    g_slot_state[slot].store(1);
    g_slot_state[slot].store(0);
  }
}

extern "C" void remove_temp_files_and_die(int signal)
{
  for (std::size_t i = 0; i < k_signal_slots; ++i) {
    if (g_slot_state[i].load() == 2) {
      ::unlink(g_slot_path[i]);
    }
  }
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

} // namespace

void remove_temp_files_on_fatal_signals()
{
  struct sigaction action {};
  action.sa_handler = remove_temp_files_and_die;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaction(signal, &action, nullptr);
  }
}

std::string random_suffix()
{
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  static constexpr char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string out(10, '0');
  for (auto& c : out) {
    c = digits[generator() % 36];
  }
  return out;
}

bool is_abandoned_temp_file(const stdfs::path& path, std::chrono::seconds unsure_age,
                            std::chrono::system_clock::time_point now)
{
  struct stat info {};
  if (!is_temp_name(path.filename().native()) || ::lstat(path.c_str(), &info) != 0) {
    return false;
  }
  auto changed = std::chrono::system_clock::from_time_t(info.st_ctim.tv_sec);
  return is_abandoned(path.filename().native(), changed, unsure_age, now);
}

std::string host_name()
{
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof(buffer) - 1) != 0 || buffer[0] == '\0') {
    return "localhost";
  }
  std::string name(buffer);
  for (auto& c : name) {
    if (c == '/' || c == '.') {
      c = '_';
    }
  }
  return name;
}

bool is_temp_name(std::string_view file_name)
{
  return file_name.find(k_temp_infix) != std::string_view::npos;
}

stdfs::path unique_temp_path(const stdfs::path& target)
{
  auto name = target.filename().string();
  // Keep the whole name within NAME_MAX.
  if (name.size() > 120) {
    name.resize(120);
  }
  return target.parent_path() / (name + std::string(k_temp_infix) + this_process_temp_owner() + random_suffix());
}

TemporaryDirectory::TemporaryDirectory(const stdfs::path& target)
{
  for (int attempt = 0; attempt < 8; ++attempt) {
    m_path = unique_temp_path(target);
    if (::mkdir(m_path.c_str(), 0755) == 0) {
      return;
    }
    if (errno != EEXIST) {
      throw IoError("cannot create a scratch directory in " + target.parent_path().string() + ": " + errno_text(errno),
                    "check that it exists and is writable");
    }
  }
  throw IoError("cannot create a unique scratch directory next to " + target.string());
}

TemporaryDirectory::~TemporaryDirectory()
{
  std::error_code ignored;
  stdfs::remove_all(m_path, ignored);
}

TemporaryFile::TemporaryFile(const stdfs::path& target, int mode)
{
  for (int attempt = 0; attempt < 8 && !m_fd; ++attempt) {
    m_path = unique_temp_path(target);
    m_fd.reset(::open(m_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
    if (!m_fd && errno != EEXIST) {
      throw IoError("cannot create " + m_path.string() + ": " + errno_text(errno));
    }
  }
  if (!m_fd) {
    throw IoError("cannot create a unique temp file next to " + target.string());
  }
  m_signal_slot = register_for_signal_cleanup(m_path);
}

TemporaryFile::~TemporaryFile()
{
  unregister_for_signal_cleanup(m_signal_slot);
  m_fd.reset();
  if (!m_keep) {
    ::unlink(m_path.c_str());
  }
}

void TemporaryFile::write(const void* data, std::size_t size)
{
  const char* cursor = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(m_fd.get(), cursor, size);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw_write_error("cannot write " + m_path.string(), errno);
    }
    cursor += n;
    size -= static_cast<std::size_t>(n);
  }
}

void TemporaryFile::keep()
{
  unregister_for_signal_cleanup(std::exchange(m_signal_slot, -1));
  m_keep = true;
}

void TemporaryFile::close(bool durable)
{
  if (!m_fd) {
    return;
  }
  if (durable && ::fsync(m_fd.get()) != 0 && errno != EINVAL) {
    throw_write_error("cannot flush " + m_path.string(), errno);
  }
  if (int error = m_fd.close_checked(); error != 0) {
    throw_write_error("cannot close " + m_path.string(), error);
  }
}

std::string join_path(std::string_view directory, std::string_view relative)
{
  std::string joined;
  joined.reserve(directory.size() + 1 + relative.size());
  joined.append(directory);
  if (joined.empty() || joined.back() != '/') {
    joined.push_back('/');
  }
  joined.append(relative);
  return joined;
}

AtomicFile::AtomicFile(stdfs::path target) : m_target(std::move(target)), m_temp(m_target, 0644) {}

AtomicFile::~AtomicFile() = default;

void AtomicFile::stream(std::uint64_t expected_size)
{
  // A file announced smaller than one block gains nothing from a second thread.
  bool small = expected_size > 0 && expected_size < StreamWriter::k_block_size;
  if (!m_stream && !small) {
    m_stream = std::make_unique<StreamWriter>(m_temp.fd(), m_temp.path(), 0, expected_size);
  }
}

void AtomicFile::write(std::string_view data)
{
  if (m_stream) {
    m_stream->write(data);
  } else {
    m_temp.write(data);
  }
}

void AtomicFile::complete_writes()
{
  if (m_stream) {
    m_stream->finish();
    m_stream.reset();
  }
}

void AtomicFile::commit(bool durable)
{
  complete_writes();
  m_temp.close(durable);
  if (::rename(m_temp.path().c_str(), m_target.c_str()) != 0) {
    throw IoError("cannot rename " + m_temp.path().string() + " to " + m_target.string() + ": " + errno_text(errno));
  }
  m_temp.keep();
}

const stdfs::path& AtomicFile::finish_without_rename()
{
  complete_writes();
  m_temp.close();
  return m_temp.path();
}

void write_file_atomically(const stdfs::path& target, std::string_view content, bool durable)
{
  AtomicFile file(target);
  file.write(content);
  file.commit(durable);
}

std::optional<Fd> open_regular_file_if_exists(const stdfs::path& path)
{
  // O_NONBLOCK: opening a FIFO must not wait for a writer; cleared again for regular files.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return std::nullopt;
    }
    throw IoError("cannot read " + path.string() + ": " + errno_text(errno));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    throw IoError("cannot read " + path.string() + ": " + errno_text(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    throw IoError("cannot read " + path.string() + ": not a regular file");
  }
  // O_NONBLOCK is the only status flag it was opened with: one call clears it (a push opens
  // tens of thousands of files, each more than once).
  ::fcntl(fd.get(), F_SETFL, 0);
  return fd;
}

Fd open_regular_file(const stdfs::path& path)
{
  auto fd = open_regular_file_if_exists(path);
  if (!fd) {
    throw IoError("cannot read " + path.string() + ": " + errno_text(ENOENT));
  }
  return std::move(*fd);
}

std::size_t read_up_to(const Fd& fd, const stdfs::path& what, char* buffer, std::size_t size)
{
  std::size_t filled = 0;
  while (filled < size) {
    ssize_t n = ::read(fd.get(), buffer + filled, size - filled);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw IoError("cannot read " + what.string() + ": " + errno_text(errno));
    }
    if (n == 0) {
      break;
    }
    filled += static_cast<std::size_t>(n);
  }
  return filled;
}

std::uint64_t read_chunks(const Fd& fd, const stdfs::path& what, const ChunkConsumer& consume, std::size_t chunk_size)
{
  // A buffer no bigger than the file (plus the byte that shows its end): a cache is mostly
  // files of a few KB, and a megabyte each is an mmap per file under many allocators.
  // Not zeroed, for the same reason. A file that grows while read still reads to its end.
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) < chunk_size) {
    chunk_size = static_cast<std::size_t>(st.st_size) + 1;
  }
  auto buffer = std::make_unique_for_overwrite<char[]>(chunk_size);
  std::uint64_t total = 0;
  for (;;) {
    auto n = read_up_to(fd, what, buffer.get(), chunk_size);
    if (n == 0) {
      return total;
    }
    consume(buffer.get(), n);
    total += n;
    if (n < chunk_size) {
      return total;
    }
  }
}

std::uint64_t read_file_chunks(const stdfs::path& path, const ChunkConsumer& consume)
{
  return read_chunks(open_regular_file(path), path, consume);
}

std::optional<std::string> read_file_at_if_exists(int dir_fd, const char* name, std::string_view dir_path,
                                                  std::uint64_t max_size)
{
  // Only an error names the file: a scan reads thousands without building a path each.
  auto what = [&] { return dir_path.empty() ? std::string(name) : std::string(dir_path) + "/" + name; };
  // O_NONBLOCK: opening a FIFO must not wait for a writer. It is left set: it changes
  // nothing for a regular file, and clearing it would cost two more system calls a file.
  Fd fd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return std::nullopt;
    }
    throw IoError("cannot read " + what() + ": " + errno_text(errno));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    throw IoError("cannot read " + what() + ": " + errno_text(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    throw IoError("cannot read " + what() + ": not a regular file");
  }
  // Read straight into the string, sized from fstat (one byte more, to see the end of
  // the file in the same read); grown if the file grows meanwhile, never past max_size.
  auto too_large = [&] {
    return IoError("cannot read " + what() + ": larger than " + std::to_string(max_size) + " bytes");
  };
  auto expected = static_cast<std::uint64_t>(info.st_size);
  if (expected > max_size) {
    throw too_large();
  }
  auto cap = max_size < UINT64_MAX ? max_size + 1 : max_size;
  std::string content;
  std::size_t filled = 0;
  // A file that says size 0 (/proc) gets a page; others exactly what they hold and one
  // byte more (a scan reads thousands of 100-byte flags files: not a page each).
  std::uint64_t want = expected > 0 ? expected + 1 : 4096;
  for (;;) {
    content.resize(static_cast<std::size_t>(std::min(want, cap)));
    ssize_t n = ::read(fd.get(), content.data() + filled, content.size() - filled);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw IoError("cannot read " + what() + ": " + errno_text(errno));
    }
    filled += static_cast<std::size_t>(n);
    if (n == 0 || (filled < content.size() && expected > 0 && filled >= expected)) {
      // A regular file that gave all fstat promised is at its end: no second read to see
      // 0 bytes. (/proc files say size 0 and may read short before their end.)
      break;
    }
    if (filled < content.size()) {
      continue;
    }
    if (filled > max_size) {
      throw too_large();
    }
    want = std::uint64_t{content.size()} * 2;
  }
  content.resize(filled);
  return content;
}

std::optional<std::string> read_file_if_exists(const stdfs::path& path, std::uint64_t max_size)
{
  return read_file_at_if_exists(AT_FDCWD, path.c_str(), {}, max_size);
}

Fd open_directory_at(int parent_fd, const char* name)
{
  return Fd(::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

int for_each_directory_item(const Fd& directory,
                            const std::function<void(std::string_view name, unsigned char type)>& visit)
{
  // Big enough for a whole entry directory or a few hundred names of a version folder.
  alignas(struct dirent64) char buffer[32768];
  for (;;) {
    ssize_t n = ::getdents64(directory.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno;
    }
    if (n == 0) {
      return 0;
    }
    for (ssize_t offset = 0; offset < n;) {
      const auto* item = reinterpret_cast<const struct dirent64*>(buffer + offset);
      offset += item->d_reclen;
      std::string_view name = item->d_name;
      if (name != "." && name != "..") {
        visit(name, item->d_type);
      }
    }
  }
}

std::string read_file(const stdfs::path& path, std::uint64_t max_size)
{
  auto content = read_file_if_exists(path, max_size);
  if (!content) {
    throw IoError("cannot read " + path.string() + ": " + errno_text(ENOENT));
  }
  return std::move(*content);
}

void copy_file_atomically(const stdfs::path& source, const stdfs::path& target)
{
  auto in = open_regular_file(source);
  AtomicFile out(target);
  read_chunks(in, source, [&](const char* data, std::size_t size) { out.write(data, size); });
  out.commit();
}

void sync_directory(const stdfs::path& directory)
{
  Fd fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd) {
    ::fsync(fd.get());
  }
}

void sync_filesystem(const stdfs::path& path)
{
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd || ::syncfs(fd.get()) != 0) {
    throw IoError("cannot flush the filesystem of " + path.string() + ": " + errno_text(errno));
  }
}

bool rename_no_replace(const stdfs::path& from, const stdfs::path& to)
{
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return true;
  }
  if (errno == EEXIST || errno == ENOTEMPTY) {
    return false;
  }
  if (errno == EINVAL || errno == ENOSYS) {
    // No RENAME_NOREPLACE on this filesystem: check, then rename (a narrow race, the best
    // such a filesystem allows).
    struct stat status {};
    if (::lstat(to.c_str(), &status) == 0) {
      return false;
    }
    if (::rename(from.c_str(), to.c_str()) == 0) {
      return true;
    }
  }
  throw IoError("cannot rename " + from.string() + " to " + to.string() + ": " + errno_text(errno));
}

bool create_exclusive_from(const stdfs::path& existing, const stdfs::path& link_path)
{
  if (::link(existing.c_str(), link_path.c_str()) == 0) {
    return true;
  }
  int error = errno;
  if (error == EEXIST) {
    // On NFS a retransmitted LINK can report EEXIST although it was ours: the link count
    // of our private temp file tells the truth.
    struct stat info {};
    if (::stat(existing.c_str(), &info) == 0 && info.st_nlink == 2) {
      return true;
    }
    return false;
  }
  if (error == EPERM || error == ENOTSUP || error == EOPNOTSUPP || error == EMLINK) {
    return rename_no_replace(existing, link_path);
  }
  throw IoError("cannot create " + link_path.string() + ": " + errno_text(error));
}

} // namespace hubcache::util
