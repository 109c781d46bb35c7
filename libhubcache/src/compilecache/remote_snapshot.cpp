#include "hubcache/compilecache/remote_snapshot.hpp"

#include "remembered_lines.hpp"

#include "hubcache/compilecache/digest_cache.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

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

} // namespace hubcache::compilecache
