#include "hubcache/compilecache/sync.hpp"

#include "hubcache/compilecache/pull_guard.hpp"
#include "hubcache/compilecache/push_limits.hpp"

#include "hubcache/compilecache/cleanup.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/checked.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/nofollow.hpp"
#include "hubcache/util/process.hpp"
#include "hubcache/util/text.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

// Version 2 adds the MD5 and an S3 ETag; version 1 files are still read.
constexpr std::string_view k_digest_header = "neuron-cache-digests 2";
constexpr std::string_view k_digest_header_v1 = "neuron-cache-digests 1";
constexpr std::string_view k_staging_name = ".neuron-cache-pull";

std::string errno_text()
{
  return std::strerror(errno);
}

// Hands each '\n'-terminated line of a remembered file (digests, snapshot) to `on_line`
// (false stops), reading a block at a time: the text of tens of thousands of records is
// never held whole beside what is built from it. Returns false when the file is missing,
// unreadable, larger than read_file's bound, or ends without a newline.
bool for_each_line(const stdfs::path& file, const std::function<bool(std::string_view)>& on_line)
{
  std::optional<util::Fd> fd;
  try {
    fd = util::open_regular_file_if_exists(file);
  } catch (const Error&) {
    return false;
  }
  if (!fd) {
    return false;
  }
  std::string carry;
  bool going = true;
  try {
    auto read = util::read_chunks(*fd, file, [&](const char* data, std::size_t size) {
      std::string_view chunk(data, size);
      while (going && !chunk.empty()) {
        auto end = chunk.find('\n');
        if (end == std::string_view::npos) {
          carry.append(chunk);
          return;
        }
        if (carry.empty()) {
          going = on_line(chunk.substr(0, end));
        } else {
          carry.append(chunk.substr(0, end));
          going = on_line(carry);
          carry.clear();
        }
        chunk.remove_prefix(end + 1);
      }
    });
    if (read > util::k_default_read_limit) {
      return false;
    }
  } catch (const Error&) {
    return false;
  }
  return going && carry.empty();
}

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

// Writes a remembered file atomically, formatted and written a block at a time.
class BlockWriter {
public:
  explicit BlockWriter(const stdfs::path& target) : m_file(target) {}
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

} // namespace

FileStamp stamp_of(const stdfs::path& file)
{
  struct stat status {};
  if (::stat(file.c_str(), &status) != 0) {
    throw IoError("cannot stat " + file.string() + ": " + errno_text());
  }
  return {static_cast<std::uint64_t>(status.st_size),
          static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 + status.st_mtim.tv_nsec,
          static_cast<std::uint64_t>(status.st_ino)};
}

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

namespace {

bool is_publishable(const Entry& entry)
{
  return entry.kind != EntryKind::module || entry.state == EntryState::success;
}

} // namespace

PushPlan plan_push(const Scan& scan, const std::vector<storage::RepoFile>& remote, DigestCache& digests)
{
  std::unordered_map<std::string_view, const storage::RepoFile*> by_path;
  by_path.reserve(remote.size());
  for (const auto& file : remote) {
    by_path.emplace(file.path, &file);
  }
  PushPlan plan;
  plan.root = scan.root.native();
  plan.skipped = scan.skipped;
  for (const auto& entry : scan.entries) {
    if (!is_publishable(entry) || entry.files.empty()) {
      continue;
    }
    bool uploads = false;
    for (const auto& file : entry.files) {
      auto it = by_path.find(file.path);
      if (it != by_path.end() && same_content(*it->second, file, digests, scan.root.native())) {
        continue;
      }
      plan.uploads.push_back({file.path, file.source, {file.size, file.mtime_ns, file.inode}});
      ++plan.files_to_upload;
      plan.bytes_to_upload += file.size;
      uploads = true;
    }
    (uploads ? plan.entries_to_push : plan.entries_present).push_back(entry.path);
  }
  plan.folder_entries = folder_entries_after(remote, plan.uploads);
  return plan;
}

std::string PushPlan::source_of(const Upload& upload) const
{
  return compilecache::source_of(root, upload.source, upload.path);
}

std::string publish_fingerprint(const Scan& scan)
{
  // Fixed-width stamps between '\0'-terminated paths: no two file lists hash alike.
  util::Hasher hasher(util::HashAlgorithm::sha256);
  for (const auto& entry : scan.entries) {
    if (!is_publishable(entry) || entry.files.empty()) {
      continue;
    }
    for (const auto& file : entry.files) {
      hasher.update(file.path.c_str(), file.path.size() + 1);
      const std::array<std::uint64_t, 3> stamp{file.size, static_cast<std::uint64_t>(file.mtime_ns), file.inode};
      hasher.update(stamp.data(), sizeof stamp);
    }
  }
  return hasher.hex_digest();
}

PushPlan plan_already_pushed(const Scan& scan)
{
  PushPlan plan;
  plan.skipped = scan.skipped;
  for (const auto& entry : scan.entries) {
    if (is_publishable(entry) && !entry.files.empty()) {
      plan.entries_present.push_back(entry.path);
    }
  }
  return plan;
}

std::set<std::string> publishable_versions(const Scan& scan)
{
  std::set<std::string> versions;
  for (const auto& entry : scan.entries) {
    if (is_publishable(entry) && !entry.files.empty()) {
      versions.insert(entry.path.substr(0, entry.path.find('/')));
    }
  }
  return versions;
}

