#include "hubcache/compilecache/copy_records.hpp"

#include "hubcache/compilecache/digest_cache.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <vector>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

constexpr std::string_view k_records_header = "neuron-cache-copies 1";
constexpr std::size_t k_record_fields = 7; // size, 3 source checksums, 3 target checksums

std::string field(const std::string& value)
{
  // A field never holds a separator: a store's odd ETag is not recorded.
  return value.empty() || value.find_first_of("\t\n") != std::string::npos ? std::string("-") : value;
}

} // namespace

CopyRecords::CopyRecords(stdfs::path file) : m_file(std::move(file))
{
  std::string text;
  try {
    text = util::read_file(m_file);
  } catch (const Error&) {
    return; // missing or unreadable: nothing recorded
  }
  std::unordered_map<std::string, Record> loaded;
  std::string_view rest(text);
  bool header = false;
  while (!rest.empty()) {
    auto end = rest.find('\n');
    if (end == std::string_view::npos) {
      return; // truncated
    }
    auto line = rest.substr(0, end);
    rest.remove_prefix(end + 1);
    if (!header) {
      if (line != k_records_header) {
        return;
      }
      header = true;
      continue;
    }
    // size \t source sha256, git sha1, etag \t target sha256, git sha1, etag \t path
    std::array<std::string, k_record_fields> fields;
    std::size_t start = 0;
    for (auto& value : fields) {
      auto tab = line.find('\t', start);
      if (tab == std::string_view::npos) {
        return; // corrupt: ignore the whole file
      }
      auto text_value = line.substr(start, tab - start);
      value = text_value == "-" ? std::string() : std::string(text_value);
      start = tab + 1;
    }
    Record record;
    auto [ptr, error] = std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), record.size);
    if (error != std::errc() || ptr != fields[0].data() + fields[0].size() || start >= line.size()) {
      return;
    }
    record.source = {fields[1], fields[2], fields[3]};
    record.target = {fields[4], fields[5], fields[6]};
    loaded.insert_or_assign(std::string(line.substr(start)), std::move(record));
  }
  if (header) {
    m_records = std::move(loaded);
  }
}

stdfs::path CopyRecords::default_path(std::string_view source_spec, std::string_view target_spec,
                                      const util::Environment& env)
{
  auto base = DigestCache::default_path("/", env).parent_path();
  auto key = util::hex_digest(util::HashAlgorithm::sha256, std::string(source_spec) + '\n' + std::string(target_spec))
               .substr(0, 16);
  return base / ("copies-" + key + ".tsv");
}

std::optional<bool> CopyRecords::agree(const Checksums& recorded, const storage::RepoFile& file)
{
  std::optional<bool> agreed;
  auto check = [&](const std::string& was, const std::string& now) {
    if (!was.empty() && !now.empty()) {
      agreed = agreed.value_or(true) && was == now;
    }
  };
  check(recorded.sha256, file.sha256);
  check(recorded.git_blob_sha1, file.git_blob_sha1);
  check(recorded.etag, file.etag);
  return agreed;
}

std::optional<bool> CopyRecords::same(const storage::RepoFile& source, const storage::RepoFile& target) const
{
  auto it = m_records.find(source.path);
  if (it == m_records.end() || it->second.size != target.size || !agree(it->second.target, target).value_or(false)) {
    return std::nullopt;
  }
  auto source_agrees = agree(it->second.source, source);
  if (!source_agrees) {
    return std::nullopt;
  }
  return *source_agrees && source.size == it->second.size;
}

void CopyRecords::remember(const storage::RepoFile& source, const storage::RepoFile& target)
{
  m_records.insert_or_assign(source.path, Record{target.size,
                                                 {source.sha256, source.git_blob_sha1, source.etag},
                                                 {target.sha256, target.git_blob_sha1, target.etag}});
  m_changed = true;
}

void CopyRecords::save()
{
  if (m_file.empty() || !m_changed) {
    return;
  }
  try {
    std::vector<const std::pair<const std::string, Record>*> records;
    records.reserve(m_records.size());
    for (const auto& item : m_records) {
      records.push_back(&item);
    }
    std::sort(records.begin(), records.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    std::string text(k_records_header);
    text += '\n';
    for (const auto* item : records) {
      const auto& [path, record] = *item;
      text += std::to_string(record.size) + '\t' + field(record.source.sha256) + '\t'
              + field(record.source.git_blob_sha1) + '\t' + field(record.source.etag) + '\t'
              + field(record.target.sha256) + '\t' + field(record.target.git_blob_sha1) + '\t'
              + field(record.target.etag) + '\t' + path + '\n';
    }
    std::error_code ec;
    stdfs::create_directories(m_file.parent_path(), ec);
    util::write_file_atomically(m_file, text);
  } catch (const Error&) {
    // Only a cache: the next copy compares by size.
  }
}

} // namespace hubcache::compilecache
