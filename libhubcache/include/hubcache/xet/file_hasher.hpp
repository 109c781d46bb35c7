#pragma once

// The Xet file hash of a byte stream, without packing anything: what a Storage Bucket
// names a file by, computed while a download arrives or to compare a local file.

#include "hubcache/xet/chunker.hpp"
#include "hubcache/xet/merkle.hpp"

#include <filesystem>
#include <functional>
#include <string_view>
#include <vector>

namespace hubcache::xet {

class FileHasher {
public:
  void update(std::string_view bytes);
  // The hash of everything given since construction or the last reset().
  MerkleHash finish();
  void reset();

private:
  Chunker m_chunker;
  std::vector<HashedNode> m_nodes;
};

// Reads a local regular file in blocks of up to 1 MiB, each handed to `block` in order
// (IoError when it cannot be read or is not a regular file).
void for_each_block(const std::filesystem::path& path, const std::function<void(Bytes)>& block);

// The Xet file hash of a local file (IoError when it cannot be read).
MerkleHash hash_file(const std::filesystem::path& path);

} // namespace hubcache::xet