namespace {
// Version 2 adds the ETag column; an older file is simply not used (the repo is listed).
constexpr std::string_view k_snapshot_header = "neuron-cache-remote 2";
} // namespace

RemoteSnapshot::RemoteSnapshot(stdfs::path file) : m_file(std::move(file)) {}

stdfs::path RemoteSnapshot::default_path(const stdfs::path& cache_root, std::string_view repo_spec,
                                         const util::Environment& env)
{
  auto base = DigestCache::default_path(cache_root, env).parent_path();
  auto key = util::hex_digest(util::HashAlgorithm::sha256,
                              stdfs::absolute(cache_root).lexically_normal().string() + '\n' + std::string(repo_spec))
               .substr(0, 16);
  return base / ("remote-" + key + ".tsv");
}

std::optional<std::vector<storage::RepoFile>> RemoteSnapshot::files(const std::optional<std::string>& revision,
                                                                    const std::set<std::string>& versions) const
{
  if (m_file.empty() || !revision || revision->empty()) {
    return std::nullopt;
  }
  // Read a block at a time (tens of thousands of lines), the vector sized once from a
  // first pass that only counts lines.
  std::size_t lines = 0;
  if (!for_each_line(m_file, [&](std::string_view) {
        ++lines;
        return true;
      })) {
    return std::nullopt;
  }
  std::vector<storage::RepoFile> files;
  files.reserve(lines > 3 ? lines - 3 : 0);
  std::size_t number = 0;
  bool covers = false;
  auto parse = [&](std::string_view line) {
    ++number;
    if (number == 1) {
      return line == k_snapshot_header;
    }
    if (number == 2) {
      return line == "revision\t" + *revision;
    }
    if (number == 3) {
      if (!line.starts_with("versions")) {
        return false;
      }
      std::set<std::string> covered;
      for (std::size_t start = line.find('\t'); start != std::string_view::npos;) {
        auto end = line.find('\t', start + 1);
        covered.emplace(
          line.substr(start + 1, end == std::string_view::npos ? std::string_view::npos : end - start - 1));
        start = end;
      }
      covers = std::includes(covered.begin(), covered.end(), versions.begin(), versions.end());
      return covers;
    }
    // size \t sha256 \t git blob sha1 \t etag \t path
    auto t1 = line.find('\t');
    auto t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
    auto t3 = t2 == std::string_view::npos ? t2 : line.find('\t', t2 + 1);
    auto t4 = t3 == std::string_view::npos ? t3 : line.find('\t', t3 + 1);
    if (t4 == std::string_view::npos) {
      return false; // corrupt: list instead
    }
    auto path = line.substr(t4 + 1);
    if (!versions.contains(std::string(path.substr(0, path.find('/'))))) {
      return true;
    }
    storage::RepoFile file;
    auto [ptr, error] = std::from_chars(line.data(), line.data() + t1, file.size);
    if (error != std::errc() || ptr != line.data() + t1) {
      return false;
    }
    auto sha256 = line.substr(t1 + 1, t2 - t1 - 1);
    auto sha1 = line.substr(t2 + 1, t3 - t2 - 1);
    if (sha256 != "-") {
      file.sha256 = sha256;
    }
    if (sha1 != "-") {
      file.git_blob_sha1 = sha1;
    }
    if (auto etag = line.substr(t3 + 1, t4 - t3 - 1); etag != "-") {
      file.etag = etag;
    }
    file.path = path;
    if (!storage::is_valid_path_in_repo(file.path)) {
      return false;
    }
    files.push_back(std::move(file));
    return true;
  };
  if (!for_each_line(m_file, parse) || !covers) {
    return std::nullopt; // another revision, other versions, or a corrupt or truncated file
  }
  return files;
}

void RemoteSnapshot::save(const std::string& revision, const std::set<std::string>& versions,
                          const std::vector<storage::RepoFile>& files, const std::vector<storage::RepoFile>& committed)
{
  if (m_file.empty() || revision.empty()) {
    return;
  }
  try {
    std::error_code ec;
    stdfs::create_directories(m_file.parent_path(), ec);
    BlockWriter writer(m_file);
    auto& text = writer.text();
    text = k_snapshot_header;
    text += "\nrevision\t" + revision + "\nversions";
    for (const auto& version : versions) {
      text += "\t" + version;
    }
    text += '\n';
    // A field never holds a separator: a store's odd ETag is not remembered.
    auto field = [](const std::string& hash) {
      return hash.empty() || hash.find_first_of("\t\n") != std::string::npos ? std::string("-") : hash;
    };
    auto write = [&](const storage::RepoFile& file) {
      text += std::to_string(file.size) + '\t' + field(file.sha256) + '\t' + field(file.git_blob_sha1) + '\t'
              + field(file.etag) + '\t' + file.path + '\n';
      writer.flush_if_full();
    };
    // The replaced paths as one sorted vector, not a node each; none to look for when
    // nothing was listed (a first push).
    std::vector<std::string_view> replaced;
    if (!files.empty()) {
      replaced.reserve(committed.size());
      for (const auto& file : committed) {
        replaced.push_back(file.path);
      }
      std::sort(replaced.begin(), replaced.end());
    }
    for (const auto& file : files) {
      if (!std::binary_search(replaced.begin(), replaced.end(), std::string_view(file.path))) {
        write(file);
      }
    }
    for (const auto& file : committed) {
      write(file);
    }
    writer.commit();
  } catch (const Error&) {
    // Only a cache: the next push lists the repo.
  }
}

