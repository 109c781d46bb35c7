#include "hub_locals.hpp"

#include "hubcache/error.hpp"
#include "hubcache/hub/protocol.hpp"
#include "hubcache/util/fs.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hubcache::storage {

namespace stdfs = std::filesystem;

namespace {

std::uint64_t size_of_regular_file(const stdfs::path& path)
{
  auto fd = util::open_regular_file(path);
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) {
    throw IoError("cannot read " + path.string() + ": " + std::strerror(errno));
  }
  return static_cast<std::uint64_t>(status.st_size);
}

void take(LocalFile& local, const util::FileDigests& digests)
{
  local.size = digests.size;
  if (auto sha256 = util::Sha256Bytes::from_hex(digests.sha256)) {
    local.sha256 = *sha256;
    local.has_sha256 = true;
  }
  if (auto sha1 = util::Sha1Bytes::from_hex(digests.git_blob_sha1)) {
    local.git_blob_sha1 = *sha1;
    local.has_git_blob_sha1 = true;
  }
}

} // namespace

LocalFile describe_addition(const Addition& addition, bool defer_big)
{
  LocalFile local;
  local.addition = &addition;
  const auto& source = addition.source;
  if (!source.is_file()) {
    const auto& bytes = source.bytes();
    take(local, {bytes.size(), util::hex_digest(util::HashAlgorithm::sha256, bytes), util::git_blob_sha1(bytes)});
  } else if (addition.digests && util::Sha256Bytes::from_hex(addition.digests->sha256)) {
    take(local, *addition.digests); // a git blob sha1 not known is computed if it is needed
  } else {
    const auto path = source.file_for(addition.path_in_repo);
    if (defer_big && (local.size = size_of_regular_file(path)) >= k_hashed_while_packed) {
      return local;
    }
    take(local, util::digest_file(path));
  }
  return local;
}

void hash_local(LocalFile& local)
{
  const auto& addition = *local.addition;
  const auto path = addition.source.file_for(addition.path_in_repo);
  auto digests = util::digest_file(path);
  if (digests.size != local.size) {
    throw IntegrityError(path + " changed while it was being pushed (" + std::to_string(local.size) + " bytes, now "
                           + std::to_string(digests.size) + ")",
                         "push again");
  }
  take(local, digests);
}

void set_packed_sha256(LocalFile& local, const util::Sha256Bytes& sha256)
{
  local.sha256 = sha256;
  local.has_sha256 = true;
}

std::string sample_of(const LocalFile& local)
{
  const auto& source = local.addition->source;
  auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(local.size, hub::k_preupload_sample_size));
  if (!source.is_file()) {
    return source.bytes().substr(0, wanted);
  }
  std::string sample(wanted, '\0');
  if (wanted > 0) {
    stdfs::path path(source.file_for(local.addition->path_in_repo));
    sample.resize(util::read_up_to(util::open_regular_file(path), path, sample.data(), sample.size()));
  }
  return sample;
}

std::vector<RepoFile> files_of(const std::vector<LocalFile>& locals)
{
  std::vector<RepoFile> files;
  files.reserve(locals.size());
  for (const auto& local : locals) {
    files.push_back({local.addition->path_in_repo, local.size, local.has_sha256 ? local.sha256.hex() : std::string(),
                     local.has_git_blob_sha1 ? local.git_blob_sha1.hex() : std::string()});
  }
  return files;
}

void LocalsBySha256::rebuild(const std::vector<LocalFile>& locals)
{
  m_sorted.clear();
  m_sorted.reserve(locals.size());
  for (const auto& local : locals) {
    if (local.has_sha256) {
      m_sorted.push_back(&local);
    }
  }
  std::sort(m_sorted.begin(), m_sorted.end(),
            [](const LocalFile* a, const LocalFile* b) { return a->sha256 < b->sha256; });
}

const LocalFile* LocalsBySha256::find(const util::Sha256Bytes& sha256) const
{
  auto it = std::lower_bound(m_sorted.begin(), m_sorted.end(), sha256,
                             [](const LocalFile* local, const auto& value) { return local->sha256 < value; });
  return it != m_sorted.end() && (*it)->sha256 == sha256 ? *it : nullptr;
}

} // namespace hubcache::storage
