#include "xet_cas.hpp"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <memory>
#include <thread>
#include <unistd.h>

#include "http_util.hpp"
#include "hubcache/util/fd.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/thread_pool.hpp"
#include "hubcache/xet/merkle.hpp"
#include "hubcache/xet/shard.hpp"

namespace testhub {

namespace xet = hubcache::xet;

namespace {

xet::Bytes bytes_of(const std::string& text)
{
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

bool is_hash_string(const std::string& text)
{
  return is_hex(text, 64);
}

[[noreturn]] void refuse(const std::string& why)
{
  throw HubError(400, "Shard incorrectly serialized or contents failed verification: " + why);
}

// What a shard's terms need of one stored xorb (its bytes are read a term at a time).
struct LoadedXorb {
  std::string hash;
  xet::XorbLayout layout;
  std::vector<xet::MerkleHash> chunk_hashes;
  hubcache::util::Fd file; // opened for the shard's sha256 checks, if any
};

// The journal line of a file, written by hand: a shard of 10,000 small files is 10,000
// lines, and building each as a json object cost more than verifying the shard. Every
// string in it is a verified hex hash.
std::string file_line(const XetFile& file)
{
  std::string line = R"({"hash":")" + file.hash + R"(","size":)" + std::to_string(file.size) + R"(,"sha256":")"
                     + file.sha256 + R"(","terms":[)";
  for (std::size_t i = 0; i < file.terms.size(); ++i) {
    const auto& term = file.terms[i];
    line += (i == 0 ? R"({"xorb":")" : R"(,{"xorb":")") + term.xorb + R"(","start":)" + std::to_string(term.chunk_start)
            + R"(,"end":)" + std::to_string(term.chunk_end) + R"(,"size":)" + std::to_string(term.size) + "}";
  }
  return line + "]}\n";
}

XetFile file_of_line(const json& line)
{
  XetFile file{
    line.at("hash").get<std::string>(), line.at("sha256").get<std::string>(), line.at("size").get<std::uint64_t>(), {}};
  for (const auto& term : line.at("terms"))
    file.terms.push_back({term.at("xorb").get<std::string>(), term.at("start").get<std::uint32_t>(),
                          term.at("end").get<std::uint32_t>(), term.at("size").get<std::uint64_t>()});
  return file;
}

} // namespace

XetCas::XetCas(stdfs::path root) : m_root(std::move(root))
{
  stdfs::create_directories(m_root / "xorbs");
  const auto key = random_hex(64);
  for (std::size_t i = 0; i < xet::hash_size; ++i)
    m_dedup_key.bytes[i] = static_cast<std::uint8_t>(std::stoi(key.substr(2 * i, 2), nullptr, 16) | (i == 0 ? 1 : 0));
  load_journals();
}

stdfs::path XetCas::xorb_path(const std::string& hash) const
{
  return m_root / "xorbs" / hash;
}

bool XetCas::has_xorb(const std::string& hash) const
{
  std::error_code ec;
  return is_hash_string(hash) && stdfs::is_regular_file(xorb_path(hash) += ".chunks", ec);
}

bool XetCas::put_xorb(const std::string& hash, const std::string& body)
{
  if (!is_hash_string(hash))
    throw HubError(400, "Invalid xorb hash");
  xet::DecodedXorb decoded;
  try {
    decoded = xet::decode_xorb(bytes_of(body));
  } catch (const std::exception& e) {
    throw HubError(400, std::string("Xorb incorrectly serialized: ") + e.what());
  }
  if (decoded.hash.hex() != hash)
    throw HubError(400, "Xorb hash mismatch: the body hashes to " + decoded.hash.hex() + ", not " + hash);
  std::lock_guard lock(m_mutex);
  if (has_xorb(hash))
    return false;
  std::string hashes;
  for (const auto& chunk : decoded.layout.chunks)
    hashes.append(reinterpret_cast<const char*>(chunk.hash.bytes.data()), chunk.hash.bytes.size());
  write_hub_file(xorb_path(hash), body);
  write_hub_file(xorb_path(hash) += ".chunks", hashes); // last: marks it complete
  m_layouts.emplace(hash, std::move(decoded.layout));
  return true;
}

xet::XorbLayout XetCas::xorb_layout(const std::string& hash) const
{
  {
    std::lock_guard lock(m_mutex);
    if (const auto it = m_layouts.find(hash); it != m_layouts.end())
      return it->second;
  }
  auto layout = xet::read_xorb_layout(bytes_of(hubcache::util::read_file(xorb_path(hash), xet::max_xorb_input_bytes)));
  std::lock_guard lock(m_mutex);
  return m_layouts.emplace(hash, std::move(layout)).first->second;
}

std::vector<xet::MerkleHash> XetCas::chunk_hashes(const std::string& xorb) const
{
  const auto raw = hubcache::util::read_file(xorb_path(xorb) += ".chunks", xet::max_xorb_chunks * xet::hash_size);
  std::vector<xet::MerkleHash> hashes(raw.size() / xet::hash_size);
  for (std::size_t i = 0; i < hashes.size(); ++i)
    std::memcpy(hashes[i].bytes.data(), raw.data() + i * xet::hash_size, xet::hash_size);
  return hashes;
}

std::vector<XetFile> XetCas::put_shard(const std::string& body, bool for_bucket)
{
  xet::Shard shard;
  try {
    shard = xet::parse_shard(bytes_of(body));
  } catch (const std::exception& e) {
    refuse(e.what());
  }
  for (const auto& xorb : shard.xorbs) {
    const auto hash = xorb.xorb_hash.hex();
    if (!has_xorb(hash))
      refuse("xorb " + hash + " was not uploaded");
    const auto stored = chunk_hashes(hash);
    if (stored.size() != xorb.chunks.size())
      refuse("xorb " + hash + " has " + std::to_string(stored.size()) + " chunks, the shard lists "
             + std::to_string(xorb.chunks.size()));
    for (std::size_t i = 0; i < stored.size(); ++i) {
      if (stored[i] != xorb.chunks[i].hash)
        refuse("chunk " + std::to_string(i) + " of xorb " + hash + " differs from the uploaded xorb");
    }
  }
  // The layout and chunk hashes of every xorb the shard's terms name, read once each (small
  // files alternate between new xorbs and stored ones), the file opened only for files with
  // a sha256 to check (a bucket's may have none).
  std::unordered_map<std::string, LoadedXorb> loaded;
  const auto load = [&](const std::string& xorb, bool with_file) -> const LoadedXorb& {
    auto [it, inserted] = loaded.try_emplace(xorb);
    auto& entry = it->second;
    if (inserted) {
      if (!has_xorb(xorb))
        refuse("a file refers to xorb " + xorb + ", which was not uploaded");
      entry.layout = xorb_layout(xorb);
      entry.chunk_hashes = chunk_hashes(xorb);
      entry.hash = xorb;
    }
    if (with_file && !entry.file)
      entry.file = hubcache::util::open_regular_file(xorb_path(xorb));
    return entry;
  };
  for (const auto& info : shard.files) {
    for (const auto& term : info.terms)
      load(term.xorb_hash.hex(), info.sha256.has_value());
  }
  // Then each file on its own, on the server's cores (a shard of a first push names 20,000
  // small files; the Hub's own verification is not one thread's loop either).
  std::vector<XetFile> added(shard.files.size());
  const auto workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
  hubcache::util::parallel_for(shard.files.size(), workers, [&](std::size_t index) {
    const auto& info = shard.files[index];
    const auto file_id = info.file_hash.hex();
    if (!info.sha256 && !for_bucket)
      refuse("file " + file_id + " has no sha256 metadata (required for Git repos)");
    if (info.verification.size() != info.terms.size())
      refuse("file " + file_id + " lacks verification entries");
    XetFile out{file_id, info.sha256 ? info.sha256->hex() : std::string(), 0, {}};
    std::vector<xet::HashedNode> nodes;
    hubcache::util::Hasher sha256(hubcache::util::HashAlgorithm::sha256);
    for (std::size_t t = 0; t < info.terms.size(); ++t) {
      const auto& term = info.terms[t];
      const auto xorb = term.xorb_hash.hex();
      const auto& stored = loaded.at(xorb);
      const auto& hashes = stored.chunk_hashes;
      if (term.chunk_start >= term.chunk_end || term.chunk_end > hashes.size()
          || term.chunk_end > stored.layout.chunks.size())
        refuse("file " + file_id + " refers to chunks outside xorb " + xorb);
      std::uint64_t term_size = 0;
      for (auto c = term.chunk_start; c < term.chunk_end; ++c) {
        nodes.push_back({hashes[c], stored.layout.chunks[c].size});
        term_size += stored.layout.chunks[c].size;
      }
      // The bytes only for a sha256 to check: nothing is rebuilt here (readers without Xet
      // get the file rebuilt when they first ask, as from the Hub's bridge).
      if (info.sha256) {
        read_chunks(stored.file.get(), xorb, stored.layout, term.chunk_start, term.chunk_end, [&](const auto& data) {
          sha256.update(std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
        });
      }
      if (term_size != term.unpacked_size)
        refuse("a term of file " + file_id + " says " + std::to_string(term.unpacked_size) + " bytes, its chunks hold "
               + std::to_string(term_size));
      const std::span<const xet::MerkleHash> range(hashes.data() + term.chunk_start, term.chunk_end - term.chunk_start);
      if (xet::verification_hash(range) != info.verification[t])
        refuse("wrong verification hash for a term of file " + file_id);
      out.terms.push_back({xorb, term.chunk_start, term.chunk_end, term_size});
      out.size += term_size;
    }
    if (xet::file_hash(nodes).hex() != file_id)
      refuse("file reconstruction does not produce the file hash " + file_id);
    if (info.sha256 && sha256.hex_digest() != out.sha256)
      refuse("file " + file_id + " does not have the sha256 " + out.sha256);
    added[index] = std::move(out);
  });
  record(added);
  index_for_dedup(shard);
  return added;
}

void XetCas::for_each_chunk(const std::string& xorb, const xet::XorbLayout& layout, std::uint32_t start,
                            std::uint32_t end, const std::function<void(hubcache::xet::Bytes)>& consume) const
{
  const auto fd = hubcache::util::open_regular_file(xorb_path(xorb));
  read_chunks(fd.get(), xorb, layout, start, end, consume);
}

void XetCas::read_chunks(int fd, const std::string& xorb, const xet::XorbLayout& layout, std::uint32_t start,
                         std::uint32_t end, const std::function<void(hubcache::xet::Bytes)>& consume)
{
  // Only the chunks' bytes of the xorb: a small file of a 64 MiB xorb reads a few KiB.
  const auto& first = layout.chunks.at(start);
  const auto& last = layout.chunks.at(end - 1);
  const std::uint64_t begin = first.header_offset;
  const std::uint64_t stop = std::uint64_t{last.header_offset} + xet::chunk_header_size + last.stored_size;
  // Not zero-filled first: a shard of a 2 GB file reads 2 GB here before it is answered.
  const auto size = static_cast<std::size_t>(stop - begin);
  const auto bytes = std::make_unique_for_overwrite<std::uint8_t[]>(size);
  if (::pread(fd, bytes.get(), size, static_cast<off_t>(begin)) != static_cast<ssize_t>(size))
    throw HubError(500, "Cannot read xorb " + xorb);
  std::vector<std::uint8_t> scratch;
  for (auto c = start; c < end; ++c) {
    auto chunk = layout.chunks[c];
    chunk.header_offset -= static_cast<std::uint32_t>(begin);
    consume(xet::xorb_chunk_view(xet::Bytes(bytes.get(), size), chunk, scratch));
  }
}

void XetCas::reconstruct(const XetFile& file, const stdfs::path& out) const
{
  hubcache::util::AtomicFile target(out);
  for (const auto& term : file.terms) {
    for_each_chunk(term.xorb, xorb_layout(term.xorb), term.chunk_start, term.chunk_end,
                   [&target](const auto& data) { target.write(data.data(), data.size()); });
  }
  target.commit(false);
}

void XetCas::append_journal(const std::string& name, const std::string& lines)
{
  if (lines.empty())
    return;
  // O_APPEND, one write: a line is whole or (after a crash) the last one is cut, which the
  // loader skips.
  const auto path = m_root / name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    throw HubError(500, "Cannot open " + path.string());
  const auto written = ::write(fd, lines.data(), lines.size());
  ::close(fd);
  if (written != static_cast<ssize_t>(lines.size()))
    throw HubError(500, "Cannot append to " + path.string());
}

void XetCas::load_journals()
{
  const auto each_line = [this](const std::string& name, const auto& consume) {
    const auto text = hubcache::util::read_file_if_exists(m_root / name, 1ull << 34);
    if (!text)
      return;
    for (const auto& line : split(*text, '\n')) {
      const auto parsed = json::parse(line, nullptr, false);
      if (!parsed.is_discarded() && parsed.is_object())
        consume(parsed);
    }
  };
  each_line("files.jsonl", [this](const json& line) {
    auto file = file_of_line(line);
    if (!file.sha256.empty())
      m_sha256[file.sha256] = file.hash;
    m_files[file.hash] = std::move(file);
  });
  each_line("dedup.jsonl", [this](const json& line) {
    m_dedup[line.at("chunk").get<std::string>()] = line.at("xorbs").get<std::string>();
  });
}

void XetCas::record(const std::vector<XetFile>& files)
{
  std::string lines;
  lines.reserve(files.size() * 400);
  for (const auto& added : files)
    lines += file_line(added);
  std::lock_guard lock(m_mutex);
  append_journal("files.jsonl", lines);
  for (const auto& added : files) {
    if (!added.sha256.empty())
      m_sha256[added.sha256] = added.hash;
    m_files[added.hash] = added;
  }
}

std::optional<XetFile> XetCas::file(const std::string& file_hash) const
{
  std::lock_guard lock(m_mutex);
  const auto it = m_files.find(file_hash);
  if (it == m_files.end())
    return std::nullopt;
  return it->second;
}

std::optional<std::string> XetCas::file_hash_of_sha256(const std::string& sha256) const
{
  std::lock_guard lock(m_mutex);
  const auto it = m_sha256.find(sha256);
  if (it == m_sha256.end())
    return std::nullopt;
  return it->second;
}

} // namespace testhub