namespace {
constexpr std::string_view k_in_sync_header = "neuron-cache-in-sync 1";
} // namespace

stdfs::path RemoteSnapshot::sync_file() const
{
  auto file = m_file;
  return file.replace_extension(".in-sync");
}

bool RemoteSnapshot::in_sync(const std::optional<std::string>& revision, const std::string& local_fingerprint) const
{
  if (m_file.empty() || !revision || revision->empty() || local_fingerprint.empty()) {
    return false;
  }
  try {
    auto text = util::read_file_if_exists(sync_file(), 4096);
    return text
           && *text
                == std::string(k_in_sync_header) + "\nrevision\t" + *revision + "\nlocal\t" + local_fingerprint + "\n";
  } catch (const Error&) {
    return false; // unreadable: not known to be in sync
  }
}

void RemoteSnapshot::mark_in_sync(const std::string& revision, const std::string& local_fingerprint)
{
  if (m_file.empty() || revision.empty() || revision.find_first_of("\t\n") != std::string::npos) {
    return;
  }
  try {
    std::error_code ec;
    stdfs::create_directories(m_file.parent_path(), ec);
    util::write_file_atomically(sync_file(), std::string(k_in_sync_header) + "\nrevision\t" + revision + "\nlocal\t"
                                               + local_fingerprint + "\n");
  } catch (const Error&) {
    // Only a cache: the next push plans from the snapshot.
  }
}

std::vector<storage::RepoFile> list_remote_for(storage::Repository& repo, const Scan& scan)
{
  auto versions = publishable_versions(scan);
  std::vector<storage::RepoFile> files;
  for (const auto& version : versions) {
    std::vector<storage::RepoFile> listed;
    try {
      listed = repo.list_files(version);
    } catch (const EntryNotFound&) {
      continue; // a version the repo has never seen
    }
    files.insert(files.end(), std::make_move_iterator(listed.begin()), std::make_move_iterator(listed.end()));
  }
  return files;
}

void complete_remote_digests(storage::Repository& repo, std::vector<storage::RepoFile>& remote, const Scan& scan)
{
  std::unordered_map<std::string_view, storage::RepoFile*> lacking;
  for (auto& file : remote) {
    if (storage::has_no_checksum(file)) {
      lacking.emplace(file.path, &file);
    }
  }
  if (lacking.empty()) {
    return;
  }
  std::vector<storage::RepoFile*> wanted;
  for (const auto& entry : scan.entries) {
    for (const auto& file : entry.files) {
      auto it = lacking.find(file.path);
      if (it != lacking.end() && it->second->size == file.size) {
        wanted.push_back(it->second);
      }
    }
  }
  lacking.clear();
  storage::complete_listing(repo, remote, wanted);
}

PushResult push(storage::Repository& repo, PushPlan plan, DigestCache& digests, const util::TransferCallback& progress,
                const std::optional<std::string>& planned_at)
{
  PushResult result;
  if (plan.uploads.empty()) {
    // Nothing to commit: the head stays what the plan was made against (a directory repo's
    // revision is a walk of the whole tree: not paid twice).
    result.revision = planned_at ? planned_at : repo.revision();
    result.plan = std::move(plan);
    return result;
  }
  // The plan's uploads move into the request (tens of thousands of paths: not copied), its
  // own vector is not kept; files below the root share it instead of each holding a full
  // path.
  check_folder_limits(repo, plan.folder_entries);
  storage::CommitRequest request;
  request.message = std::string(k_commit_message);
  request.unit_of = commit_unit_of;
  request.additions.reserve(plan.uploads.size());
  std::vector<FileStamp> stamps;
  stamps.reserve(plan.uploads.size());
  auto root = std::make_shared<const std::string>(plan.root);
  for (auto& upload : plan.uploads) {
    auto known = digests.known(upload.path, upload.stamp);
    auto source = upload.source.empty() ? storage::FileSource::in_directory(root)
                                        : storage::FileSource::from_file(std::move(upload.source));
    request.additions.push_back({std::move(upload.path), std::move(source),
                                 known ? std::make_shared<const util::FileDigests>(std::move(*known)) : nullptr});
    stamps.push_back(upload.stamp);
  }
  std::vector<Upload>().swap(plan.uploads);

  util::ProgressCallback bytes_progress;
  if (progress) {
    // The commit reports bytes; files count once it is done.
    bytes_progress = [&](std::uint64_t done, std::uint64_t total) { progress({done, total, 0, 0}); };
  }
  storage::CommitResult commit;
  try {
    commit = repo.commit(request, bytes_progress);
  } catch (const storage::CommitQuotaReached& error) {
    result.stopped = stopped_by_quota(error, plan.entries_to_push.size());
    result.commits = error.commits_made();
    result.committed = error.commits_made() > 0;
    result.plan = std::move(plan);
    return result;
  }
  result.commits = commit.commits;
  // What the commit built for tens of thousands of files (on its worker threads too) is
  // gone: handed back before the digests of what it reported are remembered.
  util::release_free_memory();
  if (progress) {
    progress({plan.bytes_to_upload, plan.bytes_to_upload, plan.files_to_upload, plan.files_to_upload});
  }
  result.committed = commit.created;
  result.revision = commit.revision;

  // The commit reports the digests of what it holds now: remember them for files that did
  // not change meanwhile, so the next push hashes nothing and lists nothing twice. The
  // request's paths become the digest cache's keys.
  std::vector<const storage::RepoFile*> committed;
  committed.reserve(commit.files.size());
  for (const auto& file : commit.files) {
    committed.push_back(&file);
  }
  auto by_path = [](const storage::RepoFile* a, const storage::RepoFile* b) { return a->path < b->path; };
  std::sort(committed.begin(), committed.end(), by_path);
  for (std::size_t i = 0; i < request.additions.size(); ++i) {
    auto& addition = request.additions[i];
    const auto& stamp = stamps[i];
    auto it =
      std::lower_bound(committed.begin(), committed.end(), addition.path_in_repo,
                       [](const storage::RepoFile* file, const std::string& path) { return file->path < path; });
    if (it == committed.end() || (*it)->path != addition.path_in_repo) {
      continue;
    }
    const auto& file = **it;
    if (file.size != stamp.size || (file.sha256.empty() && file.etag.empty())) {
      continue;
    }
    try {
      if (stamp_of(addition.source.file_for(addition.path_in_repo)) == stamp) {
        // Added to what the plan learnt of this version (an S3 ETag beside its sha256).
        digests.remember(
          std::move(addition.path_in_repo), stamp,
          {.size = stamp.size, .sha256 = file.sha256, .git_blob_sha1 = file.git_blob_sha1, .etag = file.etag});
      }
    } catch (const Error&) {
    }
  }
  std::vector<const storage::RepoFile*>().swap(committed);
  request = {};
  std::vector<FileStamp>().swap(stamps); // (`= {}` would keep the capacity)
  result.committed_files = std::move(commit.files);
  result.plan = std::move(plan);
  return result;
}

