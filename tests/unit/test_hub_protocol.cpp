// The pure pieces of the Hub client: header parsing, retry policy, URL handling, error
// mapping, token resolution and the upload payloads.
#include "fake_server.hpp"
#include "test_support.hpp"

#include <hubcache/error.hpp>
#include <hubcache/http/client.hpp>
#include <hubcache/hub/api.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>

#include "hub/detail.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

using namespace hubcache;
using namespace hubcache::util;
using namespace hubcache::http;
using namespace hubcache::hub;
using namespace std::chrono_literals;
using nlohmann::json;

namespace hub_protocol_test {

namespace {

http::Response response_with(long status, std::vector<std::pair<std::string, std::string>> headers,
                             std::string body = {})
{
  http::Response response;
  response.status = status;
  for (auto& [name, value] : headers) {
    response.headers.add(name, value);
  }
  response.body = std::move(body);
  return response;
}

struct Caught {
  std::string first;  // message
  std::string second; // hint
  ErrorFacts facts;
};

template <typename ErrorType>
Caught caught(const http::Response& response, const HubErrorContext& context,
              const std::optional<std::string>& token = std::nullopt)
{
  try {
    throw_hub_error(response, context, token);
  } catch (const ErrorType& error) {
    return {error.what(), error.hint(), error.facts()};
  }
  FAIL("no error of the expected type");
  return {};
}

} // namespace

TEST_CASE("Link headers: rel=next found among several values, absent on the last page")
{
  CHECK(http::parse_link_next(R"(<http://127.0.0.1:5/api/models/a/b/tree/main?cursor=abc&recursive=true>; rel="next")")
        == "http://127.0.0.1:5/api/models/a/b/tree/main?cursor=abc&recursive=true");
  CHECK(http::parse_link_next(R"(<https://x/prev>; rel="prev", <https://x/next?c=1>; rel="next")")
        == "https://x/next?c=1");
  CHECK(http::parse_link_next(R"(<https://x/n>;rel=next)") == "https://x/n");
  CHECK(http::parse_link_next(R"(<https://x/n>; title="a, b"; rel="last next")") == "https://x/n");
  CHECK_FALSE(http::parse_link_next(R"(<https://x/prev>; rel="prev")"));
  CHECK_FALSE(http::parse_link_next(""));
  CHECK_FALSE(http::parse_link_next("garbage <unterminated"));
}

TEST_CASE("retry policy: retryable statuses, exponential backoff, Retry-After and RateLimit")
{
  http::RetryPolicy policy;
  CHECK(http::is_retryable_status(408));
  CHECK(http::is_retryable_status(429));
  CHECK(http::is_retryable_status(500));
  CHECK(http::is_retryable_status(503));
  CHECK_FALSE(http::is_retryable_status(404));
  CHECK_FALSE(http::is_retryable_status(409));
  CHECK_FALSE(http::is_retryable_status(200));

  auto server_error = response_with(503, {});
  CHECK(policy.delay_after(1, &server_error) == 1000ms);
  CHECK(policy.delay_after(2, &server_error) == 2000ms);
  CHECK(policy.delay_after(3, &server_error) == 4000ms);
  CHECK(policy.delay_after(4, &server_error) == 8000ms);
  CHECK(policy.delay_after(5, &server_error) == 8000ms); // capped
  CHECK_FALSE(policy.delay_after(6, &server_error));     // attempts exhausted
  CHECK(policy.delay_after(1, nullptr) == 1000ms);       // network error
  auto not_found = response_with(404, {});
  CHECK_FALSE(policy.delay_after(1, &not_found));
  auto ok = response_with(200, {});
  CHECK_FALSE(policy.delay_after(1, &ok));

  auto retry_after = response_with(429, {{"Retry-After", "3"}});
  CHECK(policy.delay_after(1, &retry_after) == 3000ms);
  auto rate_limited = response_with(429, {{"RateLimit", R"("api";r=0;t=12)"}, {"Retry-After", "3"}});
  CHECK(policy.delay_after(1, &rate_limited) == 13000ms); // t + 1, as huggingface_hub
  auto not_exhausted = response_with(429, {{"RateLimit", R"("api";r=5;t=12)"}});
  CHECK(policy.delay_after(1, &not_exhausted) == 1000ms);
  auto huge = response_with(503, {{"Retry-After", "100000"}});
  CHECK(policy.delay_after(1, &huge) == 60000ms);
  auto http_date = response_with(503, {{"Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"}});
  CHECK(policy.delay_after(2, &http_date) == 2000ms);

  CHECK(http::parse_ratelimit_reset(R"("api";r=0;t=229)") == 229);
  CHECK_FALSE(http::parse_ratelimit_reset(R"("api";r=497;t=229)"));
  CHECK_FALSE(http::parse_ratelimit_reset("nonsense"));
  CHECK(http::parse_retry_after(" 7 ") == 7);
  CHECK_FALSE(http::parse_retry_after("-1"));
}

TEST_CASE("retry policy: NEURON_CACHE_HTTP_BACKOFF_BASE_MS scales every wait")
{
  auto env = Environment::from_map({{"NEURON_CACHE_HTTP_BACKOFF_BASE_MS", "10"}});
  auto policy = http::RetryPolicy::from_environment(env);
  auto server_error = response_with(500, {});
  CHECK(policy.delay_after(1, &server_error) == 10ms);
  CHECK(policy.delay_after(5, &server_error) == 80ms);
  auto rate_limited = response_with(429, {{"RateLimit", R"("api";r=0;t=2)"}});
  CHECK(policy.delay_after(1, &rate_limited) == 30ms);
  auto defaults = http::RetryPolicy::from_environment(Environment::from_map({}));
  CHECK(defaults.base == 1000ms);
}

TEST_CASE("retry policy: an out-of-range NEURON_CACHE_HTTP_BACKOFF_BASE_MS is clamped, never overflows")
{
  auto huge = http::RetryPolicy::from_environment(
    Environment::from_map({{"NEURON_CACHE_HTTP_BACKOFF_BASE_MS", "9223372036854775807"}}));
  CHECK(huge.base == 60000ms);
  CHECK(huge.cap.count() > 0);
  auto negative =
    http::RetryPolicy::from_environment(Environment::from_map({{"NEURON_CACHE_HTTP_BACKOFF_BASE_MS", "-5"}}));
  CHECK(negative.base == 1000ms); // not a number of milliseconds: the default stays
}

TEST_CASE("URL helpers: encoding, origins and redirect targets")
{
  CHECK(http::url_encode("refs/pr/1") == "refs%2Fpr%2F1");
  CHECK(http::url_encode("dir/a b.txt", true) == "dir/a%20b.txt");
  CHECK(http::url_encode("a+b&c=d?e#f%") == "a%2Bb%26c%3Dd%3Fe%23f%25");
  CHECK(http::url_encode("neuronxcc-2.15/MODULE_1.neff", true) == "neuronxcc-2.15/MODULE_1.neff");
  CHECK(http::url_origin("HTTP://Example.COM:8080/path?q") == "http://example.com:8080");
  CHECK(http::url_origin("https://user:pw@host/x") == "https://host");
  CHECK(http::url_origin("/relative") == "");
  CHECK(http::resolve_location("http://a:1/x/y?z", "https://cdn/obj") == "https://cdn/obj");
  CHECK(http::resolve_location("http://a:1/x/y?z", "/lfs/obj?sig=1") == "http://a:1/lfs/obj?sig=1");
  CHECK(http::resolve_location("http://a:1/x/y?z", "other") == "http://a:1/x/other");
  CHECK(http::resolve_location("https://a/x", "//b/c") == "https://b/c");
}

TEST_CASE("errors: X-Error-Code first, request id in the message, a next step in the hint")
{
  HubErrorContext context{"read the repo alice/cache", "alice/cache", {}, false, true};
  auto [message, hint, facts] =
    caught<RepoNotFound>(response_with(404, {{"X-Error-Code", "RepoNotFound"}, {"X-Request-Id", "req-123"}},
                                       R"({"error":"Repository not found"})"),
                         context);
  CHECK(message.find("req-123") != std::string::npos);
  CHECK(message.find("Repository not found") != std::string::npos);
  // Facts, not advice naming a program: the CLI words the next step.
  CHECK(facts.repo == "alice/cache");
  CHECK(facts.token_sent);
  CHECK_FALSE(facts.write);
  CHECK(hint.find("neuron-cache") == std::string::npos);

  context.path = "a/b.json";
  auto entry = caught<EntryNotFound>(
    response_with(404, {{"X-Error-Code", "EntryNotFound"}, {"X-Error-Message", "Entry not found"}}), context);
  CHECK(entry.first.find("'a/b.json'") != std::string::npos);
  caught<RevisionNotFound>(response_with(404, {{"X-Error-Code", "RevisionNotFound"}}), context);
  caught<AuthError>(response_with(401, {{"X-Error-Code", "GatedRepo"}}), context);

  // 401 without a code: no token -> log in; a token on a repo read -> not found or no access.
  HubErrorContext anonymous{"read the repo alice/cache", "alice/cache", {}, false, false};
  auto login = caught<TokenMissing>(response_with(401, {}, R"({"error":"Invalid username or password."})"), anonymous);
  CHECK_FALSE(login.facts.token_sent);
  auto rejected =
    caught<TokenRejected>(response_with(401, {}), HubErrorContext{"check the token", "", {}, false, true});
  CHECK(rejected.first.find("rejected your token") != std::string::npos);
  auto private_repo = caught<RepoNotFound>(response_with(401, {}), context);
  CHECK(private_repo.first.find("not accessible") != std::string::npos);

  HubErrorContext write{"create the repo alice/cache", "alice/cache", {}, true, true};
  auto read_only = caught<WriteAccessDenied>(response_with(403, {{"X-Request-Id", "r9"}}), write);
  CHECK(read_only.first.find("write access") != std::string::npos);
  CHECK(read_only.facts.write);
  CHECK(read_only.first.find("r9") != std::string::npos);

  caught<ConflictError>(response_with(412, {}), write);
  caught<ConflictError>(response_with(409, {}), write);
  auto overloaded = caught<RemoteError>(response_with(503, {}, "<html>\nBad gateway</html>"), context);
  CHECK(overloaded.first.find('\n') == std::string::npos);
  caught<RemoteError>(response_with(429, {}), context);
}

TEST_CASE("errors never carry the token, even when the server echoes it")
{
  std::string token = "hf_secretsecretsecret";
  HubErrorContext context{"read the repo a/b", "a/b", {}, false, true};
  for (long status : {400L, 401L, 403L, 404L, 500L}) {
    auto response = response_with(status, {{"X-Error-Message", "bad token " + token}, {"X-Request-Id", token}},
                                  "{\"error\":\"" + token + "\"}");
    try {
      throw_hub_error(response, context, token);
    } catch (const Error& error) {
      CHECK(std::string(error.what()).find(token) == std::string::npos);
      CHECK(error.hint().find(token) == std::string::npos);
    }
  }
}

TEST_CASE("token resolution: --token, HF_TOKEN, HUGGING_FACE_HUB_TOKEN, HF_TOKEN_PATH, $HF_HOME/token")
{
  test_support::TempDir dir;
  auto home = dir.path() / "hf";
  std::filesystem::create_directories(home);
  util::write_file_atomically(home / "token", "  hf_fromfile\r\n");
  util::write_file_atomically(dir.path() / "other-token", "hf_frompath\n");
  std::map<std::string, std::string> vars = {{"HF_HOME", home.string()}};

  CHECK(resolve_hub_token(Environment::from_map(vars), std::nullopt) == "hf_fromfile");
  vars["HF_TOKEN_PATH"] = (dir.path() / "other-token").string();
  CHECK(resolve_hub_token(Environment::from_map(vars), std::nullopt) == "hf_frompath");
  vars["HUGGING_FACE_HUB_TOKEN"] = "hf_legacy";
  CHECK(resolve_hub_token(Environment::from_map(vars), std::nullopt) == "hf_legacy");
  vars["HF_TOKEN"] = " hf_env ";
  CHECK(resolve_hub_token(Environment::from_map(vars), std::nullopt) == "hf_env");
  CHECK(resolve_hub_token(Environment::from_map(vars), std::string("hf_option")) == "hf_option");
  CHECK(resolve_hub_token(Environment::from_map(vars), std::string("  ")) == "hf_env"); // empty = none

  // Empty values mean "none" at every level.
  std::map<std::string, std::string> empty = {{"HF_HOME", home.string()}, {"HF_TOKEN", ""}};
  util::write_file_atomically(home / "token", "\n");
  CHECK_FALSE(resolve_hub_token(Environment::from_map(empty), std::nullopt));
  empty["HF_TOKEN_PATH"] = (dir.path() / "missing").string();
  CHECK_FALSE(resolve_hub_token(Environment::from_map(empty), std::nullopt));
  // Something that is not a token file is one clear error naming it: never a hang on a
  // FIFO, never an endless read of a device, never a huge allocation.
  empty["HF_TOKEN_PATH"] = dir.path().string();
  CHECK_THROWS_AS(resolve_hub_token(Environment::from_map(empty), std::nullopt), ConfigError);
  REQUIRE(::mkfifo((dir.path() / "fifo").c_str(), 0600) == 0);
  empty["HF_TOKEN_PATH"] = (dir.path() / "fifo").string();
  CHECK_THROWS_WITH_AS(resolve_hub_token(Environment::from_map(empty), std::nullopt),
                       doctest::Contains("fifo: not a regular file"), ConfigError);
  empty["HF_TOKEN_PATH"] = "/dev/zero";
  CHECK_THROWS_AS(resolve_hub_token(Environment::from_map(empty), std::nullopt), ConfigError);
  util::write_file_atomically(dir.path() / "huge", std::string(100 * 1024, 'x'));
  empty["HF_TOKEN_PATH"] = (dir.path() / "huge").string();
  CHECK_THROWS_WITH_AS(resolve_hub_token(Environment::from_map(empty), std::nullopt), doctest::Contains("larger than"),
                       ConfigError);
}

TEST_CASE("environment: HF_ENDPOINT trailing slash, HF_HUB_OFFLINE truthy values")
{
  CHECK(hub_endpoint(Environment::from_map({})) == "https://huggingface.co");
  CHECK(hub_endpoint(Environment::from_map({{"HF_ENDPOINT", "http://127.0.0.1:8080//"}})) == "http://127.0.0.1:8080");
  for (const char* value : {"1", "ON", "yes", "True"}) {
    CHECK(hub_offline(Environment::from_map({{"HF_HUB_OFFLINE", value}})));
  }
  for (const char* value : {"0", "", "off", "no"}) {
    CHECK_FALSE(hub_offline(Environment::from_map({{"HF_HUB_OFFLINE", value}})));
  }
}

TEST_CASE("offline: every call fails fast with a typed error and a hint, before any network use")
{
  auto config = HubConfig::from_environment(
    Environment::from_map({{"HF_HUB_OFFLINE", "1"}, {"HF_ENDPOINT", "http://127.0.0.1:1"}, {"HF_TOKEN", "hf_x"}}),
    std::nullopt);
  HubApi api(config);
  CHECK_THROWS_AS(api.whoami(), HubOfflineError);
  CHECK_THROWS_AS(api.repo_info("a/b"), HubOfflineError);
  StringDownloadTarget target;
  CHECK_THROWS_AS(api.download("a/b", "main", "x", target), HubOfflineError);
  try {
    api.list_tree("a/b", "main", "");
  } catch (const HubOfflineError& error) {
    CHECK(error.hint().find("HF_HUB_OFFLINE") != std::string::npos);
  }
}

TEST_CASE("LFS pointer text and sizes match the Hub's pointerSize")
{
  std::string sha(64, 'a');
  auto pointer = lfs_pointer_text(sha, 1048576);
  CHECK(pointer == "version https://git-lfs.github.com/spec/v1\noid sha256:" + sha + "\nsize 1048576\n");
  CHECK(pointer.size() == 132);
  CHECK(lfs_pointer_text(sha, 123456789).size() == 134);
}

TEST_CASE("base64 and batching")
{
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode(std::string("\xff\x00\x10", 3)) == "/wAQ");
  CHECK(batch_ranges(0, 256).empty());
  auto ranges = batch_ranges(600, 256);
  REQUIRE(ranges.size() == 3);
  CHECK(ranges[0] == std::pair<std::size_t, std::size_t>{0, 256});
  CHECK(ranges[2] == std::pair<std::size_t, std::size_t>{512, 600});
}

