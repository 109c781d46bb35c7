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

MerkleHash hash_file(const std::filesystem::path& path)
{
  util::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    throw IoError("cannot read " + path.string() + ": " + std::strerror(errno));
  }
  FileHasher hasher;
  std::vector<char> block(std::size_t{1} << 20);
  for (;;) {
    auto got = ::read(fd.get(), block.data(), block.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      throw IoError("cannot read " + path.string() + ": " + std::strerror(errno));
    }
    if (got == 0) {
      break;
    }
    hasher.update(std::string_view(block.data(), static_cast<std::size_t>(got)));
  }
  return hasher.finish();
}

} // namespace hubcache::xet
