#include "hubcache/storage/download_check.hpp"

#include "hubcache/error.hpp"

namespace hubcache::storage {

namespace {

[[noreturn]] void mismatch(std::string_view where, const std::string& what)
{
  throw IntegrityError(std::string(where) + " does not match the listing: " + what + "; nothing was installed",
                       "retry; if it persists, the repo holds a damaged file: push the entry again");
}

} // namespace

void check_download(const RepoFile& listed, const util::FileDigests& got, std::string_view where)
{
  if (got.size != listed.size) {
    mismatch(where, std::to_string(got.size) + " bytes, listed with " + std::to_string(listed.size));
  }
  auto compare = [&](const std::string& promised, const std::string& actual, const char* name) {
    if (promised.empty()) {
      return;
    }
    if (actual.empty()) {
      mismatch(where, std::string("its ") + name + " could not be checked");
    }
    if (actual != promised) {
      mismatch(where, std::string(name) + " " + actual + ", listed " + promised);
    }
  };
  compare(listed.sha256, got.sha256, "sha256");
  compare(listed.git_blob_sha1, got.git_blob_sha1, "git blob sha1");
  if (!listed.etag.empty()) {
    // The ETag the download was checked against, or the MD5 of a single-PUT object.
    compare(listed.etag, got.etag.empty() && util::is_md5_hex(listed.etag) ? got.md5 : got.etag, "ETag");
  }
}

} // namespace hubcache::storage