TEST_CASE("NDJSON commit lines: header with parentCommit, files, LFS files, deletions")
{
  auto header = json::parse(commit_header_line("Synchronizing local compiler cache.", "", std::string(40, 'c')));
  CHECK(header["key"] == "header");
  CHECK(header["value"]["summary"] == "Synchronizing local compiler cache.");
  CHECK(header["value"]["parentCommit"] == std::string(40, 'c'));
  CHECK_FALSE(json::parse(commit_header_line("s", "d", std::nullopt))["value"].contains("parentCommit"));

  auto file = json::parse(commit_file_line_prefix("dir/\"quoted\".json") + base64_encode("{}")
                          + std::string(k_commit_file_line_suffix));
  CHECK(file["key"] == "file");
  CHECK(file["value"]["path"] == "dir/\"quoted\".json");
  CHECK(file["value"]["encoding"] == "base64");
  CHECK(file["value"]["content"] == "e30=");

  auto lfs = json::parse(commit_lfs_file_line("m/model.neff", std::string(64, 'e'), 350));
  CHECK(lfs["key"] == "lfsFile");
  CHECK(lfs["value"]
        == json{{"path", "m/model.neff"}, {"algo", "sha256"}, {"oid", std::string(64, 'e')}, {"size", 350}});
  CHECK(json::parse(commit_deletion_line("old.txt", false))
        == json{{"key", "deletedFile"}, {"value", {{"path", "old.txt"}}}});
  CHECK(json::parse(commit_deletion_line("dir", true))
        == json{{"key", "deletedFolder"}, {"value", {{"path", "dir/"}}}});
  CHECK(commit_deletion_line("x", false).back() == '\n');
}

