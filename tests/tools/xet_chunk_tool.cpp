// xet_chunk_tool: the Xet core (hubcache::xet) on files, for the witness test and the
// benchmark. Streams each file (memory stays bounded whatever its size).
//
//   xet_chunk_tool [--block-size N] FILE...
//       per file, one JSON line: size, chunks [[size, hash], ...], xorb hash (all chunks as
//       one xorb), file hash, verification hash (all chunks as one term); the format
//       tests/hub-js/xet_witness.mjs prints for the official JS implementation.
//   xet_chunk_tool --summary [--sha256] [--xorb] [--block-size N] FILE...
//       per file, one JSON line of totals and the seconds taken; --sha256 also computes
//       the file's sha256 on a second thread, over the same blocks (as a push would);
//       --xorb also packs the chunks into xorbs (compression included).
//   xet_chunk_tool --pack DIR FILE...
//       packs the files as one upload would (hubcache::xet::UploadPacker): DIR/xorbs/<hash>
//       and DIR/shard, then per file one JSON line {path, size, sha256, xet_hash}; the e2e
//       tests upload them to the test Hub's CAS by hand.
#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>
#include <hubcache/util/thread_pool.hpp>
#include <hubcache/xet/chunker.hpp>
#include <hubcache/xet/merkle.hpp>
#include <hubcache/xet/packer.hpp>
#include <hubcache/xet/xorb.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace xet = hubcache::xet;
namespace util = hubcache::util;

