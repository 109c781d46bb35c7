// S3Client against a loopback fake of S3 that misbehaves: listings that never end, loop
// on a token or are cut short, error answers that echo the credentials, an object
// trickled a byte at a time, and bytes that do not match what S3 vouches for.
#include "fake_server.hpp"
#include "test_support.hpp"

#include <hubcache/aws/credentials.hpp>
#include <hubcache/aws/s3_client.hpp>
#include <hubcache/error.hpp>
#include <hubcache/util/hash.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <mutex>

using namespace hubcache;
using test_support::FakeServer;
using test_support::message_of;

namespace aws_s3_client_test {

namespace {

constexpr const char* k_secret = "unit-secret-access-key-never-printed";
constexpr const char* k_session = "unit-session-token-never-printed";
constexpr std::uint64_t k_part = std::uint64_t{5} << 20;

std::unique_ptr<aws::S3Client> client_for(const FakeServer& server, int attempts = 6)
{
  auto env = util::Environment::from_map({{"AWS_ENDPOINT_URL", server.url},
                                          {"AWS_REGION", "us-east-1"},
                                          {"AWS_ACCESS_KEY_ID", "AKIAUNITTEST0001"},
                                          {"AWS_SECRET_ACCESS_KEY", k_secret},
                                          {"AWS_SESSION_TOKEN", k_session},
                                          {"AWS_EC2_METADATA_DISABLED", "true"},
                                          {"NEURON_CACHE_HTTP_BACKOFF_BASE_MS", "1"},
                                          {"NEURON_CACHE_S3_PART_SIZE", std::to_string(k_part)},
                                          {"NEURON_CACHE_S3_STALL_TIMEOUT", "1"}});
  auto config = aws::S3Config::from_environment(env);
  config.retry.max_attempts = attempts;
  config.listing.max_pages = 20;
  return std::make_unique<aws::S3Client>(config, std::make_shared<aws::CredentialChain>(env));
}

std::string listing(const std::string& contents, const std::string& tail)
{
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult "
         "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bucket</Name><Prefix></Prefix>"
         + contents + tail + "</ListBucketResult>";
}

std::string contents(const std::string& key, std::size_t size = 1)
{
  return "<Contents><Key>" + key + "</Key><Size>" + std::to_string(size) + "</Size><ETag>&quot;" + std::string(32, 'a')
         + "&quot;</ETag></Contents>";
}

// A bucket whose listing pages are written by `page(token, request number)`.
FakeServer listing_server(std::function<std::string(const std::string&, int)> page)
{
  return FakeServer([page = std::move(page)](httplib::Server& routes, FakeServer& self) {
    routes.Get("/bucket", [&self, page](const httplib::Request& request, httplib::Response& response) {
      int number = ++self.requests;
      response.set_content(page(request.get_param_value("continuation-token"), number), "application/xml");
    });
  });
}

} // namespace

TEST_SUITE_BEGIN("hubcache::aws");

TEST_CASE("a listing that keeps paginating ends at the page bound")
{
  auto server = listing_server([](const std::string&, int number) {
    bool more = number < 1000;
    return listing(contents("k" + std::to_string(number)),
                   std::string("<IsTruncated>") + (more ? "true" : "false") + "</IsTruncated>"
                     + (more ? "<NextContinuationToken>t" + std::to_string(number) + "</NextContinuationToken>" : ""));
  });
  auto message = message_of<RemoteError>([&] { client_for(server)->list_objects("bucket", ""); });
  CHECK(message.find("20 pages") != std::string::npos);
  CHECK(server.requests == 20);
}

TEST_CASE("a listing that gives the same continuation token again is an error")
{
  auto server = listing_server([](const std::string&, int number) {
    bool more = number < 200;
    return listing(contents("k" + std::to_string(number)),
                   std::string("<IsTruncated>") + (more ? "true" : "false") + "</IsTruncated>"
                     + (more ? "<NextContinuationToken>same</NextContinuationToken>" : ""));
  });
  auto message = message_of<RemoteError>([&] { client_for(server)->list_objects("bucket", ""); });
  CHECK(message.find("loops back") != std::string::npos);
  CHECK(server.requests == 2);
}

TEST_CASE("a listing cut short is never taken as complete")
{
  std::string whole = listing(contents("a") + contents("b"), "<KeyCount>2</KeyCount><IsTruncated>false</IsTruncated>");
  SUBCASE("cut in the middle")
  {
    auto cut = whole.substr(0, whole.find("<Contents><Key>b") + 16);
    auto server = listing_server([cut](const std::string&, int) { return cut; });
    CHECK_THROWS_AS(client_for(server)->list_objects("bucket", ""), RemoteError);
  }
  SUBCASE("without IsTruncated")
  {
    auto server = listing_server([](const std::string&, int) { return listing(contents("a"), ""); });
    CHECK_THROWS_AS(client_for(server)->list_objects("bucket", ""), RemoteError);
  }
  SUBCASE("fewer keys than its KeyCount")
  {
    auto server = listing_server([](const std::string&, int) {
      return listing(contents("a"), "<KeyCount>2</KeyCount><IsTruncated>false</IsTruncated>");
    });
    CHECK_THROWS_AS(client_for(server)->list_objects("bucket", ""), RemoteError);
  }
  SUBCASE("nested past the depth bound")
  {
    std::string deep;
    for (int i = 0; i < 40; ++i) {
      deep += "<x>";
    }
    for (int i = 0; i < 40; ++i) {
      deep += "</x>";
    }
    auto server = listing_server(
      [deep](const std::string&, int) { return listing(contents("a") + deep, "<IsTruncated>false</IsTruncated>"); });
    CHECK_THROWS_AS(client_for(server)->list_objects("bucket", ""), RemoteError);
  }
  SUBCASE("whole: every key")
  {
    auto server = listing_server([whole](const std::string&, int) { return whole; });
    CHECK(client_for(server)->list_objects("bucket", "").size() == 2);
  }
}

TEST_CASE("an S3 error that echoes the credentials is shown without them")
{
  FakeServer server([](httplib::Server& routes, FakeServer&) {
    routes.Get("/bucket/key", [](const httplib::Request&, httplib::Response& response) {
      response.status = 400;
      response.set_content(std::string("<Error><Code>InvalidArgument</Code><Message>bad secret ") + k_secret
                             + " with token " + k_session + "</Message></Error>",
                           "application/xml");
    });
  });
  auto message = message_of<RemoteError>([&] { client_for(server)->get_object("bucket", "key", 1000); });
  CHECK(message.find("InvalidArgument") != std::string::npos);
  CHECK(message.find(k_secret) == std::string::npos);
  CHECK(message.find(k_session) == std::string::npos);
}

TEST_CASE("an object trickled a few bytes a second trips the stall limit, is retried, then fails clean")
{
  FakeServer server([](httplib::Server& routes, FakeServer& self) {
    routes.Get("/bucket/key", [&self](const httplib::Request&, httplib::Response& response) {
      ++self.requests;
      auto body = std::string(60, 'x');
      response.set_header("ETag", "\"" + util::hex_digest(util::HashAlgorithm::md5, body) + "\"");
      self.trickle(response, body, std::chrono::milliseconds(100));
    });
  });
  test_support::TempDir dir;
  CHECK_THROWS_AS(client_for(server, 2)->download("bucket", "key", dir / "out", std::nullopt), RemoteError);
  CHECK(server.requests == 2);
  CHECK(!std::filesystem::exists(dir / "out"));
}

namespace {

// One object served as `body` with the headers given, whatever content it should have.
FakeServer object_server(std::string body, std::vector<std::pair<std::string, std::string>> headers)
{
  return FakeServer([body = std::move(body), headers = std::move(headers)](httplib::Server& routes, FakeServer&) {
    routes.Get("/bucket/key", [body, headers](const httplib::Request&, httplib::Response& response) {
      for (const auto& [name, value] : headers) {
        response.set_header(name, value);
      }
      response.set_content(body, "application/octet-stream");
    });
  });
}

std::string flipped(std::string content)
{
  content[content.size() / 2] ^= 0x01;
  return content;
}

} // namespace

TEST_CASE("a multipart object is checked by its ETag, recomputed over our part size")
{
  std::string content(std::size_t{6} << 20, 'n');
  content[123] = 'x';
  auto etag = util::multipart_etag(content, k_part);
  REQUIRE(etag.ends_with("-2"));
  test_support::TempDir dir;
  aws::S3Object listed{"key", content.size(), etag, true};
  {
    auto server = object_server(content, {{"ETag", "\"" + etag + "\""}});
    auto digests = client_for(server)->download("bucket", "key", dir / "good", listed);
    CHECK(digests.size == content.size());
    CHECK(digests.etag == etag);
  }
  auto server = object_server(flipped(content), {{"ETag", "\"" + etag + "\""}});
  auto message =
    message_of<IntegrityError>([&] { client_for(server)->download("bucket", "key", dir / "bad", listed); });
  CHECK(message.find("multipart ETag") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "bad"));
}