TEST_CASE("preupload and LFS batch payloads")
{
  std::vector<PreuploadFile> files = {{"a.txt", 2, "hi"}, {"b.bin", 1000, std::string(512, '\0')}};
  auto body = json::parse(preupload_request_body(files, 0, 2));
  REQUIRE(body["files"].size() == 2);
  CHECK(body["files"][0] == json{{"path", "a.txt"}, {"sample", "aGk="}, {"size", 2}});
  CHECK(body["files"][1]["size"] == 1000);

  auto answer = parse_preupload_response(
    R"({"commitOid":"c0","files":[{"path":"a.txt","uploadMode":"regular","shouldIgnore":false,"oid":"abc"},
        {"path":"b.bin","uploadMode":"lfs","shouldIgnore":true}]})");
  CHECK(answer.commit_oid == "c0");
  REQUIRE(answer.files.size() == 2);
  CHECK_FALSE(answer.files[0].lfs);
  CHECK(answer.files[0].remote_oid == "abc");
  CHECK(answer.files[1].lfs);
  CHECK(answer.files[1].should_ignore);
  CHECK_THROWS_AS(parse_preupload_response(R"({"files":[{"path":"a","uploadMode":"xet"}]})"), RemoteError);

  std::vector<LfsObjectRef> objects = {{"aa", 1}, {"bb", 2}};
  auto batch = json::parse(lfs_batch_request_body(objects, 1, 2, "main"));
  CHECK(batch["operation"] == "upload");
  CHECK(batch["transfers"] == json{"basic", "multipart"});
  CHECK(batch["hash_algo"] == "sha256");
  CHECK(batch["ref"]["name"] == "main");
  CHECK(batch["objects"] == json{{{"oid", "bb"}, {"size", 2}}});

  auto parsed = parse_lfs_batch_response(R"({"transfer":"basic","objects":[
      {"oid":"aa","size":1,"actions":{"upload":{"href":"http://x/put"},"verify":{"href":"http://x/v"}}},
      {"oid":"bb","size":2}]})");
  REQUIRE(parsed.size() == 2);
  CHECK(parsed[0].upload->href == "http://x/put");
  CHECK(parsed[0].verify->href == "http://x/v");
  CHECK_FALSE(parsed[1].upload);
  CHECK_THROWS_AS(
    parse_lfs_batch_response(R"({"objects":[{"oid":"aa","size":1,"error":{"code":422,"message":"no"}}]})"),
    RemoteError);
}

