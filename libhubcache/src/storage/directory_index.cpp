#include "directory_index.hpp"

#include "directory_walk.hpp"

#include "hubcache/error.hpp"
#include "hubcache/storage/directory_repository.hpp"
#include "hubcache/util/fd.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/nofollow.hpp"

#include <algorithm>
#include <charconv>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace hubcache::storage::detail {

namespace stdfs = std::filesystem;

namespace {

constexpr std::string_view k_index_header = "neuron-cache-repo-index 1";
constexpr std::uint64_t k_index_read_limit = std::uint64_t{256} << 20;

} // namespace

DirectoryIndex::DirectoryIndex(stdfs::path root) : m_root(std::move(root)) {}

stdfs::path DirectoryIndex::index_path(std::string_view top) const
{
  return m_root / std::string(DirectoryRepository::k_hidden_dir) / "index"
         / (util::hex_digest(util::HashAlgorithm::sha1, top).substr(0, 20) + ".tsv");
}

std::optional<DirectoryIndex::FileId> DirectoryIndex::index_file_id(std::string_view top) const
{
  struct ::stat status {};
  if (::stat(index_path(top).c_str(), &status) != 0) {
    return std::nullopt;
  }
  return FileId{static_cast<std::uint64_t>(status.st_ino), static_cast<std::uint64_t>(status.st_size),
                nanoseconds(status.st_mtim), nanoseconds(status.st_ctim)};
}

DirectoryIndex::IndexFile& DirectoryIndex::index_for(std::string_view top)
{
  // Kept across calls while the index file is the one read (other writers replace it by
  // a rename: a new inode); looked at once per call, not once per file.
  if (auto it = m_indexes.find(top); it != m_indexes.end()) {
    auto& cached = it->second;
    if (cached.changed || cached.checked == m_call) {
      return cached;
    }
    if (index_file_id(top) == cached.source) {
      cached.checked = m_call;
      return cached;
    }
    m_indexes.erase(it);
  }
  IndexFile index;
  index.source = index_file_id(top);
  index.checked = m_call;
  std::optional<std::string> text;
  try {
    // An index reached through a link is not ours: hashed again rather than trusted.
    if (!util::link_on_the_way(m_root, std::string(DirectoryRepository::k_hidden_dir) + "/index")) {
      text = util::read_file_if_exists(index_path(top), k_index_read_limit);
    }
  } catch (const Error&) {
    text = std::nullopt; // only a cache: hash again
  }
  if (text && text->starts_with(k_index_header)) {
    std::string_view rest(*text);
    rest.remove_prefix(std::min(rest.size(), k_index_header.size() + 1));
    Records records;
    bool good = true;
    while (!rest.empty() && good) {
      auto end = rest.find('\n');
      if (end == std::string_view::npos) {
        good = false;
        break;
      }
      auto line = rest.substr(0, end);
      rest.remove_prefix(end + 1);
      // size \t mtime_ns \t ctime_ns \t inode \t sha256 \t path
      Record record;
      std::size_t start = 0;
      auto field = [&]() -> std::string_view {
        auto tab = line.find('\t', start);
        if (tab == std::string_view::npos) {
          good = false;
          return {};
        }
        auto value = line.substr(start, tab - start);
        start = tab + 1;
        return value;
      };
      auto number = [&](auto& out) {
        auto text_value = field();
        auto [ptr, error] = std::from_chars(text_value.data(), text_value.data() + text_value.size(), out);
        good = good && error == std::errc() && ptr == text_value.data() + text_value.size();
      };
      number(record.size);
      number(record.mtime_ns);
      number(record.ctime_ns);
      number(record.inode);
      auto sha256 = util::Sha256Bytes::from_hex(field());
      if (!good || !sha256 || start >= line.size()) {
        good = false;
        break;
      }
      record.sha256 = *sha256;
      records.emplace(std::string(line.substr(start)), std::move(record));
    }
    if (good) {
      index.records = std::move(records);
    }
  }
  return m_indexes.emplace(std::string(top), std::move(index)).first->second;
}