RepoLayout group_repo_files(const std::vector<storage::RepoFile>& files)
{
  auto copy = files;
  return group_repo_files(std::move(copy));
}

RepoLayout group_repo_files(std::vector<storage::RepoFile>&& files)
{
  RepoLayout layout;
  std::map<std::string, RepoEntry> entries;
  for (auto& file : files) {
    auto first = file.path.find('/');
    auto second = first == std::string::npos ? std::string::npos : file.path.find('/', first + 1);
    auto name = stdfs::path(file.path).filename().string();
    if (second == std::string::npos || !file.path.starts_with(k_version_prefix) || first == k_version_prefix.size()
        || !storage::is_valid_path_in_repo(file.path)) {
      ++layout.other_files;
      continue;
    }
    if (is_lock_name(name) || is_temp_file_name(name)) {
      continue; // never installed: a lock would stall every compiler on this host
    }
    auto dir = std::string_view(file.path).substr(first + 1, second - first - 1);
    auto module = parse_module_name(dir);
    EntryKind kind;
    if (dir == k_registry_dir) {
      kind = EntryKind::registry;
    } else if (module) {
      kind = module->flags_suffix ? EntryKind::module : EntryKind::exported_model;
    } else {
      ++layout.other_files;
      continue;
    }
    auto path = file.path.substr(0, second);
    auto [it, inserted] = entries.try_emplace(path);
    if (inserted) {
      it->second.kind = kind;
      it->second.path = path;
      it->second.compiler_version = file.path.substr(k_version_prefix.size(), first - k_version_prefix.size());
    }
    it->second.files.push_back(std::move(file));
  }
  files.clear();
  files.shrink_to_fit();
  layout.entries.reserve(entries.size());
  for (auto& [path, entry] : entries) {
    layout.entries.push_back(std::move(entry));
  }
  return layout;
}

bool version_matches(std::string_view version, std::string_view filter)
{
  if (filter.empty() || version == filter) {
    return true;
  }
  return version.size() > filter.size() && version.starts_with(filter)
         && (version[filter.size()] == '.' || version[filter.size()] == '+');
}