TEST_CASE("multipart plan: parts ordered by number, count checked against the size")
{
  LfsAction upload{"http://x/complete",
                   {{"chunk_size", "4"}, {"00002", "http://x/p2"}, {"00001", "http://x/p1"}, {"00003", "http://x/p3"}}};
  auto plan = multipart_plan(upload, 10);
  REQUIRE(plan);
  CHECK(plan->chunk_size == 4);
  CHECK(plan->part_urls == std::vector<std::string>{"http://x/p1", "http://x/p2", "http://x/p3"});
  CHECK_THROWS_AS(multipart_plan(upload, 20), RemoteError);
  CHECK_FALSE(multipart_plan(LfsAction{"http://x/put", {}}, 10));
  CHECK_THROWS_AS(multipart_plan(LfsAction{"h", {{"chunk_size", "0"}}}, 10), RemoteError);
}

// Found by fuzz_http_headers (UBSan: signed overflow in `reset + 1` and `base * n`): a
// server may send any number up to LONG_MAX; the wait is the cap, never a wrapped value.
TEST_CASE("retry policy: huge Retry-After and RateLimit numbers wait the cap")
{
  http::RetryPolicy policy;
  auto rate_limited = response_with(429, {{"RateLimit", R"("api";r=0;t=9223372036854775807)"}});
  CHECK(policy.delay_after(1, &rate_limited) == 60000ms);
  auto retry_after = response_with(503, {{"Retry-After", "9223372036854775807"}});
  CHECK(policy.delay_after(1, &retry_after) == 60000ms);
  auto just_below = response_with(503, {{"Retry-After", "59"}});
  CHECK(policy.delay_after(1, &just_below) == 59000ms);
  http::RetryPolicy instant = policy;
  instant.base = 0ms;
  CHECK(instant.delay_after(1, &retry_after) == 0ms);
}

