#include "buckets.hpp"

#include "hubcache/util/fs.hpp"

namespace testhub {

BucketStore::BucketStore(stdfs::path root) : m_root(std::move(root))
{
  stdfs::create_directories(m_root / "objects");
  load();
}

void BucketStore::load()
{
  for (const auto& ns_dir : stdfs::directory_iterator(m_root)) {
    if (!ns_dir.is_directory() || ns_dir.path().filename() == "objects")
      continue;
    for (const auto& item : stdfs::directory_iterator(ns_dir.path())) {
      if (item.path().extension() != ".json")
        continue;
      const auto record = json::parse(hubcache::util::read_file(item.path(), 1ull << 30));
      Bucket bucket;
      bucket.ns = ns_dir.path().filename().string();
      bucket.name = item.path().stem().string();
      bucket.is_private = record.at("private").get<bool>();
      bucket.created_at = record.at("createdAt").get<std::string>();
      bucket.updated_at = record.at("updatedAt").get<std::string>();
      for (const auto& [path, file] : record.at("files").items())
        bucket.files[path] = BucketFile{file.at("size").get<std::uint64_t>(), file.at("xetHash").get<std::string>(),
                                        file.at("mtime").get<std::int64_t>(), file.at("uploadedAt").get<std::string>()};
      m_buckets.emplace(bucket.id(), std::move(bucket));
    }
  }
}

Bucket* BucketStore::find(const std::string& id)
{
  const auto it = m_buckets.find(id);
  return it == m_buckets.end() ? nullptr : &it->second;
}

Bucket* BucketStore::create(const std::string& ns, const std::string& name, bool is_private)
{
  Bucket bucket{ns, name, is_private, iso8601_now(), iso8601_now(), {}};
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
  return true;
}

void BucketStore::save(Bucket& bucket)
{
  bucket.updated_at = iso8601_now();
  json files = json::object();
  for (const auto& [path, file] : bucket.files)
    files[path] = {
      {"size", file.size}, {"xetHash", file.xet_hash}, {"mtime", file.mtime_ms}, {"uploadedAt", file.uploaded_at}};
  const json record = {{"private", bucket.is_private},
                       {"createdAt", bucket.created_at},
                       {"updatedAt", bucket.updated_at},
                       {"files", files}};
  stdfs::create_directories(m_root / bucket.ns);
  hubcache::util::write_file_atomically(file_of(bucket.id()), record.dump());
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

void BucketStore::install_object(const stdfs::path& content, const std::string& xet_hash)
{
  const auto target = m_root / "objects" / xet_hash;
  std::error_code ec;
  if (stdfs::exists(target, ec))
    return;
  const auto temp = target.string() + ".tmp-" + random_hex(12);
  stdfs::copy_file(content, temp, stdfs::copy_options::overwrite_existing);
  stdfs::rename(temp, target);
}

} // namespace testhub
