#pragma once

#include "hubcache/storage/repository.hpp"
#include "hubcache/util/hash.hpp"

#include <string_view>

namespace hubcache::storage {

// Whether downloaded bytes, by their digests, are what a listing promised: the same size,
// and every digest both sides know equal (sha256, git blob sha1, an S3 ETag against the
// MD5 or ETag of the bytes). IntegrityError naming `where` otherwise. A digest the listing
// gave that the bytes' digests cannot answer is no match either: nothing unverified passes.
void check_download(const RepoFile& listed, const util::FileDigests& got, std::string_view where);

} // namespace hubcache::storage
