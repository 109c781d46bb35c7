#include "hubcache/compilecache/digest_cache.hpp"

#include "remembered_lines.hpp"

#include "hubcache/error.hpp"
#include "hubcache/storage/bucket_repository.hpp"
#include "hubcache/xet/file_hasher.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <system_error>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

// Version 2 adds the MD5 and an S3 ETag; version 1 files are still read.
constexpr std::string_view k_digest_header = "neuron-cache-digests 2";
constexpr std::string_view k_digest_header_v1 = "neuron-cache-digests 1";

// A digest of the cache: "-" or lowercase hex. False when it is neither (a corrupt file).
template <std::size_t N>
bool parse_digest(std::string_view field, std::optional<util::DigestBytes<N>>& out)
{
  if (field == "-") {
    out.reset();
    return true;
  }
  out = util::DigestBytes<N>::from_hex(field);
  return out.has_value();
}

template <std::size_t N>
std::string hex_or_empty(const std::optional<util::DigestBytes<N>>& digest)
{
  return digest ? digest->hex() : std::string();
}

} // namespace

DigestCache::DigestCache(stdfs::path file) : m_file(std::move(file))
{
  std::unordered_map<std::string, Record> loaded;
  bool header = false;
  std::size_t field_count = 7;
  auto parse = [&](std::string_view line) {
    if (!header) {
      header = true;
      if (line == k_digest_header_v1) {
        field_count = 5;
        return true;
      }
      return line == k_digest_header;
    }
    // size \t mtime_ns \t inode \t sha256 \t git blob sha1 [\t md5 \t etag] \t path
    std::array<std::string_view, 7> fields;
    std::size_t start = 0;
    for (std::size_t i = 0; i < field_count; ++i) {
      auto tab = line.find('\t', start);
      if (tab == std::string_view::npos) {
        return false; // corrupt: ignore the whole file
      }
      fields[i] = line.substr(start, tab - start);
      start = tab + 1;
    }
    Record record;
    auto number = [](std::string_view text_value, auto& out) {
      auto [ptr, error] = std::from_chars(text_value.data(), text_value.data() + text_value.size(), out);
      return error == std::errc() && ptr == text_value.data() + text_value.size();
    };
    if (!number(fields[0], record.stamp.size) || !number(fields[1], record.stamp.mtime_ns)
        || !number(fields[2], record.stamp.inode)) {
      return false;
    }
    if (!parse_digest(fields[3], record.sha256) || !parse_digest(fields[4], record.git_blob_sha1)
        || (field_count > 5 && !parse_digest(fields[5], record.md5)) || start >= line.size()) {
      return false;
    }
    if (field_count > 6 && fields[6] != "-") {
      record.etag = std::make_unique<const std::string>(fields[6]);
    }
    loaded.insert_or_assign(std::string(line.substr(start)), std::move(record));
    return true;
  };
  // A missing, truncated or corrupt file is ignored whole.
  if (for_each_line(m_file, parse) && header) {
    m_records = std::move(loaded);
    m_loaded = m_records.size();
  }
}

stdfs::path DigestCache::default_path(const stdfs::path& cache_root, const util::Environment& env)
{
  return remembered_file(cache_root, "digests", ".tsv", env);
}

const util::FileDigests* DigestCache::find(const std::string& key, const FileStamp& stamp)
{
  auto it = m_records.find(key);
  if (it == m_records.end() || it->second.stamp != stamp) {
    return nullptr;
  }
  const auto& record = it->second;
  if (!record.used) {
    it->second.used = true;
    ++m_used;
  }
  m_found.size = record.stamp.size;
  m_found.sha256 = hex_or_empty(record.sha256);
  m_found.git_blob_sha1 = hex_or_empty(record.git_blob_sha1);
  m_found.md5 = hex_or_empty(record.md5);
  m_found.etag = record.etag ? *record.etag : std::string();
  return &m_found;
}

