#include "buckets.hpp"

#include "hubcache/util/fs.hpp"
#include "storage.hpp" // HubError

#include <fstream>

namespace testhub {

namespace {

BucketFile file_of_json(const json& file)
{
  return BucketFile{file.at("size").get<std::uint64_t>(), file.at("xetHash").get<std::string>(),
                    file.at("mtime").get<std::int64_t>(), file.at("uploadedAt").get<std::string>()};
}

json json_of_file(const BucketFile& file)
{
  return {{"size", file.size}, {"xetHash", file.xet_hash}, {"mtime", file.mtime_ms}, {"uploadedAt", file.uploaded_at}};
}

} // namespace

BucketStore::BucketStore(stdfs::path root) : m_root(std::move(root))
{
  stdfs::create_directories(m_root / "objects");
  load();
}

void BucketStore::load()
{
  std::vector<stdfs::path> records; // listed first: loading rewrites them
  for (const auto& ns_dir : stdfs::directory_iterator(m_root)) {
    if (!ns_dir.is_directory() || ns_dir.path().filename() == "objects")
      continue;
    for (const auto& item : stdfs::directory_iterator(ns_dir.path())) {
      if (item.path().extension() == ".json")
        records.push_back(item.path());
    }
  }
  for (const auto& item : records) {
    const auto record = json::parse(hubcache::util::read_file(item, 1ull << 30));
    Bucket bucket;
    bucket.ns = item.parent_path().filename().string();
    bucket.name = item.stem().string();
    bucket.is_private = record.at("private").get<bool>();
    bucket.created_at = record.at("createdAt").get<std::string>();
    bucket.updated_at = record.at("updatedAt").get<std::string>();
    for (const auto& [path, file] : record.at("files").items())
      bucket.files[path] = file_of_json(file);
    replay(bucket);
    save(bucket); // the log folded in: the next start reads one file
    m_buckets.emplace(bucket.id(), std::move(bucket));
  }
}

Bucket* BucketStore::find(const std::string& id)
{
  const auto it = m_buckets.find(id);
  return it == m_buckets.end() ? nullptr : &it->second;
}

Bucket* BucketStore::create(const std::string& ns, const std::string& name, bool is_private)
{
  Bucket bucket{ns, name, is_private, iso8601_now(), iso8601_now(), {}, 0, {}};
  auto [it, inserted] = m_buckets.emplace(bucket.id(), std::move(bucket));
  if (!inserted)
    return nullptr;
  save(it->second);
  return &it->second;
}

bool BucketStore::remove(const std::string& id)
{
  if (m_buckets.erase(id) == 0)
    return false;
  std::error_code ec;
  stdfs::remove(file_of(id), ec);
  stdfs::remove(log_of(id), ec);
  return true;
}

void BucketStore::replay(Bucket& bucket)
{
  const auto text = hubcache::util::read_file_if_exists(log_of(bucket.id()), 1ull << 34);
  if (!text)
    return;
  for (const auto& line : split(*text, '\n')) {
    const auto change = json::parse(line, nullptr, false);
    if (change.is_discarded() || !change.is_object()) // a cut last line: not applied
      continue;
    const auto path = change.at("path").get<std::string>();
    if (change.contains("file"))
      bucket.files[path] = file_of_json(change.at("file"));
    else
      bucket.files.erase(path);
    bucket.updated_at = change.at("at").get<std::string>();
  }
}

void BucketStore::record(Bucket& bucket, const std::vector<std::string>& paths)
{
  bucket.updated_at = iso8601_now_ms();
  std::string lines;
  for (const auto& path : paths) {
    json change = {{"path", path}, {"at", bucket.updated_at}};
    if (const auto it = bucket.files.find(path); it != bucket.files.end())
      change["file"] = json_of_file(it->second);
    lines += change.dump() + "\n";
  }
  std::ofstream log(log_of(bucket.id()), std::ios::binary | std::ios::app);
  log << lines;
  log.flush();
  if (!log)
    throw HubError(500, "Cannot record the changes of bucket " + bucket.id());
}

void BucketStore::save(Bucket& bucket)
{
  json files = json::object();
  for (const auto& [path, file] : bucket.files)
    files[path] = json_of_file(file);
  const json record = {{"private", bucket.is_private},
                       {"createdAt", bucket.created_at},
                       {"updatedAt", bucket.updated_at},
                       {"files", files}};
  stdfs::create_directories(m_root / bucket.ns);
  hubcache::util::write_file_atomically(file_of(bucket.id()), record.dump());
  std::error_code ec;
  stdfs::remove(log_of(bucket.id()), ec);
}

std::optional<stdfs::path> BucketStore::object(const std::string& xet_hash) const
{
  if (xet_hash.size() != 64 || xet_hash.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  auto path = m_root / "objects" / xet_hash;
  if (xet_hash == k_empty_xet_hash && !stdfs::exists(path))
    hubcache::util::write_file_atomically(path, "");
  if (!stdfs::exists(path))
    return std::nullopt;
  return path;
}

} // namespace testhub
