#include <hubcache/aws/config.hpp>
#include <hubcache/aws/credentials.hpp>
#include <hubcache/aws/s3_client.hpp>
#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>

#include "aws/sources.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>

using namespace hubcache;
using hubcache::util::Environment;

TEST_SUITE_BEGIN("hubcache::aws sources");

namespace aws_sources_test {

namespace {

std::string error_of(const std::function<void()>& call)
{
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return {};
}

// A script in `dir` printing `output` and exiting with `status`.
std::filesystem::path helper(const test_support::TempDir& dir, const std::string& name, const std::string& body)
{
  auto path = dir / name;
  util::write_file_atomically(path, "#!/bin/sh\n" + body + "\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

} // namespace

TEST_CASE("--profile, AWS_PROFILE, AWS_DEFAULT_PROFILE, default")
{
  aws::Overrides overrides;
  auto env = Environment::from_map({{"AWS_PROFILE", "env"}, {"AWS_DEFAULT_PROFILE", "old"}});
  CHECK(aws::choose_profile(env).name == "env");
  CHECK(aws::choose_profile(env).source == "AWS_PROFILE");
  overrides.profile = "cli";
  CHECK(aws::choose_profile(env, overrides).source == "--profile");
  CHECK(aws::choose_profile(Environment::from_map({{"AWS_DEFAULT_PROFILE", "old"}})).name == "old");
  CHECK(!aws::choose_profile(Environment::from_map({})).is_explicit());
}

TEST_CASE("--region and --endpoint-url come first; the profile's endpoint_url after the variables")
{
  test_support::TempDir dir;
  util::write_file_atomically(dir / "config",
                              "[profile minio]\nendpoint_url = http://127.0.0.1:9000/\nregion = eu-west-3\n");
  std::map<std::string, std::string> vars{
    {"HOME", dir.path().string()}, {"AWS_CONFIG_FILE", (dir / "config").string()}, {"AWS_PROFILE", "minio"}};
  aws::Overrides overrides;
  auto endpoint = aws::resolve_s3_endpoint(Environment::from_map(vars), "eu-west-3");
  CHECK(endpoint.url == "http://127.0.0.1:9000");
  CHECK(endpoint.source.find("profile 'minio'") == 0);
  vars["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:9001";
  CHECK(aws::resolve_s3_endpoint(Environment::from_map(vars), "eu-west-3").source == "AWS_ENDPOINT_URL_S3");
  overrides.endpoint_url = "http://127.0.0.1:9002/";
  endpoint = aws::resolve_s3_endpoint(Environment::from_map(vars), "eu-west-3", overrides);
  CHECK(endpoint.url == "http://127.0.0.1:9002");
  CHECK(endpoint.source == "--endpoint-url");
  vars["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true";
  CHECK(aws::resolve_s3_endpoint(Environment::from_map(vars), "eu-west-3").url == "https://s3.eu-west-3.amazonaws.com");
  CHECK(aws::resolve_service_endpoint(Environment::from_map({{"AWS_ENDPOINT_URL_STS", "http://127.0.0.1:1"}}), {},
                                      "STS", aws::aws_endpoint("sts", "us-east-1"))
          .url
        == "http://127.0.0.1:1");
  CHECK(aws::aws_endpoint("portal.sso", "cn-north-1") == "https://portal.sso.cn-north-1.amazonaws.com.cn");
  overrides.region = "ap-northeast-1";
  auto region = aws::resolve_region(Environment::from_map(vars), overrides);
  CHECK(region.name == "ap-northeast-1");
  CHECK(region.source == "--region");
  overrides.region = "bad/region";
  CHECK_THROWS_AS(aws::resolve_region(Environment::from_map(vars), overrides), ConfigError);
}

TEST_CASE("shared files: a profile is its config section with its credentials section over it")
{
  auto files = aws::SharedFiles(aws::parse_ini("[profile team]\nregion = x\naws_access_key_id = FROMCONFIG\n"
                                               "[sso-session corp]\nsso_region = us-east-1\n[default]\nregion = y\n"),
                                "/c", aws::parse_ini("[team]\naws_access_key_id = FROMCREDS\n"), "/k");
  auto team = files.profile("team");
  REQUIRE(team);
  CHECK((*team)["aws_access_key_id"] == "FROMCREDS");
  CHECK((*team)["region"] == "x");
  CHECK(files.file_of("team", "aws_access_key_id") == "/k");
  CHECK(files.file_of("team", "region") == "/c");
  CHECK(files.profile("default"));
  CHECK(!files.profile("corp"));
  CHECK(files.sso_session("corp"));
}

TEST_CASE("access key ids are shown masked, as aws configure list does")
{
  CHECK(aws::mask_access_key_id("AKIAIOSFODNN7EXAMPLE") == "****************MPLE");
  CHECK(aws::mask_access_key_id("abc") == "***");
}

TEST_CASE("credential_process output: the CLI's JSON, version 1, or a clear error without the secret")
{
  auto credentials = aws::detail::parse_process_output(
    R"({"Version": 1, "AccessKeyId": "ASIA1", "SecretAccessKey": "s3cr3t", "SessionToken": "t",
        "Expiration": "2030-01-01T00:00:00Z"})",
    "helper");
  CHECK(credentials.access_key_id == "ASIA1");
  CHECK(credentials.session_token == "t");
  REQUIRE(credentials.expiration);
  CHECK(aws::format_iso8601(*credentials.expiration) == "2030-01-01T00:00:00Z");
  CHECK(!aws::detail::parse_process_output(R"({"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "s"})", "h")
           .expiration);
  for (const char* bad :
       {"not json", "[]", R"({"Version": 2, "AccessKeyId": "A", "SecretAccessKey": "s3cr3t"})",
        R"({"AccessKeyId": "A", "SecretAccessKey": "s3cr3t"})", R"({"Version": 1, "AccessKeyId": "A"})",
        R"({"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "s3cr3t", "Expiration": "soon"})"}) {
    CAPTURE(bad);
    auto message = error_of([&] { aws::detail::parse_process_output(bad, "helper"); });
    CHECK(message.find("the helper") == 0);
    CHECK(message.find("s3cr3t") == std::string::npos);
  }
}

TEST_CASE("credential_process runs bounded in time and output, and says how it failed")
{
  test_support::TempDir dir;
  auto good =
    helper(dir, "good.sh", R"(echo '{"Version": 1,' ; echo '"AccessKeyId": "AKIA2", "SecretAccessKey": "x"}')");
  CHECK(aws::detail::run_credential_process("'" + good.string() + "' --flag", "helper", std::chrono::seconds(10))
          .access_key_id
        == "AKIA2");
  auto failing = helper(dir, "fail.sh", "echo 'token expired, log in again' >&2; exit 4");
  auto message =
    error_of([&] { aws::detail::run_credential_process(failing.string(), "helper", std::chrono::seconds(10)); });
  CHECK(message == "the helper exited with status 4: token expired, log in again");
  auto slow = helper(dir, "slow.sh", "sleep 20");
  message =
    error_of([&] { aws::detail::run_credential_process(slow.string(), "helper", std::chrono::milliseconds(200)); });
  CHECK(message.find("the helper timed out") == 0);
  auto flood = helper(dir, "flood.sh", "head -c 3000000 /dev/zero | tr '\\0' 'a'");
  message = error_of([&] { aws::detail::run_credential_process(flood.string(), "helper", std::chrono::seconds(20)); });
  CHECK(message == "the helper printed more than 64 KiB");
  message = error_of(
    [&] { aws::detail::run_credential_process((dir / "missing").string(), "helper", std::chrono::seconds(1)); });
  CHECK(message.find("cannot run the helper") == 0);
  CHECK_THROWS_AS(aws::detail::run_credential_process("'unterminated", "helper", std::chrono::seconds(1)), AuthError);
}

TEST_CASE("STS answers: credentials from the result, anything else an error")
{
  auto credentials = aws::detail::parse_sts_credentials(
    "<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><AssumeRoleResult><Credentials>"
    "<AccessKeyId>ASIA3</AccessKeyId><SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken>"
    "<Expiration>2030-01-01T00:00:00.000Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>",
    "AssumeRole", "role x");
  CHECK(credentials.access_key_id == "ASIA3");
  CHECK(credentials.source == "role x");
  CHECK(credentials.expiration);
  for (const char* bad : {"", "<AssumeRoleResponse>", "<Other><AssumeRoleResult/></Other>",
                          "<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId>"
                          "</Credentials></AssumeRoleResult></AssumeRoleResponse>"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(aws::detail::parse_sts_credentials(bad, "AssumeRole", "role x"), AuthError);
  }
}

TEST_CASE("SSO: profiles in both forms, the token cache the CLI writes, the portal's answer")
{
  test_support::TempDir dir;
  auto files = aws::SharedFiles(
    aws::parse_ini("[profile new]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = Dev\n"
                   "[profile legacy]\nsso_start_url = https://x.awsapps.com/start\nsso_region = eu-west-1\n"
                   "sso_account_id = 111122223333\nsso_role_name = Dev\n[profile partial]\nsso_session = corp\n"
                   "[profile orphan]\nsso_session = gone\nsso_account_id = 1\nsso_role_name = r\n"
                   "[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\n"),
    "/c", {}, "/k");
  auto env = Environment::from_map({{"HOME", dir.path().string()}});
  auto sso = aws::detail::read_sso_profile(*files.profile("new"), files, "new");
  REQUIRE(sso);
  CHECK(sso->region == "us-east-1");
  CHECK(aws::detail::sso_token_file(env, *sso).filename().string()
        == util::hex_digest(util::HashAlgorithm::sha1, "corp") + ".json");
  auto legacy = aws::detail::read_sso_profile(*files.profile("legacy"), files, "legacy");
  REQUIRE(legacy);
  CHECK(legacy->cache_key() == "https://x.awsapps.com/start");
  CHECK_THROWS_AS(aws::detail::read_sso_profile(*files.profile("partial"), files, "partial"), AuthError);
  CHECK(error_of([&] {
          aws::detail::read_sso_profile(*files.profile("orphan"), files, "orphan");
        }).find("names sso_session gone")
        != std::string::npos);

  auto token_file = aws::detail::sso_token_file(env, *sso);
  CHECK(error_of([&] { aws::detail::read_sso_token(token_file, "new"); }).find("no SSO session") == 0);
  std::filesystem::create_directories(token_file.parent_path());
  util::write_file_atomically(token_file, R"({"accessToken": "tok", "expiresAt": "2099-01-01T00:00:00UTC"})");
  CHECK(aws::detail::read_sso_token(token_file, "new") == "tok");
  util::write_file_atomically(token_file, R"({"accessToken": "tok", "expiresAt": "2001-01-01T00:00:00Z"})");
  auto message = error_of([&] { aws::detail::read_sso_token(token_file, "new"); });
  CHECK(message == "the SSO session of AWS profile 'new' has expired");
  CHECK(message.find("tok") == std::string::npos);
  util::write_file_atomically(token_file, "{}");
  CHECK_THROWS_AS(aws::detail::read_sso_token(token_file, "new"), AuthError);

  auto credentials = aws::detail::parse_sso_role_credentials(
    R"({"roleCredentials": {"accessKeyId": "ASIA4", "secretAccessKey": "s", "sessionToken": "t", "expiration": 1893456000000}})",
    "SSO");
  CHECK(credentials.access_key_id == "ASIA4");
  CHECK(aws::format_iso8601(*credentials.expiration) == "2030-01-01T00:00:00Z");
  for (const char* bad :
       {"x", "{}", R"({"roleCredentials": {"accessKeyId": "A"}})",
        R"({"roleCredentials": {"accessKeyId": "A", "secretAccessKey": "s", "sessionToken": "t"}})"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(aws::detail::parse_sso_role_credentials(bad, "SSO"), AuthError);
  }
}

TEST_CASE("profiles: a role needs a source, loops are caught, keys in the credentials file beat credential_process")
{
  test_support::TempDir dir;
  util::write_file_atomically(
    dir / "config",
    "[profile lonely]\nrole_arn = arn:aws:iam::1:role/r\n[profile a]\nrole_arn = arn:aws:iam::1:role/a\n"
    "source_profile = b\n[profile b]\nrole_arn = arn:aws:iam::1:role/b\nsource_profile = a\n"
    "[profile both]\naws_access_key_id = FROMCONFIG\naws_secret_access_key = s\n"
    "credential_process = /bin/false\n[profile mfa]\nrole_arn = arn:aws:iam::1:role/m\n"
    "source_profile = keys\nmfa_serial = arn:aws:iam::1:mfa/me\n[profile ghost]\n"
    "role_arn = arn:aws:iam::1:role/g\nsource_profile = nowhere\n");
  util::write_file_atomically(dir / "credentials", "[keys]\naws_access_key_id = AKIAKEYS\naws_secret_access_key = s\n"
                                                   "credential_process = /bin/false\n");
  std::map<std::string, std::string> vars{{"HOME", dir.path().string()},
                                          {"AWS_CONFIG_FILE", (dir / "config").string()},
                                          {"AWS_SHARED_CREDENTIALS_FILE", (dir / "credentials").string()},
                                          {"AWS_EC2_METADATA_DISABLED", "true"}};
  auto get = [&](const std::string& profile) {
    aws::Overrides overrides;
    overrides.profile = profile;
    return aws::CredentialChain(Environment::from_map(vars), overrides).get();
  };
  CHECK(get("keys").access_key_id == "AKIAKEYS");
  // Keys in the environment do not override --profile; they do AWS_PROFILE (as in the CLI).
  vars["AWS_ACCESS_KEY_ID"] = "AKIAENV";
  vars["AWS_SECRET_ACCESS_KEY"] = "s";
  CHECK(get("keys").access_key_id == "AKIAKEYS");
  vars["AWS_PROFILE"] = "keys";
  CHECK(aws::CredentialChain(Environment::from_map(vars)).get().access_key_id == "AKIAENV");
  vars.erase("AWS_PROFILE");
  vars.erase("AWS_ACCESS_KEY_ID");
  vars.erase("AWS_SECRET_ACCESS_KEY");
  CHECK(error_of([&] { get("both"); }).find("credential_process of AWS profile 'both' exited with status 1")
        != std::string::npos);
  CHECK(error_of([&] { get("lonely"); }).find("has role_arn but no source_profile nor credential_source")
        != std::string::npos);
  CHECK(error_of([&] { get("a"); }).find("loops through") != std::string::npos);
  CHECK(error_of([&] { get("mfa"); }).find("needs an MFA code") != std::string::npos);
  CHECK(error_of([&] { get("ghost"); }).find("names source_profile 'nowhere'") != std::string::npos);
  // Half of the web identity variables: that source is skipped, and said so.
  vars["AWS_ROLE_ARN"] = "arn:aws:iam::1:role/irsa";
  CHECK(error_of([&] {
          aws::CredentialChain(Environment::from_map(vars)).get();
        }).find("web identity (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN not both set)")
        != std::string::npos);
}

TEST_CASE("--no-sign-request: the S3 config does not sign")
{
  aws::Overrides overrides;
  overrides.no_sign_request = true;
  overrides.endpoint_url = "http://127.0.0.1:1";
  auto config = aws::S3Config::from_environment(Environment::from_map({}), overrides);
  CHECK(!config.sign);
  CHECK(config.custom_endpoint);
  CHECK(config.endpoint_source == "--endpoint-url");
  aws::S3Client client(config, nullptr);
  CHECK(client.credential_source() == "no credentials (--no-sign-request)");
}

TEST_SUITE_END();

} // namespace aws_sources_test