std::optional<util::FileDigests> DigestCache::known(const std::string& key, const FileStamp& stamp)
{
  if (const auto* digests = find(key, stamp)) {
    return *digests;
  }
  return std::nullopt;
}

void DigestCache::set_digests(Record& record, const util::FileDigests& digests)
{
  // A digest that is not lowercase hex is not kept: unknown, not wrong. What `digests`
  // leaves empty stays as known.
  if (!digests.sha256.empty()) {
    record.sha256 = util::Sha256Bytes::from_hex(digests.sha256);
  }
  if (!digests.git_blob_sha1.empty()) {
    record.git_blob_sha1 = util::Sha1Bytes::from_hex(digests.git_blob_sha1);
  }
  if (!digests.md5.empty()) {
    record.md5 = util::DigestBytes<16>::from_hex(digests.md5);
  }
  if (!digests.etag.empty() && digests.etag.find_first_of("\t\n") == std::string::npos) {
    record.etag = std::make_unique<const std::string>(digests.etag);
  }
}

bool DigestCache::contradicts(const Record& record, const util::FileDigests& digests)
{
  auto differs = [](const auto& known, const std::string& hex) { return known && !hex.empty() && known->hex() != hex; };
  return differs(record.sha256, digests.sha256) || differs(record.git_blob_sha1, digests.git_blob_sha1)
         || differs(record.md5, digests.md5);
}

void DigestCache::remember(const std::string& key, const FileStamp& stamp, const util::FileDigests& digests)
{
  update(m_records[key], stamp, digests);
}

void DigestCache::remember(std::string&& key, const FileStamp& stamp, const util::FileDigests& digests)
{
  // try_emplace leaves `key` alone when a record has it already.
  update(m_records.try_emplace(std::move(key)).first->second, stamp, digests);
}

void DigestCache::update(Record& record, const FileStamp& stamp, const util::FileDigests& digests)
{
  if (!record.used) {
    record.used = true;
    ++m_used;
  }
  if (record.stamp != stamp || contradicts(record, digests)) {
    // Another version of the file: nothing known of it yet.
    bool used = record.used;
    record = Record{};
    record.used = used;
    record.stamp = stamp;
  }
  set_digests(record, digests);
  m_changed = true;
}

DigestCache::EtagMatch DigestCache::match_etag(const std::string& key, const stdfs::path& file, const FileStamp& stamp,
                                               const std::string& etag)
{
  if (etag.starts_with(storage::BucketRepository::k_etag_prefix)) {
    return match_xet_hash(key, file, stamp, etag);
  }
  if (const auto* cached = find(key, stamp)) {
    if (!cached->etag.empty() && cached->etag == etag) {
      return EtagMatch::same;
    }
    if (util::is_md5_hex(etag) && !cached->md5.empty()) {
      return cached->md5 == etag ? EtagMatch::same : EtagMatch::differs;
    }
  }
  auto parts = util::etag_part_count(etag);
  if (!parts) {
    return EtagMatch::unknown; // an opaque tag: nothing to reproduce it from
  }
  util::DigestOptions options;
  util::PartSizeGuess guess;
  if (*parts == 0) {
    options.md5 = true;
  } else {
    guess = util::guess_part_sizes(stamp.size, *parts, m_etag_part_sizes);
    if (guess.sizes.empty()) {
      return EtagMatch::unknown;
    }
    options.etag_part_sizes = guess.sizes;
  }
  // One read gives the other digests too: an upload of a differing file sends its sha256.
  auto digests = util::digest_file(file, options);
  ++m_hashed;
  bool same = digests.md5 == etag;
  for (const auto& [part_size, multipart] : digests.multipart_etags) {
    if (multipart == etag) {
      same = true;
      digests.etag = etag;
    }
  }
  // The file may have changed while it was read: remember it only if it did not.
  if (stamp_of(file) == stamp && digests.size == stamp.size) {
    remember(key, stamp, digests);
  }
  if (same) {
    return EtagMatch::same;
  }
  return *parts == 0 || guess.certain ? EtagMatch::differs : EtagMatch::unknown;
}

