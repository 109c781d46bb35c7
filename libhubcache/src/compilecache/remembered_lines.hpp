#pragma once

#include "hubcache/util/fs.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

// Reading and writing the line-based files neuron-cache remembers outside the cache root
// (digests, remote snapshots): a block at a time, never the whole text beside what is
// built from it. Internal to compilecache.
namespace hubcache::compilecache {

// Hands each '\n'-terminated line of a remembered file (digests, snapshot) to `on_line`
// (false stops), reading a block at a time: the text of tens of thousands of records is
// never held whole beside what is built from it. Returns false when the file is missing,
// unreadable, larger than read_file's bound, or ends without a newline.
bool for_each_line(const std::filesystem::path& file, const std::function<bool(std::string_view)>& on_line);

// Writes a remembered file atomically, formatted and written a block at a time.
class BlockWriter {
public:
  explicit BlockWriter(const std::filesystem::path& target) : m_file(target) {}
  std::string& text() { return m_text; }
  void flush_if_full()
  {
    if (m_text.size() >= 256 * 1024) {
      m_file.write(m_text);
      m_text.clear();
    }
  }
  void commit()
  {
    m_file.write(m_text);
    m_text.clear();
    m_file.commit();
  }

private:
  util::AtomicFile m_file;
  std::string m_text;
};

} // namespace hubcache::compilecache
