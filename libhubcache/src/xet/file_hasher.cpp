#include "hubcache/xet/file_hasher.hpp"

#include "hubcache/util/fs.hpp"

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
  util::read_file_chunks(path, [&block](const char* data, std::size_t size) {
    block(Bytes(reinterpret_cast<const std::uint8_t*>(data), size));
  });
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
