#pragma once

// What a Hub commit knows of its additions before and while talking to the Hub: size and
// digests as bytes, one record a file (tens of thousands). A big file is not hashed before
// the plan when Xet may carry it: the Xet pass that chunks it computes its sha256 in the
// same read (the spec's upload flow), so a 2 GB NEFF is read once, not twice. Whatever
// needs a digest before that (a comparison with the repo's copy, an LFS upload) hashes the
// file then.

#include "hubcache/storage/repository.hpp"
#include "hubcache/util/hash.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hubcache::storage {

// Files of this size and more wait for the Xet pass to be hashed: above the Hub's 10 MB
// limit for regular files, so always LFS objects, and long enough to read that a second
// read shows.
inline constexpr std::uint64_t k_hashed_while_packed = 16ull << 20;

struct LocalFile {
  const Addition* addition = nullptr;
  std::uint64_t size = 0;
  util::Sha256Bytes sha256;
  util::Sha1Bytes git_blob_sha1;
  bool has_sha256 = false;
  bool has_git_blob_sha1 = false;
};

// Digests the caller knows are taken as they are; else the file is hashed, unless
// `defer_big` and it is at least k_hashed_while_packed long (then only its size is read).
LocalFile describe_addition(const Addition& addition, bool defer_big);

// Reads and hashes a file described without some of its digests (IntegrityError when its
// size is no longer the one described: the plan was made for the other).
void hash_local(LocalFile& local);

// A file hashed by the Xet pass that packed it: its sha256, no git blob sha1.
void set_packed_sha256(LocalFile& local, const util::Sha256Bytes& sha256);

// The preupload sample: the first bytes of the content.
std::string sample_of(const LocalFile& local);

// Every addition as committed, with the digests known (empty when not computed).
std::vector<RepoFile> files_of(const std::vector<LocalFile>& locals);

// The hashed additions by content, for the uploads that name objects by sha256: a sorted
// vector, not a node per file.
class LocalsBySha256 {
public:
  void rebuild(const std::vector<LocalFile>& locals);
  const LocalFile* find(const util::Sha256Bytes& sha256) const;

private:
  std::vector<const LocalFile*> m_sorted;
};

} // namespace hubcache::storage
