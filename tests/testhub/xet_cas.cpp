#include "xet_cas.hpp"

#include <cstring>
#include <fstream>

#include "http_util.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
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

} // namespace

XetCas::XetCas(stdfs::path root) : m_root(std::move(root))
{
  stdfs::create_directories(m_root / "xorbs");
  stdfs::create_directories(m_root / "files");
  stdfs::create_directories(m_root / "sha256");
  stdfs::create_directories(m_root / "dedup");
  const auto key = random_hex(64);
  for (std::size_t i = 0; i < xet::hash_size; ++i)
    m_dedup_key.bytes[i] = static_cast<std::uint8_t>(std::stoi(key.substr(2 * i, 2), nullptr, 16) | (i == 0 ? 1 : 0));
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
  return true;
}

xet::XorbLayout XetCas::xorb_layout(const std::string& hash) const
{
  return xet::read_xorb_layout(bytes_of(hubcache::util::read_file(xorb_path(hash), xet::max_xorb_input_bytes)));
}

std::vector<xet::MerkleHash> XetCas::chunk_hashes(const std::string& xorb) const
{
  const auto raw = hubcache::util::read_file(xorb_path(xorb) += ".chunks", xet::max_xorb_chunks * xet::hash_size);
  std::vector<xet::MerkleHash> hashes(raw.size() / xet::hash_size);
  for (std::size_t i = 0; i < hashes.size(); ++i)
    std::memcpy(hashes[i].bytes.data(), raw.data() + i * xet::hash_size, xet::hash_size);
  return hashes;
}

std::vector<XetShardFile> XetCas::put_shard(const std::string& body, const stdfs::path& temp_dir)
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
  // The xorb the last term read stays loaded: a shard's small files follow one another in
  // the xorbs that pack them, so each is read once, and at most one is held (up to 64 MiB).
  struct LoadedXorb {
    std::string hash;
    std::string bytes;
    xet::XorbLayout layout;
    std::vector<xet::MerkleHash> hashes;
  } loaded;
  const auto load = [&](const std::string& xorb) -> const LoadedXorb& {
    if (loaded.hash != xorb) {
      loaded.hash.clear();
      loaded.bytes = hubcache::util::read_file(xorb_path(xorb), xet::max_xorb_input_bytes);
      loaded.layout = xet::read_xorb_layout(bytes_of(loaded.bytes));
      loaded.hashes = chunk_hashes(xorb);
      loaded.hash = xorb;
    }
    return loaded;
  };
  std::vector<XetShardFile> added;
  for (const auto& info : shard.files) {
    const auto file_id = info.file_hash.hex();
    if (!info.sha256)
      refuse("file " + file_id + " has no sha256 metadata (required for Git repos)");
    if (info.verification.size() != info.terms.size())
      refuse("file " + file_id + " lacks verification entries");
    XetShardFile out{{file_id, info.sha256->hex(), 0, {}}, temp_dir / ("xet-" + random_hex(16))};
    std::vector<xet::HashedNode> nodes;
    hubcache::util::Hasher sha256(hubcache::util::HashAlgorithm::sha256);
    std::ofstream content(out.content, std::ios::binary);
    for (std::size_t t = 0; t < info.terms.size(); ++t) {
      const auto& term = info.terms[t];
      const auto xorb = term.xorb_hash.hex();
      if (!has_xorb(xorb))
        refuse("file " + file_id + " refers to xorb " + xorb + ", which was not uploaded");
      const auto& [unused, bytes, layout, hashes] = load(xorb);
      if (term.chunk_start >= term.chunk_end || term.chunk_end > hashes.size())
        refuse("file " + file_id + " refers to chunks outside xorb " + xorb);
      std::uint64_t term_size = 0;
      for (auto c = term.chunk_start; c < term.chunk_end; ++c) {
        const auto data = xet::xorb_chunk_data(bytes_of(bytes), layout.chunks[c]);
        content.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
        sha256.update(std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
        nodes.push_back({hashes[c], data.size()});
        term_size += data.size();
      }
      if (term_size != term.unpacked_size)
        refuse("a term of file " + file_id + " says " + std::to_string(term.unpacked_size) + " bytes, its chunks hold "
               + std::to_string(term_size));
      const std::span<const xet::MerkleHash> range(hashes.data() + term.chunk_start, term.chunk_end - term.chunk_start);
      if (xet::verification_hash(range) != info.verification[t])
        refuse("wrong verification hash for a term of file " + file_id);
      out.file.terms.push_back({xorb, term.chunk_start, term.chunk_end, term_size});
      out.file.size += term_size;
    }
    content.close();
    if (!content)
      throw HubError(500, "Cannot store the reconstructed file");
    if (xet::file_hash(nodes).hex() != file_id)
      refuse("file reconstruction does not produce the file hash " + file_id);
    if (sha256.hex_digest() != out.file.sha256)
      refuse("file " + file_id + " does not have the sha256 " + out.file.sha256);
    added.push_back(std::move(out));
  }
  for (const auto& file : added)
    record(file.file);
  index_for_dedup(shard);
  return added;
}

void XetCas::record(const XetFile& file)
{
  json terms = json::array();
  for (const auto& term : file.terms)
    terms.push_back({{"xorb", term.xorb}, {"start", term.chunk_start}, {"end", term.chunk_end}, {"size", term.size}});
  std::lock_guard lock(m_mutex);
  write_hub_file(m_root / "files" / (file.hash + ".json"),
                 json{{"size", file.size}, {"sha256", file.sha256}, {"terms", terms}}.dump());
  write_hub_file(m_root / "sha256" / file.sha256, file.hash);
}

std::optional<XetFile> XetCas::file(const std::string& file_hash) const
{
  if (!is_hash_string(file_hash))
    return std::nullopt;
  const auto text = hubcache::util::read_file_if_exists(m_root / "files" / (file_hash + ".json"));
  if (!text)
    return std::nullopt;
  const auto record = json::parse(*text);
  XetFile file{file_hash, record.at("sha256").get<std::string>(), record.at("size").get<std::uint64_t>(), {}};
  for (const auto& term : record.at("terms"))
    file.terms.push_back({term.at("xorb").get<std::string>(), term.at("start").get<std::uint32_t>(),
                          term.at("end").get<std::uint32_t>(), term.at("size").get<std::uint64_t>()});
  return file;
}

std::optional<std::string> XetCas::file_hash_of_sha256(const std::string& sha256) const
{
  if (!is_hex(sha256, 64))
    return std::nullopt;
  return hubcache::util::read_file_if_exists(m_root / "sha256" / sha256);
}

} // namespace testhub