// Found by fuzz_ndjson_commit: a file name that is not UTF-8 (any bytes are a Linux name)
// surfaced as a JSON library error from the request writers; it is now one clear refusal
// that names the file, before anything is sent.
TEST_CASE("preupload and commit lines refuse a name that is not UTF-8, naming it")
{
  std::string name = "dir/caf\xe9\x1b.neff";
  CHECK_THROWS_WITH_AS(preupload_request_body({{name, 1, "x"}}, 0, 1),
                       doctest::Contains(R"(the path "dir/caf\ufffd\u001b.neff" is not valid UTF-8)"), InvalidArgument);
  CHECK_THROWS_AS(commit_file_line_prefix(name), InvalidArgument);
  CHECK_THROWS_AS(commit_lfs_file_line(name, std::string(64, 'e'), 1), InvalidArgument);
  CHECK_THROWS_AS(commit_deletion_line(name, false), InvalidArgument);
  CHECK_THROWS_AS(commit_deletion_line(name, true), InvalidArgument);
  CHECK_THROWS_WITH_AS(commit_header_line("Add caf\xe9", "", std::nullopt),
                       doctest::Contains("the commit message is not valid UTF-8"), InvalidArgument);
  CHECK(json::parse(commit_lfs_file_line("dir/café.neff", std::string(64, 'e'), 1))["value"]["path"]
        == "dir/café.neff");
}

