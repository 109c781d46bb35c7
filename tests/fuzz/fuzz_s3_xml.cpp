// S3's XML answers (ListObjectsV2 pages, <Error> documents, multipart answers), read with
// pugixml under size and depth bounds as S3Client does. Properties: only RemoteError for
// a bad listing, never an exception from the others; a page that goes on names its token;
// every listed object has a key.
#include "fuzz_support.hpp"

#include "aws/s3_xml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  auto text = fuzz::text_of(data, size);
  try {
    auto page = hubcache::aws::xml::parse_list_page(text, "s3://bucket/prefix");
    FUZZ_CHECK(!page.truncated || !page.next_token.empty(), "a page that goes on without a token");
    for (const auto& object : page.objects) {
      FUZZ_CHECK(!object.key.empty(), "an object without a key");
    }
  } catch (const hubcache::RemoteError&) {
  }
  auto error = hubcache::aws::xml::parse_error(text);
  FUZZ_CHECK(error.code.size() <= text.size(), "a code longer than the document");
  hubcache::aws::xml::child_text(text, "InitiateMultipartUploadResult", "UploadId");
  hubcache::aws::xml::child_text(text, "CompleteMultipartUploadResult", "ETag");
  return 0;
}