TEST_CASE("the sha256 stored with an object checks bytes no ETag vouches for")
{
  std::string content = "content of a managed-key object";
  auto sha256 = util::hex_digest(util::HashAlgorithm::sha256, content);
  std::vector<std::pair<std::string, std::string>> headers = {{"ETag", "\"" + std::string(32, 'b') + "\""},
                                                              {"x-amz-server-side-encryption", "aws:kms"},
                                                              {"x-amz-meta-neuron-cache-sha256", sha256}};
  test_support::TempDir dir;
  {
    auto server = object_server(content, headers);
    CHECK(client_for(server)->download("bucket", "key", dir / "good", std::nullopt).sha256 == sha256);
  }
  auto server = object_server(flipped(content), headers);
  CHECK_THROWS_AS(client_for(server)->download("bucket", "key", dir / "bad", std::nullopt), IntegrityError);
  CHECK(!std::filesystem::exists(dir / "bad"));
}

TEST_CASE("an object S3 sends without any checksum is refused")
{
  auto server = object_server("bytes nobody vouches for", {});
  test_support::TempDir dir;
  auto message =
    message_of<IntegrityError>([&] { client_for(server)->download("bucket", "key", dir / "out", std::nullopt); });
  CHECK(message.find("cannot be checked") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "out"));
}

