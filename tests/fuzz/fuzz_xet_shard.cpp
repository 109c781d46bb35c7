// Shard parsing on arbitrary bytes, as a client (upload) or a CAS (dedup answer) could send
// them: a malformed shard is a FormatError, never a read outside the buffer or counts
// trusted before the bytes are there. What is accepted serializes and parses back to the
// same files and xorbs.
#include "fuzz_support.hpp"

#include <hubcache/xet/shard.hpp>

namespace {

bool same_terms(const hubcache::xet::FileTerm& a, const hubcache::xet::FileTerm& b)
{
  return a.xorb_hash == b.xorb_hash && a.xorb_flags == b.xorb_flags && a.unpacked_size == b.unpacked_size
         && a.chunk_start == b.chunk_start && a.chunk_end == b.chunk_end;
}

void check_same(const hubcache::xet::Shard& a, const hubcache::xet::Shard& b)
{
  FUZZ_CHECK(a.files.size() == b.files.size(), "file count changed");
  for (std::size_t i = 0; i < a.files.size(); ++i) {
    const auto& x = a.files[i];
    const auto& y = b.files[i];
    FUZZ_CHECK(x.file_hash == y.file_hash && x.sha256 == y.sha256 && x.terms.size() == y.terms.size(), "file changed");
    FUZZ_CHECK(x.verification == y.verification || x.terms.empty(), "verification changed");
    for (std::size_t t = 0; t < x.terms.size(); ++t) {
      FUZZ_CHECK(same_terms(x.terms[t], y.terms[t]), "term changed");
    }
  }
  FUZZ_CHECK(a.xorbs.size() == b.xorbs.size(), "xorb count changed");
  for (std::size_t i = 0; i < a.xorbs.size(); ++i) {
    const auto& x = a.xorbs[i];
    const auto& y = b.xorbs[i];
    FUZZ_CHECK(x.xorb_hash == y.xorb_hash && x.chunks.size() == y.chunks.size() && x.unpacked_size == y.unpacked_size
                 && x.serialized_size == y.serialized_size,
               "xorb changed");
    for (std::size_t c = 0; c < x.chunks.size(); ++c) {
      // The writer may add the global-dedup flag to a file's first chunk, never remove one.
      FUZZ_CHECK(x.chunks[c].hash == y.chunks[c].hash && x.chunks[c].size == y.chunks[c].size
                   && x.chunks[c].byte_range_start == y.chunks[c].byte_range_start
                   && (y.chunks[c].flags & x.chunks[c].flags) == x.chunks[c].flags,
                 "chunk changed");
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  namespace xet = hubcache::xet;
  xet::Shard shard;
  if (!fuzz::accepts([&] { shard = xet::parse_shard(xet::Bytes(data, size)); })) {
    return 0;
  }
  FUZZ_CHECK((shard.files.size() + shard.xorbs.size()) * xet::shard_record_size <= size, "more records than bytes");
  auto bytes = xet::serialize_shard(shard);
  auto again = xet::parse_shard(bytes);
  check_same(shard, again);
  FUZZ_CHECK(again.footer.has_value() == shard.footer.has_value(), "footer presence changed");
  return 0;
}
