#include "hubcache/xet/file_hasher.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fd.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace hubcache::xet {

void FileHasher::update(std::string_view bytes)
{
  m_chunker.update(Bytes(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                   [this](const Chunk& chunk, Bytes) {
                     m_nodes.push_back({chunk.hash, chunk.size});
                   });
}

MerkleHash FileHasher::finish()
{
  m_chunker.finish([this](const Chunk& chunk, Bytes) { m_nodes.push_back({chunk.hash, chunk.size}); });
  auto hash = file_hash(m_nodes);
  m_nodes.clear();
  return hash;
}

void FileHasher::reset()
{
  m_chunker = Chunker();
  m_nodes.clear();
}

void for_each_block(const std::filesystem::path& path, const std::function<void(Bytes)>& block)
{
  util::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    throw IoError("cannot read " + path.string() + ": " + std::strerror(errno));
  }
  std::vector<std::uint8_t> buffer(std::size_t{1} << 20);
  for (;;) {
    const auto got = ::read(fd.get(), buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      throw IoError("cannot read " + path.string() + ": " + std::strerror(errno));
    }
    if (got == 0) {
      return;
    }
    block(Bytes(buffer.data(), static_cast<std::size_t>(got)));
  }
}

MerkleHash hash_file(const std::filesystem::path& path)
{
  FileHasher hasher;
  for_each_block(path, [&hasher](Bytes block) {
    hasher.update(std::string_view(reinterpret_cast<const char*>(block.data()), block.size()));
  });
  return hasher.finish();
}

} // namespace hubcache::xet
