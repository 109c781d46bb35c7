#include <hubcache/aws/config.hpp>
#include <hubcache/aws/credentials.hpp>
#include <hubcache/aws/s3_client.hpp>
#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

using namespace hubcache;
using hubcache::util::Environment;

TEST_SUITE_BEGIN("hubcache::aws");

TEST_CASE("s3:// URLs: bucket rules and clean prefixes")
{
  auto url = aws::parse_s3_url("s3://my.bucket-1/a/b/");
  CHECK(url.bucket == "my.bucket-1");
  CHECK(url.prefix == "a/b");
  CHECK(url.to_string() == "s3://my.bucket-1/a/b");
  CHECK(aws::parse_s3_url("s3://bucket").prefix.empty());
  for (const char* bad : {"s3://", "s3://UPPER/x", "s3://a/x", "s3://-bucket/x", "s3://bu..cket/x", "s3://bucket/a//b",
                          "s3://bucket/./x", "s3://bucket/x\n", "http://bucket/x"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(aws::parse_s3_url(bad), InvalidArgument);
  }
}

TEST_CASE("INI files as the AWS CLI reads them")
{
  auto sections = aws::parse_ini("# comment\n[default]\nregion = eu-west-1 ; note\n\n[profile team]\n"
                                 "AWS_ACCESS_KEY_ID=AKIA1\ns3 =\n  max_concurrent_requests = 20\nregion=us-west-2\n");
  CHECK(sections["default"]["region"] == "eu-west-1");
  CHECK(sections["profile team"]["aws_access_key_id"] == "AKIA1");
  CHECK(sections["profile team"]["region"] == "us-west-2");
  CHECK(!sections["profile team"].contains("max_concurrent_requests"));
}

TEST_CASE("region: AWS_REGION, AWS_DEFAULT_REGION, the profile, us-east-1")
{
  test_support::TempDir dir;
  util::write_file_atomically(dir / "config", "[profile team]\nregion = ap-south-1\n[default]\nregion = eu-north-1\n");
  std::map<std::string, std::string> vars{{"HOME", dir.path().string()},
                                          {"AWS_CONFIG_FILE", (dir / "config").string()}};
  CHECK(aws::resolve_region(Environment::from_map(vars)).name == "eu-north-1");
  vars["AWS_PROFILE"] = "team";
  CHECK(aws::resolve_region(Environment::from_map(vars)).name == "ap-south-1");
  vars["AWS_DEFAULT_REGION"] = "us-west-1";
  CHECK(aws::resolve_region(Environment::from_map(vars)).name == "us-west-1");
  vars["AWS_REGION"] = "ca-central-1";
  CHECK(aws::resolve_region(Environment::from_map(vars)).name == "ca-central-1");
  vars["AWS_REGION"] = "bad region/";
  CHECK_THROWS_AS(aws::resolve_region(Environment::from_map(vars)), ConfigError);
  CHECK(aws::resolve_region(Environment::from_map({{"HOME", dir.path().string()}})).name == "us-east-1");
}

TEST_CASE("endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the region's")
{
  CHECK(aws::resolve_s3_endpoint(Environment::from_map({}), "eu-west-1").url == "https://s3.eu-west-1.amazonaws.com");
  CHECK(aws::resolve_s3_endpoint(Environment::from_map({}), "cn-north-1").url
        == "https://s3.cn-north-1.amazonaws.com.cn");
  auto custom = aws::resolve_s3_endpoint(
    Environment::from_map({{"AWS_ENDPOINT_URL", "http://a:1/"}, {"AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9000/"}}),
    "us-east-1");
  CHECK(custom.url == "http://127.0.0.1:9000");
  CHECK(custom.custom);
  CHECK_THROWS_AS(aws::resolve_s3_endpoint(Environment::from_map({{"AWS_ENDPOINT_URL", "ftp://x"}}), "us-east-1"),
                  ConfigError);
}

TEST_CASE("credentials: environment first, then the profile; missing ones name every source tried")
{
  test_support::TempDir dir;
  util::write_file_atomically(dir / "credentials",
                              "[default]\naws_access_key_id = AKIAFILE\naws_secret_access_key = s\n");
  std::map<std::string, std::string> vars{{"HOME", dir.path().string()},
                                          {"AWS_SHARED_CREDENTIALS_FILE", (dir / "credentials").string()},
                                          {"AWS_CONFIG_FILE", (dir / "config").string()},
                                          {"AWS_EC2_METADATA_DISABLED", "true"}};
  auto from_file = aws::CredentialChain(Environment::from_map(vars)).get();
  CHECK(from_file.access_key_id == "AKIAFILE");
  CHECK(from_file.source.find("profile 'default'") != std::string::npos);
  vars["AWS_ACCESS_KEY_ID"] = "AKIAENV";
  vars["AWS_SECRET_ACCESS_KEY"] = "secret-value";
  vars["AWS_SESSION_TOKEN"] = "token-value";
  auto from_env = aws::CredentialChain(Environment::from_map(vars)).get();
  CHECK(from_env.access_key_id == "AKIAENV");
  CHECK(from_env.session_token == "token-value");
  CHECK(from_env.source == "environment variables");
  vars.erase("AWS_SECRET_ACCESS_KEY");
  CHECK_THROWS_AS(aws::CredentialChain(Environment::from_map(vars)).get(), AuthError);
  vars.erase("AWS_ACCESS_KEY_ID");
  std::filesystem::remove(dir / "credentials");
  std::string message;
  try {
    aws::CredentialChain(Environment::from_map(vars)).get();
  } catch (const AuthError& error) {
    message = error.what();
  }
  CHECK(message.find("no AWS credentials found; tried environment variables") != std::string::npos);
  CHECK(message.find("EC2 instance metadata (AWS_EC2_METADATA_DISABLED)") != std::string::npos);
  CHECK(message.find("token-value") == std::string::npos);
  util::write_file_atomically(dir / "config", "[profile sso]\nsso_session = corp\n");
  vars["AWS_PROFILE"] = "sso";
  CHECK_THROWS_AS(aws::CredentialChain(Environment::from_map(vars)).get(), AuthError);
}

TEST_CASE("ISO 8601 expirations")
{
  auto time = aws::parse_iso8601("2026-11-23T14:00:00Z");
  REQUIRE(time.has_value());
  CHECK(aws::Clock::to_time_t(*time) == 1795442400);
  CHECK(aws::parse_iso8601("2026-11-23T14:00:00.123Z").has_value());
  CHECK(!aws::parse_iso8601("yesterday").has_value());
  CHECK(!aws::parse_iso8601("2026-11-23T14:00:00+02:00").has_value());
  // Fuzzing found an S3 LastModified in year 6667: the clock's nanoseconds overflowed.
  CHECK(!aws::parse_iso8601("6667-11-20T10:00:00.000Z").has_value());
  CHECK(!aws::parse_iso8601("2026-13-01T00:00:00Z").has_value());
  CHECK(!aws::parse_iso8601("2026-11-23T24:00:00Z").has_value());
  CHECK(!aws::parse_iso8601("1969-12-31T23:59:59Z").has_value());
  CHECK(aws::parse_iso8601("2200-01-01T00:00:00Z").has_value());
}

TEST_SUITE_END();