void DirectoryIndex::save()
{
  for (auto& [top, index] : m_indexes) {
    if (!index.changed) {
      continue;
    }
    try {
      util::open_directory_below(util::open_root_directory(m_root),
                                 std::string(DirectoryRepository::k_hidden_dir) + "/index", m_root.native(),
                                 true); // never written through a link
      // Written as it is formatted, a block at a time: tens of thousands of records never
      // sit in memory a second time as one text.
      util::AtomicFile file(index_path(top));
      std::string text(k_index_header);
      text += '\n';
      for (const auto& [path, record] : index.records) {
        text += std::to_string(record.size) + '\t' + std::to_string(record.mtime_ns) + '\t'
                + std::to_string(record.ctime_ns) + '\t' + std::to_string(record.inode) + '\t' + record.sha256.hex()
                + '\t' + path + '\n';
        if (text.size() >= 256 * 1024) {
          file.write(text);
          text.clear();
        }
      }
      file.write(text);
      file.commit();
    } catch (const Error&) {
      // A read-only repo (or a full disk): the next reader hashes again.
    }
    index.changed = false;
    // What this object holds is what it wrote; another writer's file is read again.
    index.source = index_file_id(top);
  }
}

void DirectoryIndex::record(const std::string& path, const struct ::stat& status, const util::Sha256Bytes& sha256)
{
  auto& index = index_for(first_component(path));
  Record record{static_cast<std::uint64_t>(status.st_size), nanoseconds(status.st_mtim), nanoseconds(status.st_ctim),
                static_cast<std::uint64_t>(status.st_ino), sha256};
  auto& slot = index.records[path];
  if (slot.sha256 != record.sha256 || slot.size != record.size || slot.mtime_ns != record.mtime_ns
      || slot.ctime_ns != record.ctime_ns || slot.inode != record.inode) {
    slot = record;
    index.changed = true;
  }
}

std::optional<util::Sha256Bytes> DirectoryIndex::known(const std::string& path, const struct ::stat& status)
{
  auto& index = index_for(first_component(path));
  if (auto it = index.records.find(path); it != index.records.end()) {
    const auto& known = it->second;
    if (known.size == static_cast<std::uint64_t>(status.st_size) && known.mtime_ns == nanoseconds(status.st_mtim)
        && known.ctime_ns == nanoseconds(status.st_ctim) && known.inode == static_cast<std::uint64_t>(status.st_ino)) {
      return known.sha256;
    }
  }
  return std::nullopt;
}

util::Sha256Bytes DirectoryIndex::sha256_of(const std::string& path, const struct ::stat& status)
{
  if (auto indexed = known(path, status)) {
    return *indexed;
  }
  auto full = m_root / path;
  auto fd = util::open_regular_file(full);
  util::Hasher hasher(util::HashAlgorithm::sha256);
  util::read_chunks(fd, full, [&](const char* data, std::size_t n) { hasher.update(data, n); });
  auto sha256 = hasher.digest_bytes<32>();
  // Recorded only when the file did not change while it was read.
  struct ::stat after {};
  if (::fstat(fd.get(), &after) == 0 && same_stamp(status, after)) {
    record(path, after, sha256);
  }
  return sha256;
}

std::size_t DirectoryIndex::file_count(const std::string& top)
{
  if (!top.empty()) {
    return index_for(top).records.size();
  }
  std::vector<std::string> tops;
  util::Fd root(::open(m_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root || util::for_each_directory_item(root, [&](std::string_view name, unsigned char type) {
                 if (name != DirectoryRepository::k_hidden_dir && (type == DT_DIR || type == DT_UNKNOWN)) {
                   tops.emplace_back(name);
                 }
               }) != 0) {
    return 0; // only an estimate: the walk reports what cannot be read
  }
  std::size_t count = 0;
  for (const auto& name : tops) {
    count += index_for(name).records.size();
  }
  return count;
}

} // namespace hubcache::storage::detail