namespace {

struct Options {
  bool summary = false;
  bool sha256 = false;
  bool xorb = false;
  std::string pack_dir;
  std::size_t block_size = 1000003; // odd on purpose: chunks straddle blocks
  std::vector<std::string> files;
};

struct FileResult {
  std::uint64_t size = 0;
  std::vector<xet::Chunk> chunks;
  std::string sha256;
  std::uint64_t xorbs = 0;
  std::uint64_t xorb_bytes = 0;
};

// Packs chunks into xorbs as they come, keeping one xorb in memory.
class XorbCounter {
public:
  void add(const xet::Chunk& chunk, xet::Bytes data)
  {
    if (!m_builder.add(chunk.hash, data)) {
      flush();
      m_builder.add(chunk.hash, data);
    }
  }
  void flush()
  {
    if (!m_builder.empty()) {
      ++count;
      serialized += m_builder.bytes().size();
      m_builder.clear();
    }
  }
  std::uint64_t count = 0;
  std::uint64_t serialized = 0;

private:
  xet::XorbBuilder m_builder;
};

FileResult process(const std::string& path, const Options& options)
{
  FileResult result;
  xet::Chunker chunker;
  XorbCounter xorbs;
  util::Hasher sha256(util::HashAlgorithm::sha256);
  auto sink = [&](const xet::Chunk& chunk, xet::Bytes bytes) {
    result.chunks.push_back(chunk);
    if (options.xorb) {
      xorbs.add(chunk, bytes);
    }
  };
  auto consume = [&](const char* data, std::size_t size) {
    xet::Bytes block(reinterpret_cast<const std::uint8_t*>(data), size);
    if (options.sha256) {
      // Both over the same block, each on its own thread.
      util::parallel_for(2, 2, [&](std::size_t task) {
        if (task == 0) {
          sha256.update(data, size);
        } else {
          chunker.update(block, sink);
        }
      });
    } else {
      chunker.update(block, sink);
    }
  };
  result.size = util::read_chunks(util::open_regular_file(path), path, consume, options.block_size);
  chunker.finish(sink);
  xorbs.flush();
  result.xorbs = xorbs.count;
  result.xorb_bytes = xorbs.serialized;
  if (options.sha256) {
    result.sha256 = sha256.hex_digest();
  }
  return result;
}

std::vector<xet::HashedNode> nodes_of(const std::vector<xet::Chunk>& chunks)
{
  std::vector<xet::HashedNode> nodes;
  nodes.reserve(chunks.size());
  for (const auto& chunk : chunks) {
    nodes.push_back({chunk.hash, chunk.size});
  }
  return nodes;
}

std::string base_name(const std::string& path)
{
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The witness format: JSON.stringify of the same object in xet_witness.mjs. File names
// are the witness's own (no characters needing escapes).
void print_witness(const std::string& path, const FileResult& result)
{
  auto nodes = nodes_of(result.chunks);
  std::vector<xet::MerkleHash> hashes;
  for (const auto& chunk : result.chunks) {
    hashes.push_back(chunk.hash);
  }
  std::string line = "{\"file\":\"" + base_name(path) + "\",\"size\":" + std::to_string(result.size) + ",\"chunks\":[";
  for (std::size_t i = 0; i < result.chunks.size(); ++i) {
    line += (i == 0 ? "[" : ",[") + std::to_string(result.chunks[i].size) + ",\"" + result.chunks[i].hash.hex() + "\"]";
  }
  line += "],\"xorb_hash\":\"" + xet::xorb_hash(nodes).hex() + "\",\"file_hash\":\"" + xet::file_hash(nodes).hex()
          + "\",\"verification_hash\":\"" + xet::verification_hash(hashes).hex() + "\"}";
  std::cout << line << '\n';
}

void print_summary(const std::string& path, const FileResult& result, double seconds)
{
  auto nodes = nodes_of(result.chunks);
  std::string line = "{\"file\":\"" + base_name(path) + "\",\"size\":" + std::to_string(result.size) + ",\"chunks\":"
                     + std::to_string(result.chunks.size()) + ",\"file_hash\":\"" + xet::file_hash(nodes).hex() + "\"";
  if (!result.sha256.empty()) {
    line += ",\"sha256\":\"" + result.sha256 + "\"";
  }
  if (result.xorbs != 0) {
    line += ",\"xorbs\":" + std::to_string(result.xorbs) + ",\"xorb_bytes\":" + std::to_string(result.xorb_bytes);
  }
  char timing[64];
  std::snprintf(timing, sizeof timing, ",\"seconds\":%.3f}", seconds);
  std::cout << line << timing << '\n';
}

bool parse_options(int argc, char** argv, Options& options)
{
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--summary") {
      options.summary = true;
    } else if (arg == "--sha256") {
      options.sha256 = true;
    } else if (arg == "--xorb") {
      options.xorb = true;
    } else if (arg == "--pack" && i + 1 < argc) {
      options.pack_dir = argv[++i];
    } else if (arg == "--block-size" && i + 1 < argc) {
      options.block_size = std::stoul(argv[++i]);
      if (options.block_size == 0) {
        return false;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return false;
    } else {
      options.files.emplace_back(arg);
    }
  }
  return !options.files.empty();
}

void pack(const Options& options)
{
  const std::filesystem::path dir = options.pack_dir;
  std::filesystem::create_directories(dir / "xorbs");
  xet::UploadPacker packer([&](const xet::MerkleHash& hash, const std::vector<std::uint8_t>& bytes) {
    util::write_file_atomically(dir / "xorbs" / hash.hex(),
                                std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  });
  std::vector<std::string> lines;
  for (const auto& path : options.files) {
    const auto file = packer.add_file(path);
    lines.push_back("{\"path\":\"" + path + "\",\"size\":" + std::to_string(file.size) + ",\"sha256\":\"" + file.sha256
                    + "\",\"xet_hash\":\"" + file.file_hash.hex() + "\"}");
  }
  const auto shard = packer.finish();
  util::write_file_atomically(dir / "shard",
                              std::string_view(reinterpret_cast<const char*>(shard.data()), shard.size()));
  for (const auto& line : lines) {
    std::cout << line << '\n';
  }
}

} // namespace

int main(int argc, char** argv)
{
  Options options;
  try {
    if (!parse_options(argc, argv, options)) {
      std::cerr << "usage: xet_chunk_tool [--summary [--sha256] [--xorb]] [--pack DIR] [--block-size N] FILE...\n";
      return 2;
    }
  } catch (const std::exception&) {
    std::cerr << "xet_chunk_tool: --block-size needs a positive number\n";
    return 2;
  }
  try {
    if (!options.pack_dir.empty()) {
      pack(options);
      return 0;
    }
    for (const auto& path : options.files) {
      auto start = std::chrono::steady_clock::now();
      auto result = process(path, options);
      std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
      if (options.summary) {
        print_summary(path, result, seconds.count());
      } else {
        print_witness(path, result);
      }
    }
  } catch (const hubcache::Error& error) {
    std::cerr << "xet_chunk_tool: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
