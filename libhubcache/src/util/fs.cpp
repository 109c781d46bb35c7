#include "hubcache/util/fs.hpp"

#include "hubcache/error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

namespace hubcache::util {

namespace {

std::string errno_text(int error) { return std::strerror(error); }

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

} // namespace

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
  static const std::string host = host_name();
  auto name = target.filename().string();
  // Keep the whole name within NAME_MAX.
  if (name.size() > 120) {
    name.resize(120);
  }
  return target.parent_path()
         / (name + std::string(k_temp_infix) + host + "." + std::to_string(::getpid()) + "." + random_suffix());
}

AtomicFile::AtomicFile(stdfs::path target) : m_target(std::move(target))
{
  for (int attempt = 0; attempt < 8 && m_fd < 0; ++attempt) {
    m_temp = unique_temp_path(m_target);
    m_fd = ::open(m_temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (m_fd < 0 && errno != EEXIST) {
      throw IoError("cannot create " + m_temp.string() + ": " + errno_text(errno));
    }
  }
  if (m_fd < 0) {
    throw IoError("cannot create a unique temp file next to " + m_target.string());
  }
}

AtomicFile::~AtomicFile()
{
  if (m_fd >= 0) {
    ::close(m_fd);
  }
  if (!m_done) {
    ::unlink(m_temp.c_str());
  }
}

void AtomicFile::write(std::string_view data) { write(data.data(), data.size()); }

void AtomicFile::write(const void* data, std::size_t size)
{
  const char* cursor = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(m_fd, cursor, size);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw IoError("cannot write " + m_target.string() + ": " + errno_text(errno));
    }
    cursor += n;
    size -= static_cast<std::size_t>(n);
  }
}

void AtomicFile::close_checked()
{
  if (::fsync(m_fd) != 0 && errno != EINVAL) {
    throw IoError("cannot flush " + m_target.string() + ": " + errno_text(errno));
  }
  int fd = m_fd;
  m_fd = -1;
  if (::close(fd) != 0) {
    throw IoError("cannot close " + m_target.string() + ": " + errno_text(errno));
  }
}

void AtomicFile::commit()
{
  close_checked();
  if (::rename(m_temp.c_str(), m_target.c_str()) != 0) {
    throw IoError("cannot rename " + m_temp.string() + " to " + m_target.string() + ": " + errno_text(errno));
  }
  m_done = true;
}

const stdfs::path& AtomicFile::finish_without_rename()
{
  close_checked();
  return m_temp;
}

void write_file_atomically(const stdfs::path& target, std::string_view content)
{
  AtomicFile file(target);
  file.write(content);
  file.commit();
}

std::optional<std::string> read_file_if_exists(const stdfs::path& path)
{
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return std::nullopt;
    }
    throw IoError("cannot read " + path.string() + ": " + errno_text(errno));
  }
  std::string content;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      int saved = errno;
      ::close(fd);
      throw IoError("cannot read " + path.string() + ": " + errno_text(saved));
    }
    if (n == 0) {
      break;
    }
    content.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return content;
}

std::string read_file(const stdfs::path& path)
{
  auto content = read_file_if_exists(path);
  if (!content) {
    throw IoError("cannot read " + path.string() + ": " + errno_text(ENOENT));
  }
  return std::move(*content);
}

void copy_file_atomically(const stdfs::path& source, const stdfs::path& target)
{
  int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    throw IoError("cannot read " + source.string() + ": " + errno_text(errno));
  }
  try {
    AtomicFile out(target);
    std::vector<char> buffer(1 << 20);
    for (;;) {
      ssize_t n = ::read(in, buffer.data(), buffer.size());
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        throw IoError("cannot read " + source.string() + ": " + errno_text(errno));
      }
      if (n == 0) {
        break;
      }
      out.write(buffer.data(), static_cast<std::size_t>(n));
    }
    out.commit();
  } catch (...) {
    ::close(in);
    throw;
  }
  ::close(in);
}

void sync_directory(const stdfs::path& directory)
{
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
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
    if (::renameat2(AT_FDCWD, existing.c_str(), AT_FDCWD, link_path.c_str(), RENAME_NOREPLACE) == 0) {
      return true;
    }
    if (errno == EEXIST) {
      return false;
    }
    error = errno;
  }
  throw IoError("cannot create " + link_path.string() + ": " + errno_text(error));
}

} // namespace hubcache::util