// Found by fuzz_hub_tree (UBSan: 1e300 is outside the range of uint64_t): a size that is
// not a non-negative integer is a bad answer, not a conversion.
TEST_CASE("tree entries and LFS batch objects with a fractional or negative size are bad answers")
{
  auto entry = detail::parse_tree_entry(json::parse(R"({"type": "file", "path": "a.bin", "size": 12, "oid": "x"})"));
  CHECK(entry.size == 12);
  CHECK(detail::parse_tree_entry(json::parse(R"({"type": "directory", "path": "d"})")).size == 0);
  for (const auto* size : {"1e300", "-1", "1.5", "\"12\""}) {
    CAPTURE(size);
    auto item = json::parse(std::string(R"({"type": "file", "path": "a.bin", "size": )") + size + "}");
    CHECK_THROWS_AS(detail::parse_tree_entry(item), json::exception);
    CHECK_THROWS_AS(parse_lfs_batch_response(std::string(R"({"objects": [{"oid": "aa", "size": )") + size + "}]}"),
                    json::exception);
  }
}

TEST_CASE("a file read whole is bounded: StringDownloadTarget refuses to grow past its limit")
{
  StringDownloadTarget target(10);
  target.write("0123456789");
  CHECK(target.content == "0123456789");
  CHECK_THROWS_AS(target.write("x"), hubcache::InvalidArgument);
  target.restart();
  CHECK_NOTHROW(target.write("abc"));
}