TEST_CASE("an object that is not what the listing said is refused")
{
  std::string content = "fresh content";
  auto md5 = util::hex_digest(util::HashAlgorithm::md5, content);
  auto server = object_server(content, {{"ETag", "\"" + md5 + "\""}});
  test_support::TempDir dir;
  auto client = client_for(server);
  CHECK_THROWS_AS(client->download("bucket", "key", dir / "a", aws::S3Object{"key", content.size() + 1, md5, true}),
                  IntegrityError);
  CHECK_THROWS_AS(
    client->download("bucket", "key", dir / "b", aws::S3Object{"key", content.size(), std::string(32, 'c'), true}),
    IntegrityError);
  CHECK(client->download("bucket", "key", dir / "c", aws::S3Object{"key", content.size(), md5, true}).md5 == md5);
}

TEST_CASE("a single-PUT upload stores its sha256 with the object")
{
  std::mutex mutex;
  std::string stored;
  FakeServer server([&](httplib::Server& routes, FakeServer&) {
    routes.Put("/bucket/key", [&](const httplib::Request& request, httplib::Response& response) {
      std::lock_guard lock(mutex);
      stored = request.get_header_value("x-amz-meta-neuron-cache-sha256");
      response.set_header("ETag", "\"" + util::hex_digest(util::HashAlgorithm::md5, request.body) + "\"");
    });
  });
  test_support::TempDir dir;
  std::ofstream(dir / "file") << "payload";
  auto sha256 = util::hex_digest(util::HashAlgorithm::sha256, "payload");
  client_for(server)->put_file("bucket", "key", dir / "file", sha256);
  std::lock_guard lock(mutex);
  CHECK(stored == sha256);
}

} // namespace aws_s3_client_test
