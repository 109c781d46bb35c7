// Xorb parsing on arbitrary bytes, as a client or a CAS could send them: a malformed xorb
// is a FormatError, never a read outside the buffer or an allocation beyond the limits.
// What is accepted re-packs, through our own writer, into a xorb of the same hash.
#include "fuzz_support.hpp"

#include <hubcache/xet/xorb.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  namespace xet = hubcache::xet;
  xet::Bytes input(data, size);
  xet::DecodedXorb decoded;
  if (!fuzz::accepts([&] { decoded = xet::decode_xorb(input); })) {
    return 0;
  }
  const auto& layout = decoded.layout;
  FUZZ_CHECK(!layout.chunks.empty() && layout.chunks.size() <= xet::max_xorb_chunks, "chunk count out of limits");
  FUZZ_CHECK(layout.chunks_end <= size, "chunks end past the input");
  FUZZ_CHECK(layout.unpacked_size <= xet::max_xorb_bytes, "unpacked size out of limits");
  xet::XorbBuilder builder;
  for (const auto& chunk : layout.chunks) {
    FUZZ_CHECK(chunk.header_offset + xet::chunk_header_size + chunk.stored_size <= layout.chunks_end,
               "a chunk past the chunk stream");
    auto bytes = xet::xorb_chunk_data(input, chunk);
    FUZZ_CHECK(bytes.size() == chunk.size, "decoded size differs from the header");
    FUZZ_CHECK(builder.add(chunk.hash, bytes), "an accepted xorb does not fit a xorb again");
  }
  FUZZ_CHECK(xet::decode_xorb(builder.bytes()).hash == decoded.hash, "re-packed xorb has another hash");
  return 0;
}