TEST_CASE("a file stored with Xet is announced to its target as a redirect's download is, so it is streamed")
{
  // The resolve answers as the Hub does for a Xet file: a redirect naming the Xet hash,
  // the size and the read-token URL. Without the size announced, the target wrote the
  // rebuilt file one chunk at a time through the page cache instead of streaming it.
  const std::string content(3 * 1024 * 1024 + 17, 'x');
  const std::string xet_hash(64, 'a');
  test_support::FakeServer server([&](httplib::Server& routes, test_support::FakeServer& self) {
    routes.Get(".*", [&](const httplib::Request&, httplib::Response& response) {
      response.status = 302;
      response.set_header("Location", self.url + "/cas-bridge/file");
      response.set_header("X-Xet-Hash", xet_hash);
      response.set_header("X-Linked-Size", std::to_string(content.size()));
      response.set_header("X-Linked-Etag", "\"" + hex_digest(HashAlgorithm::sha256, content) + "\"");
      response.set_header("Link", "<" + self.url + "/api/models/a/b/xet-read-token/main>; rel=\"xet-auth\"");
    });
  });
  auto config = HubConfig::from_environment(Environment::from_map({{"HF_ENDPOINT", server.url}, {"HF_TOKEN", "hf_x"}}),
                                            std::nullopt);
  std::vector<std::string> asked;
  config.xet_reader = [&](const XetFileRef& file, const std::function<void(std::string_view)>& write) {
    asked.push_back(file.file_hash);
    CHECK(file.size == content.size());
    for (std::size_t at = 0; at < content.size(); at += 65536) {
      write(std::string_view(content).substr(at, 65536));
    }
  };
  struct RecordingTarget final : DownloadTarget {
    std::vector<std::uint64_t> announced;
    std::string content;
    void expect(std::uint64_t size) override { announced.push_back(size); }
    void restart() override { content.clear(); }
    void write(std::string_view chunk) override
    {
      CHECK_FALSE(announced.empty()); // announced before the first byte
      content.append(chunk);
    }
    util::FileDigests digests() override
    {
      return util::FileDigests{content.size(), hex_digest(HashAlgorithm::sha256, content), {}};
    }
  } target;
  HubApi api(config);
  auto result = api.download("a/b", "main", "model.neff", target);
  CHECK(asked == std::vector<std::string>{xet_hash});
  CHECK(target.announced == std::vector<std::uint64_t>{content.size()});
  CHECK(target.content == content);
  CHECK(result.size == content.size());
}

} // namespace hub_protocol_test