namespace {

// Staging left by a pull that died: its writer provably gone (util/temp_owner.hpp), or
// older than a day. Only names of the pull's own staging form, removed through the root's
// descriptor without following links.
void sweep_stale_staging(const stdfs::path& root)
{
  auto prefix = std::string(k_staging_name) + std::string(util::k_temp_infix);
  auto root_fd = util::open_root_directory(root);
  std::vector<std::string> names;
  util::for_each_directory_item(root_fd, [&](std::string_view name, unsigned char) {
    if (name.starts_with(prefix)) {
      names.emplace_back(name);
    }
  });
  for (const auto& name : names) {
    struct stat status {};
    if (::fstatat(root_fd.get(), name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0
        && util::is_abandoned(name, std::chrono::system_clock::from_time_t(status.st_mtime), std::chrono::hours(24))) {
      util::remove_tree_at(root_fd, name);
    }
  }
}

// Makes the folder that will hold `relative` (below `root`) as real directories; throws
// util::LinkOnTheWay when a link is on the way: a pull never writes outside the cache.
void make_parent_directories(const stdfs::path& root, std::string_view relative)
{
  auto slash = relative.rfind('/');
  if (slash == std::string_view::npos) {
    return;
  }
  auto root_fd = util::open_root_directory(root);
  util::open_directory_below(root_fd, relative.substr(0, slash), root.native(), true);
}

enum class Action { install, present, skip };

struct Decision {
  Action action = Action::skip;
  std::string reason; // skip reason code
  std::string detail;
  bool fresh = false; // the entry does not exist locally
  std::vector<const storage::RepoFile*> to_download;
  bool replace = false; // a failed local entry makes way for it
};

std::string relative_name(const RepoEntry& entry, const storage::RepoFile& file)
{
  return file.path.substr(entry.path.size() + 1);
}

LocalFile local_file(const std::string& rel, const stdfs::path& path)
{
  auto stamp = stamp_of(path);
  return {rel, path.string(), stamp.size, stamp.mtime_ns, stamp.inode};
}

// Files below an existing local entry dir (relative names; temp files ignored).
std::vector<std::string> local_names(const stdfs::path& dir)
{
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(dir, ec); !ec && it != stdfs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_directory(ec) && !is_temp_file_name(it->path().filename().string())) {
      names.push_back(it->path().lexically_relative(dir).generic_string());
    }
  }
  return names;
}

// A local module entry in the FAILED state with no lock: what --replace-failed replaces.
bool is_failed_locally(const std::vector<std::string>& names)
{
  std::vector<EntryFileInfo> infos;
  for (const auto& name : names) {
    infos.push_back({name, 1});
  }
  return classify_module_files(infos).state == EntryState::failed;
}

Decision decide(const RepoEntry& entry, const stdfs::path& root, DigestCache& digests, std::vector<Skipped>& skipped,
                bool replace_failed)
{
  Decision decision;
  if (entry.kind == EntryKind::module) {
    std::vector<EntryFileInfo> infos;
    for (const auto& file : entry.files) {
      infos.push_back({relative_name(entry, file), file.size});
    }
    auto classification = classify_module_files(infos);
    if (classification.state == EntryState::failed) {
      return {Action::skip, "failed-in-repo", classification.reason, false, {}};
    }
    if (classification.state != EntryState::success) {
      return {Action::skip, "incomplete-in-repo", classification.reason, false, {}};
    }
  }
  auto target = root / entry.path;
  if (auto link = util::link_on_the_way(root, entry.path)) {
    return {Action::skip,
            "link-in-local-path",
            util::escape_control(*link) + " is a symbolic link or not a directory; nothing is written through it",
            false,
            {}};
  }
  struct stat status {};
  if (::lstat(target.c_str(), &status) != 0) {
    decision.action = Action::install;
    decision.fresh = true;
    for (const auto& file : entry.files) {
      decision.to_download.push_back(&file);
    }
    return decision;
  }
  if (!S_ISDIR(status.st_mode)) {
    return {Action::skip, "local-entry-differs", "not a directory locally", false, {}};
  }
  auto names = local_names(target);
  if (replace_failed && entry.kind == EntryKind::module && is_failed_locally(names)) {
    decision.action = Action::install;
    decision.fresh = true;
    decision.replace = true;
    for (const auto& file : entry.files) {
      decision.to_download.push_back(&file);
    }
    return decision;
  }
  std::set<std::string> repo_names;
  for (const auto& file : entry.files) {
    repo_names.insert(relative_name(entry, file));
  }
  bool is_module = entry.kind == EntryKind::module;
  // A lock says most about the entry: checked before any difference, whatever the order.
  for (const auto& name : names) {
    if (is_lock_name(stdfs::path(name).filename().string())) {
      return {Action::skip, "locked-locally", "a compiler holds " + name, false, {}};
    }
  }
  for (const auto& name : names) {
    if (is_module && !repo_names.contains(name)) {
      return {Action::skip, "local-entry-differs", name + " exists locally but not in the repo", false, {}};
    }
  }
  for (const auto& file : entry.files) {
    auto local = target / relative_name(entry, file);
    struct stat local_status {};
    if (::stat(local.c_str(), &local_status) != 0) {
      decision.to_download.push_back(&file);
      continue;
    }
    bool same = S_ISREG(local_status.st_mode) && same_content(file, local_file(file.path, local), digests);
    if (same) {
      continue;
    }
    if (is_module) {
      return {Action::skip, "local-entry-differs", relative_name(entry, file) + " differs from the repo's", false, {}};
    }
    // Registry and exported-model trees: keep the local file, install the rest.
    skipped.push_back({file.path, "local-file-differs", "kept the local version"});
  }
  decision.action = decision.to_download.empty() ? Action::present : Action::install;
  return decision;
}

// model.done last, model.neff just before it: the markers a compiler trusts.
int install_rank(const std::string& name)
{
  return name == "model.done" ? 2 : name == "model.neff" ? 1 : 0;
}

void rename_checked(const stdfs::path& from, const stdfs::path& to)
{
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw IoError("cannot move " + to.filename().string() + " into " + to.parent_path().string() + ": " + errno_text());
  }
}

} // namespace

