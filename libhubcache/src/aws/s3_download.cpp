#include "hubcache/aws/s3_client.hpp"

#include "s3_content_check.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"

namespace hubcache::aws {

namespace {

// The AWS CLI's (and boto3's) default multipart_chunksize.
constexpr std::uint64_t k_aws_cli_part_size = std::uint64_t{8} << 20;

// Streams a GET's body into a temp file, through its content check.
class DownloadSink final : public http::BodySink {
public:
  DownloadSink(util::AtomicFile& out, ContentCheck& check, std::uint64_t expected,
               const util::ProgressCallback& progress)
    : m_out(out), m_check(check), m_expected(expected), m_progress(progress)
  {}
  bool start(long, const http::Headers& headers) override
  {
    m_check.start(headers);
    m_out.stream(m_expected > 0 ? m_expected : m_check.announced().value_or(0));
    return true;
  }
  void write(std::string_view chunk) override
  {
    m_done += chunk.size();
    if (m_expected > 0 && m_done > m_expected) {
      throw IntegrityError("S3 sent more bytes than the object's size");
    }
    m_out.write(chunk);
    m_check.update(chunk);
    if (m_progress) {
      m_progress(m_done, m_expected);
    }
  }
  std::uint64_t done() const { return m_done; }

private:
  util::AtomicFile& m_out;
  ContentCheck& m_check;
  std::uint64_t m_expected;
  const util::ProgressCallback& m_progress;
  std::uint64_t m_done = 0;
};

} // namespace

std::vector<std::uint64_t> S3Client::etag_part_sizes() const
{
  return {m_config.part_size, k_aws_cli_part_size};
}

util::FileDigests S3Client::download(const std::string& bucket, const std::string& key,
                                     const std::filesystem::path& destination, const std::optional<S3Object>& expected,
                                     const util::ProgressCallback& progress, bool flush)
{
  Call request{"GET", bucket, key, {}, {}, {}, {}, {}};
  auto where = "s3://" + bucket + "/" + util::escape_control(key);
  for (int attempt = 1;; ++attempt) {
    util::AtomicFile out(destination);
    ContentCheck check(where, expected, etag_part_sizes());
    DownloadSink sink(out, check, expected ? expected->size : 0, progress);
    try {
      call(request, &sink);
    } catch (const RemoteError&) {
      // A transfer cut mid-body is retried from the start with a fresh file.
      if (attempt < m_config.retry.max_attempts && sink.done() > 0) {
        continue;
      }
      throw;
    }
    auto digests = check.finish(sink.done());
    out.commit(flush);
    return digests;
  }
}

} // namespace hubcache::aws