// A Storage Bucket names a file by its Xet hash ("xet:<hash>", no sha256): the local file's,
// remembered once computed (a push or a pull records it too), decides.
DigestCache::EtagMatch DigestCache::match_xet_hash(const std::string& key, const stdfs::path& file,
                                                   const FileStamp& stamp, const std::string& etag)
{
  if (const auto* cached = find(key, stamp);
      cached && cached->etag.starts_with(storage::BucketRepository::k_etag_prefix)) {
    return cached->etag == etag ? EtagMatch::same : EtagMatch::differs;
  }
  util::FileDigests digests;
  digests.size = stamp.size;
  digests.etag = std::string(storage::BucketRepository::k_etag_prefix) + xet::hash_file(file).hex();
  ++m_hashed;
  if (stamp_of(file) == stamp) {
    remember(key, stamp, digests);
  }
  return digests.etag == etag ? EtagMatch::same : EtagMatch::differs;
}

util::FileDigests DigestCache::digest(const std::string& key, const stdfs::path& file, const FileStamp& stamp)
{
  if (const auto* cached = find(key, stamp); cached && !cached->sha256.empty() && !cached->git_blob_sha1.empty()) {
    return *cached;
  }
  auto digests = util::digest_file(file);
  ++m_hashed;
  // The file may have changed while it was read: remember it only if it did not.
  if (stamp_of(file) == stamp && digests.size == stamp.size) {
    remember(key, stamp, digests);
  }
  return digests;
}

void DigestCache::save()
{
  if (m_file.empty() || (!m_changed && m_used == m_loaded)) {
    return; // nothing new to remember
  }
  try {
    std::error_code ec;
    stdfs::create_directories(m_file.parent_path(), ec);
    BlockWriter writer(m_file);
    auto& text = writer.text();
    text = k_digest_header;
    text += '\n';
    std::vector<const std::pair<const std::string, Record>*> used;
    used.reserve(m_used);
    for (const auto& item : m_records) {
      if (item.second.used) {
        used.push_back(&item);
      }
    }
    std::sort(used.begin(), used.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    for (const auto* item : used) {
      const auto& [key, record] = *item;
      text += std::to_string(record.stamp.size) + '\t' + std::to_string(record.stamp.mtime_ns) + '\t'
              + std::to_string(record.stamp.inode) + '\t' + (record.sha256 ? record.sha256->hex() : std::string("-"))
              + '\t' + (record.git_blob_sha1 ? record.git_blob_sha1->hex() : std::string("-")) + '\t'
              + (record.md5 ? record.md5->hex() : std::string("-")) + '\t'
              + (record.etag ? *record.etag : std::string("-")) + '\t' + key + '\n';
      writer.flush_if_full();
    }
    writer.commit();
  } catch (const Error&) {
    // Only a cache: the next run hashes again.
  }
}

bool same_content(const storage::RepoFile& remote, const LocalFile& local, DigestCache& digests, std::string_view root)
{
  if (remote.size != local.size) {
    return false;
  }
  FileStamp stamp{local.size, local.mtime_ns, local.inode};
  if (remote.sha256.empty() && remote.git_blob_sha1.empty()) {
    // An S3 store: its ETag, else (or when it cannot be reproduced) the size.
    return remote.etag.empty()
           || digests.match_etag(local.path, source_of(root, local), stamp, remote.etag)
                != DigestCache::EtagMatch::differs;
  }
  if (const auto* cached = digests.find(local.path, stamp)) {
    const auto& known = remote.sha256.empty() ? cached->git_blob_sha1 : cached->sha256;
    if (!known.empty()) {
      return known == (remote.sha256.empty() ? remote.git_blob_sha1 : remote.sha256);
    }
  }
  auto hashed = digests.digest(local.path, source_of(root, local), stamp);
  return remote.sha256.empty() ? hashed.git_blob_sha1 == remote.git_blob_sha1 : hashed.sha256 == remote.sha256;
}

} // namespace hubcache::compilecache