namespace {

void check_root(const stdfs::path& root)
{
  struct stat status {};
  if (::stat(root.c_str(), &status) == 0 && !S_ISDIR(status.st_mode)) {
    throw IoError("the compile cache " + root.string() + " is not a directory", "name the compile cache directory");
  }
}

} // namespace

bool stops_the_run(const std::exception_ptr& error)
{
  try {
    std::rethrow_exception(error);
  } catch (const RemoteError&) {
    return true;
  } catch (const AuthError&) {
    return true;
  } catch (const RepoNotFound&) {
    return true;
  } catch (const NoSpace&) {
    return true; // every later write would fail alike
  } catch (...) {
    return false;
  }
}

std::string message_of(const std::exception_ptr& error)
{
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

PullPlan plan_pull(const std::vector<storage::RepoFile>& listing, const stdfs::path& root, DigestCache& digests,
                   const PullOptions& options)
{
  auto copy = listing;
  return plan_pull(std::move(copy), root, digests, options);
}

PullPlan plan_pull(std::vector<storage::RepoFile>&& listing, const stdfs::path& root, DigestCache& digests,
                   const PullOptions& options)
{
  check_root(root);
  PullPlan plan;
  // The listing is consumed as it is grouped, and each entry's files move into its
  // install: one copy of the repo's file list at any time.
  auto layout = group_repo_files(std::move(listing));
  plan.other_files = layout.other_files;
  for (auto& entry : layout.entries) {
    if (!entry.compiler_version.empty()) {
      plan.compiler_versions.insert(entry.compiler_version);
    }
    if (options.compiler_version && !version_matches(entry.compiler_version, *options.compiler_version)) {
      continue;
    }
    if (options.only_entries && options.only_entries->count(entry.path) == 0) {
      continue;
    }
    auto decision = decide(entry, root, digests, plan.skipped, options.replace_failed);
    switch (decision.action) {
    case Action::present: plan.entries_present.push_back(entry.path); break;
    case Action::skip: plan.skipped.push_back({entry.path, decision.reason, decision.detail}); break;
    case Action::install: {
      PullInstall install;
      install.fresh = decision.fresh;
      install.replace = decision.replace;
      if (decision.fresh) {
        // Every file of the entry: moved, not copied (install_entry reads them there).
        install.to_download = std::move(entry.files);
        entry.files.clear();
      } else {
        for (const auto* file : decision.to_download) {
          install.to_download.push_back(*file);
        }
      }
      for (const auto& file : install.to_download) {
        install.bytes = util::saturating_add(install.bytes, file.size);
      }
      plan.bytes_planned = util::saturating_add(plan.bytes_planned, install.bytes);
      plan.files_planned += install.to_download.size();
      install.entry = std::move(entry);
      plan.installs.push_back(std::move(install));
      break;
    }
    }
  }
  return plan;
}

PullPlan plan_pull(storage::Repository& repo, const stdfs::path& root, DigestCache& digests, const PullOptions& options)
{
  check_root(root);
  digests.set_etag_part_sizes(repo.etag_part_sizes());
  std::vector<storage::RepoFile> listing;
  try {
    listing = repo.list_files();
  } catch (const EntryNotFound&) {
    // an empty repo
  }
  // Digests the listing left out are asked for only where a local file of the same size
  // is to be compared with.
  std::vector<storage::RepoFile*> compared;
  for (auto& file : listing) {
    struct stat local {};
    if (storage::has_no_checksum(file) && ::stat((root / file.path).c_str(), &local) == 0 && S_ISREG(local.st_mode)
        && static_cast<std::uint64_t>(local.st_size) == file.size) {
      compared.push_back(&file);
    }
  }
  storage::complete_listing(repo, listing, compared);
  return plan_pull(std::move(listing), root, digests, options);
}

namespace {

// Moves a fully downloaded entry from its staging directory into the root; returns the
// reason it was not installed (a Skipped) or nullopt when it was.
std::optional<Skipped> install_entry(const PullInstall& install, const stdfs::path& stage, const stdfs::path& root)
{
  const auto& entry = install.entry;
  auto target = root / entry.path;
  if (entry.kind == EntryKind::module) {
    // The flags suffix can only be checked with the flags file's bytes.
    std::vector<EntryFileInfo> infos;
    for (const auto& file : install.fresh ? install.to_download : entry.files) {
      infos.push_back({relative_name(entry, file), file.size});
    }
    auto flags_name = flags_file_name(infos);
    std::optional<std::string> flags;
    if (!flags_name.empty()) {
      auto staged = stage / flags_name;
      flags = util::read_file(stdfs::exists(staged) ? staged : target / flags_name);
    }
    auto module = parse_module_name(stdfs::path(entry.path).filename().string());
    if (auto problem = check_flags_suffix(*module, flags); !problem.empty()) {
      return Skipped{entry.path, "flags-mismatch-in-repo", problem};
    }
  }
  // Checked again at install time: a link may have been planted since the plan.
  try {
    make_parent_directories(root, entry.path);
    for (const auto& file : install.fresh ? std::vector<storage::RepoFile>{} : install.to_download) {
      make_parent_directories(root, file.path);
    }
  } catch (const util::LinkOnTheWay& link) {
    return Skipped{entry.path, "link-in-local-path", link.what()};
  }
  if (install.replace) {
    // Out of the way by the cleanup's rename-check-delete: a compiler that locked the
    // failed entry meanwhile (to retry it) keeps it.
    if (remove_safely(target, 1) == RemoveOutcome::taken) {
      return Skipped{entry.path, "locked-locally", "a compiler locked it during the pull"};
    }
  }
  if (install.fresh) {
    if (!util::rename_no_replace(stage, target)) {
      return Skipped{entry.path, "appeared-during-pull", "created locally while it was downloaded"};
    }
  } else {
    auto names = local_names(target);
    if (std::any_of(names.begin(), names.end(),
                    [](const std::string& name) { return is_lock_name(stdfs::path(name).filename().string()); })) {
      return Skipped{entry.path, "locked-locally", "a compiler locked it during the pull"};
    }
    std::vector<const storage::RepoFile*> files;
    for (const auto& file : install.to_download) {
      files.push_back(&file);
    }
    std::stable_sort(files.begin(), files.end(), [&](const storage::RepoFile* a, const storage::RepoFile* b) {
      return install_rank(relative_name(entry, *a)) < install_rank(relative_name(entry, *b));
    });
    for (const auto* file : files) {
      auto name = relative_name(entry, *file);
      rename_checked(stage / name, target / name);
    }
  }
  return std::nullopt;
}

} // namespace

PullReport apply_pull(storage::Repository& repo, const stdfs::path& root, PullPlan plan, DigestCache& digests,
                      const PullOptions& options, const util::TransferCallback& progress)
{
  PullReport report;
  report.entries_present = std::move(plan.entries_present);
  report.skipped = std::move(plan.skipped);
  report.other_files = plan.other_files;
  report.files_planned = plan.files_planned;
  report.bytes_planned = plan.bytes_planned;
  report.compiler_versions = std::move(plan.compiler_versions);
  report.entries_planned = plan.installs.size();
  if (plan.installs.empty()) {
    return report;
  }
  util::InterruptScope interrupts; // Ctrl-C stops between files, and the staging goes (pull_guard.hpp)
  std::error_code ec;
  stdfs::create_directories(root, ec);
  if (ec) {
    throw IoError("cannot create the compile cache " + root.string() + ": " + ec.message(),
                  "check the compile cache path");
  }
  check_root(root);
  sweep_stale_staging(root);
  // One pull's downloads, removed when done.
  util::TemporaryDirectory staging(root / std::string(k_staging_name));

  // One task per file, entry after entry, so entries complete (and appear) one by one
  // while the workers share the files of big entries.
  struct Slot {
    std::atomic<std::size_t> remaining{0};
    std::atomic<bool> failed{false};
  };
  auto& installs = plan.installs;
  std::vector<Slot> slots(installs.size());
  // Each entry's staging directory, named by its index (not kept: one path per entry).
  auto stage_of = [&](std::size_t index) { return staging.path() / std::to_string(index); };
  std::vector<std::pair<std::size_t, std::size_t>> tasks; // (install, file)
  for (std::size_t i = 0; i < installs.size(); ++i) {
    slots[i].remaining = installs[i].to_download.size();
    for (std::size_t f = 0; f < installs[i].to_download.size(); ++f) {
      tasks.emplace_back(i, f);
    }
  }

  auto remove_quietly = [](const stdfs::path& path) {
    std::error_code ignored;
    stdfs::remove_all(path, ignored);
  };
  std::mutex mutex; // guards the report, the digest cache, the progress state and the stop reason
  std::atomic<bool> stopped{false};
  std::string stop_reason;
  util::TransferProgress state{0, plan.bytes_planned, 0, plan.files_planned};
  auto report_progress = [&] {
    if (progress) {
      progress(state);
    }
  };
  {
    std::lock_guard lock(mutex);
    report_progress();
  }

  auto fail_entry = [&](std::size_t index, const std::exception_ptr& error) {
    auto& slot = slots[index];
    bool first = !slot.failed.exchange(true);
    std::lock_guard lock(mutex);
    if (is_interruption(error)) {
      return; // not an error of the entry: the run was asked to stop
    }
    report.no_space = report.no_space || is_no_space(error);
    if (first) {
      report.errors.push_back({installs[index].entry.path, "error", message_of(error)});
    }
    if (stops_the_run(error) && !stopped.exchange(true)) {
      stop_reason = message_of(error);
    }
  };

  auto finish_entry = [&](std::size_t index) {
    auto& install = installs[index];
    try {
      auto skipped = install_entry(install, stage_of(index), root);
      std::lock_guard lock(mutex);
      if (skipped) {
        report.skipped.push_back(std::move(*skipped));
        return;
      }
      auto target = root / install.entry.path;
      for (const auto& file : install.to_download) {
        try {
          digests.remember(
            file.path, stamp_of(target / relative_name(install.entry, file)),
            {.size = file.size, .sha256 = file.sha256, .git_blob_sha1 = file.git_blob_sha1, .etag = file.etag});
        } catch (const Error&) {
        }
      }
      report.entries_pulled.push_back(install.entry.path);
      if (install.replace) {
        report.entries_replaced.push_back(install.entry.path);
      }
      report.files_downloaded += install.to_download.size();
      report.bytes_downloaded += install.bytes;
    } catch (const Error&) {
      fail_entry(index, std::current_exception());
    } catch (const stdfs::filesystem_error&) {
      fail_entry(index, std::current_exception());
    }
    remove_quietly(stage_of(index));
  };

  // Entries whose files have all landed are installed in batches: one syncfs makes every
  // staged file of the batch durable (instead of one fsync per file, which dominated
  // pulls of many small files), then each entry appears by its rename. One worker at a
  // time installs; the others keep downloading.
  std::mutex ready_mutex;
  std::vector<std::size_t> ready;
  std::mutex install_mutex;
  auto install_ready = [&](bool wait) {
    std::unique_lock installing(install_mutex, std::defer_lock);
    if (wait) {
      installing.lock();
    } else if (!installing.try_lock()) {
      return; // the installing worker takes this entry in its next batch
    }
    for (;;) {
      std::vector<std::size_t> batch;
      {
        std::lock_guard lock(ready_mutex);
        batch.swap(ready);
      }
      if (batch.empty()) {
        return;
      }
      std::exception_ptr flush_error;
      try {
        util::sync_filesystem(staging.path());
      } catch (const Error&) {
        flush_error = std::current_exception();
      }
      for (auto index : batch) {
        if (flush_error) {
          fail_entry(index, flush_error);
          remove_quietly(stage_of(index));
        } else {
          finish_entry(index);
        }
      }
    }
  };

  util::parallel_for(tasks.size(), std::max<std::size_t>(1, options.workers), [&](std::size_t task) {
    auto [index, file_index] = tasks[task];
    auto& install = installs[index];
    auto& slot = slots[index];
    auto& file = install.to_download[file_index];
    if (!stopped && !slot.failed && interrupting_signal() == 0) {
      std::uint64_t reported = 0;
      try {
        auto destination = stage_of(index) / relative_name(install.entry, file);
        stdfs::create_directories(destination.parent_path());
        // Checked against the listing; what is remembered is the digest of the bytes written.
        auto written = repo.download_listed(
          file, destination,
          [&](std::uint64_t done, std::uint64_t) {
            throw_if_interrupted();
            std::lock_guard lock(mutex);
            if (done > reported) {
              state.bytes_done += done - reported;
              reported = done;
            }
            report_progress();
          },
          false); // made durable by one syncfs per batch of entries, before they appear
        file.sha256 = std::move(written.sha256);
        file.git_blob_sha1 = std::move(written.git_blob_sha1);
        file.etag = std::move(written.etag); // empty when no ETag vouched for these bytes
        std::lock_guard lock(mutex);
        state.bytes_done += file.size > reported ? file.size - reported : 0;
        ++state.files_done;
        report_progress();
      } catch (const Error&) {
        fail_entry(index, std::current_exception());
      } catch (const stdfs::filesystem_error&) {
        fail_entry(index, std::current_exception());
      }
    }
    // Whoever lands an entry's last file queues it for installing; a failed entry is
    // dropped whole.
    if (slot.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (!slot.failed && !stopped && interrupting_signal() == 0) {
        {
          std::lock_guard lock(ready_mutex);
          ready.push_back(index);
        }
        install_ready(false);
      } else {
        remove_quietly(stage_of(index));
      }
    }
  });
  install_ready(true);
  if (!report.entries_pulled.empty()) {
    // The renames that made entries appear, durable once for the whole run.
    try {
      util::sync_filesystem(root);
    } catch (const Error&) {
    }
  }

  report.interrupted_by = interrupting_signal();
  if (stopped && report.interrupted_by == 0) {
    for (std::size_t i = 0; i < installs.size(); ++i) {
      const auto& path = installs[i].entry.path;
      bool installed =
        std::find(report.entries_pulled.begin(), report.entries_pulled.end(), path) != report.entries_pulled.end();
      bool reported = slots[i].failed || installed
                      || std::any_of(report.skipped.begin(), report.skipped.end(),
                                     [&](const Skipped& item) { return item.path == path; });
      if (!reported) {
        report.errors.push_back(
          {path, "stopped", "not installed: the run stopped after an error of the repo (" + stop_reason + ")"});
      }
    }
  }
  // The same report whatever the number of workers and the order they finished in.
  auto by_path = [](const Skipped& a, const Skipped& b) { return a.path < b.path; };
  std::sort(report.entries_pulled.begin(), report.entries_pulled.end());
  std::sort(report.entries_replaced.begin(), report.entries_replaced.end());
  std::stable_sort(report.errors.begin(), report.errors.end(), by_path);
  return report;
}

PullReport pull(storage::Repository& repo, const stdfs::path& root, DigestCache& digests, const PullOptions& options,
                const util::TransferCallback& progress)
{
  auto plan = plan_pull(repo, root, digests, options);
  if (!options.dry_run) {
    return apply_pull(repo, root, std::move(plan), digests, options, progress);
  }
  PullReport report;
  report.entries_present = std::move(plan.entries_present);
  report.skipped = std::move(plan.skipped);
  report.other_files = plan.other_files;
  report.files_planned = plan.files_planned;
  report.bytes_planned = plan.bytes_planned;
  report.compiler_versions = std::move(plan.compiler_versions);
  for (const auto& install : plan.installs) {
    report.entries_pulled.push_back(install.entry.path);
    if (install.replace) {
      report.entries_replaced.push_back(install.entry.path);
    }
  }
  return report;
}

} // namespace hubcache::compilecache
