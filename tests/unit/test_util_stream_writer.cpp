#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>
#include <hubcache/util/stream_writer.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <random>
#include <unistd.h>

using namespace hubcache;
using hubcache::util::StreamWriter;

namespace util_stream_writer_test {

namespace {

std::string random_bytes(std::size_t size, unsigned seed)
{
  std::mt19937 generator(seed);
  std::string bytes(size, '\0');
  for (auto& byte : bytes) {
    byte = static_cast<char>(generator());
  }
  return bytes;
}

util::Fd open_file(const std::filesystem::path& path, int flags)
{
  util::Fd fd(::open(path.c_str(), flags | O_CLOEXEC, 0644));
  REQUIRE(fd);
  return fd;
}

// Hands `bytes` over in pieces of uneven sizes, as a network delivers them.
void write_in_pieces(StreamWriter& writer, std::string_view bytes)
{
  std::size_t piece = 1;
  while (!bytes.empty()) {
    auto take = std::min(bytes.size(), piece);
    writer.write(bytes.substr(0, take));
    bytes.remove_prefix(take);
    piece = piece * 7 % 700'001 + 13;
  }
}

} // namespace

TEST_SUITE_BEGIN("util::stream_writer");

TEST_CASE("a small stream is written whole at finish, through the page cache")
{
  test_support::TempDir dir;
  auto path = dir / "small";
  auto fd = open_file(path, O_WRONLY | O_CREAT | O_EXCL);
  auto bytes = random_bytes(5000, 1);
  StreamWriter writer(fd, path, 0, bytes.size());
  CHECK(writer.direct_bytes() == 0);
  write_in_pieces(writer, bytes);
  CHECK(writer.bytes_written() == bytes.size());
  writer.finish();
  CHECK(util::read_file(path) == bytes);
}

TEST_CASE("a big stream arrives byte for byte, its tail included, and leaves the descriptor as it found it")
{
  test_support::TempDir dir;
  auto path = dir / "big";
  auto fd = open_file(path, O_WRONLY | O_CREAT | O_EXCL);
  int flags_before = ::fcntl(fd.get(), F_GETFL);
  // Not a whole number of blocks, nor of 4 KiB pages: the tail cannot go O_DIRECT.
  auto bytes = random_bytes(StreamWriter::k_direct_threshold + 3 * StreamWriter::k_block_size + 1234, 2);
  {
    StreamWriter writer(fd, path, 0, bytes.size());
    write_in_pieces(writer, bytes);
    writer.finish();
    // Every whole block, when the file system takes O_DIRECT; never the tail.
    CHECK(writer.direct_bytes() <= bytes.size() - 1234);
    MESSAGE("O_DIRECT in " << dir.path() << ": " << writer.direct_bytes() << " bytes");
  }
  CHECK(::fcntl(fd.get(), F_GETFL) == flags_before);
  CHECK(util::hex_digest_file(util::HashAlgorithm::sha256, path)
        == util::hex_digest(util::HashAlgorithm::sha256, bytes));
}

TEST_CASE("a big stream on tmpfs stays in the page cache, which is its storage")
{
  std::filesystem::path shm = "/dev/shm";
  if (!std::filesystem::is_directory(shm) || ::access(shm.c_str(), W_OK) != 0) {
    MESSAGE("no writable /dev/shm here");
    return;
  }
  auto path = shm / ("neuron-cache-unit-stream-" + std::to_string(::getpid()));
  auto bytes = random_bytes(StreamWriter::k_direct_threshold + StreamWriter::k_block_size, 7);
  {
    auto fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC);
    StreamWriter writer(fd, path, 0, bytes.size());
    writer.write(bytes);
    writer.finish();
    CHECK(writer.direct_bytes() == 0);
  }
  CHECK(util::read_file(path, bytes.size()) == bytes);
  std::filesystem::remove(path);
}

TEST_CASE("streams at their offsets fill one file whatever their order, like the parts of an upload")
{
  test_support::TempDir dir;
  auto path = dir / "object";
  auto part_size = StreamWriter::k_direct_threshold + StreamWriter::k_block_size;
  auto bytes = random_bytes(2 * part_size + 777, 3);
  auto fd = open_file(path, O_WRONLY | O_CREAT);
  for (int part : {2, 0, 1}) {
    auto offset = static_cast<std::uint64_t>(part) * part_size;
    auto piece = std::string_view(bytes).substr(offset, part_size);
    StreamWriter writer(fd, path, offset, piece.size());
    write_in_pieces(writer, piece);
    writer.finish();
  }
  CHECK(util::read_file(path, bytes.size()) == bytes);
}

TEST_CASE("a write that fails is reported, whether it happened on the writer thread or at finish")
{
  test_support::TempDir dir;
  auto path = dir / "read-only";
  util::write_file_atomically(path, "x");
  auto fd = open_file(path, O_RDONLY);
  SUBCASE("small stream: at finish")
  {
    StreamWriter writer(fd, path, 0, 10);
    writer.write("0123456789");
    CHECK_THROWS_AS(writer.finish(), IoError);
  }
  SUBCASE("big stream: at a later write or at finish")
  {
    StreamWriter writer(fd, path, 0, 4 * StreamWriter::k_block_size);
    auto bytes = random_bytes(4 * StreamWriter::k_block_size, 4);
    std::string message;
    try {
      writer.write(bytes);
      writer.finish();
    } catch (const IoError& error) {
      message = error.what();
    }
    CHECK(message.find("cannot write " + path.string()) != std::string::npos);
  }
}

TEST_CASE("a writer dropped mid-stream stops its thread and publishes nothing")
{
  test_support::TempDir dir;
  auto target = dir / "neff";
  {
    util::AtomicFile file(target);
    file.stream(64 * StreamWriter::k_block_size);
    file.write(random_bytes(5 * StreamWriter::k_block_size + 9, 5));
  }
  CHECK_FALSE(std::filesystem::exists(target));
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("AtomicFile::stream publishes the whole stream on commit")
{
  test_support::TempDir dir;
  auto target = dir / "neff";
  auto bytes = random_bytes(StreamWriter::k_direct_threshold + 99, 6);
  util::AtomicFile file(target);
  file.stream(bytes.size());
  file.write(bytes.substr(0, 100));
  file.write(bytes.substr(100));
  file.complete_writes();
  CHECK(std::filesystem::file_size(file.temp_path()) == bytes.size());
  file.commit();
  CHECK(util::read_file(target, bytes.size()) == bytes);
}

TEST_SUITE_END();

} // namespace util_stream_writer_test
