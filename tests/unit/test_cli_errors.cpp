// The error table: library facts in, the program's message and next step out.
#include "errors.hpp"

#include <hubcache/error.hpp>

#include <doctest/doctest.h>

using namespace neuron_cache;
namespace storage = hubcache::storage;

namespace cli_errors_test {

namespace {

RunContext context_with_repo(const std::string& spec, storage::RepoSource source, const std::string& origin)
{
  RunContext context;
  context.command = "synchronize";
  context.repo = storage::ResolvedRepo{storage::parse_repo_spec(spec), source, origin};
  return context;
}

} // namespace

TEST_CASE("errors: the default repo missing never suggests creating it, and says nothing was set")
{
  auto context =
    context_with_repo("aws-neuron/optimum-neuron-cache", storage::RepoSource::default_value, "built-in default");
  hubcache::RepoNotFound error("the cache repo aws-neuron/optimum-neuron-cache does not exist or is not readable",
                               hubcache::ErrorFacts{"aws-neuron/optimum-neuron-cache", false, false});
  auto report = describe_error(error, context);
  CHECK(report.exit_code == k_exit_error);
  CHECK(report.message.find("(the built-in default)") != std::string::npos);
  CHECK(report.hint.find("--repo-id") != std::string::npos);
  CHECK(report.hint.find("neuron-cache set") != std::string::npos);
  CHECK(report.hint.find("create aws-neuron") == std::string::npos);
  CHECK(report.hint.find(login_hint()) != std::string::npos); // anonymous: it may be private
}

TEST_CASE("errors: a repo the user named says where the name came from and offers to create it")
{
  auto context = context_with_repo("alice/cache", storage::RepoSource::environment, "CUSTOM_CACHE_REPO");
  hubcache::RepoNotFound error("the cache repo alice/cache does not exist or is not readable",
                               hubcache::ErrorFacts{"alice/cache", true, false});
  auto report = describe_error(error, context);
  CHECK(report.message.find("(from CUSTOM_CACHE_REPO)") != std::string::npos);
  CHECK(report.hint.find("create it with: neuron-cache create alice/cache") != std::string::npos);
  CHECK(report.hint.find("hf auth login") == std::string::npos); // a token was sent

  auto in_default_namespace = context_with_repo("aws-neuron/other", storage::RepoSource::option, "--repo-id");
  hubcache::RepoNotFound other("missing", hubcache::ErrorFacts{"aws-neuron/other", true, false});
  auto other_report = describe_error(other, in_default_namespace);
  CHECK(other_report.message.find("named by --repo-id") != std::string::npos);
  CHECK(other_report.hint.find("neuron-cache create") == std::string::npos);
}

TEST_CASE("errors: tokens: one login hint, a rejected token names its source, never its value")
{
  RunContext context;
  context.token_source = hubcache::hub::TokenSource::environment;
  context.token_origin = "HF_TOKEN";
  auto missing = describe_error(hubcache::TokenMissing("this needs a Hugging Face token, and none is set"), context);
  CHECK(missing.hint == login_hint());
  auto rejected = describe_error(hubcache::TokenRejected("the Hub rejected your token (HTTP 401)"), context);
  CHECK(rejected.message == "the Hub rejected your token (HTTP 401) (token from HF_TOKEN)");
  CHECK(rejected.hint.find("hf auth login") != std::string::npos);
  context.token_source = hubcache::hub::TokenSource::file;
  context.token_origin = "/home/u/.cache/huggingface/token";
  CHECK(describe_error(hubcache::TokenRejected("rejected"), context).message
        == "rejected (token from the token file /home/u/.cache/huggingface/token)");
  context.token_source = hubcache::hub::TokenSource::explicit_value;
  CHECK(describe_error(hubcache::TokenRejected("rejected"), context).message == "rejected (token from --token)");
}

TEST_CASE("errors: write access, existing repos, config files and the rest")
{
  RunContext context;
  auto hub = describe_error(
    hubcache::WriteAccessDenied("You do not have write access to a/b", hubcache::ErrorFacts{"a/b", true, true}),
    context);
  CHECK(hub.hint.find("use a token with write access") != std::string::npos);
  auto directory =
    describe_error(hubcache::WriteAccessDenied("no write access", hubcache::ErrorFacts{"file:///r", false, true},
                                               "fix its permissions"),
                   context);
  CHECK(directory.hint == "fix its permissions; or use a cache repo you can write to: neuron-cache create DIR");
  auto exists = describe_error(hubcache::RepoAlreadyExists("exists", hubcache::ErrorFacts{"file:///r"}), context);
  CHECK(exists.hint == "use it with: neuron-cache set file:///r, or pass --exist-ok to create");
  auto config = describe_error(
    hubcache::RepoConfigFileError("the file is empty", "delete the file to use the default repo"), context);
  CHECK(config.hint.find("neuron-cache set NAME") != std::string::npos);
  auto plain = describe_error(hubcache::RemoteError("the Hub failed", "retry later"), context);
  CHECK(plain.message == "the Hub failed");
  CHECK(plain.hint == "retry later");
  auto usage =
    describe_error(UsageError("missing argument NAME"), context_with_repo("/r", storage::RepoSource::option, ""));
  CHECK(usage.exit_code == k_exit_usage);
  CHECK(usage.hint == "see 'neuron-cache synchronize --help'");
  CHECK(describe_error(std::runtime_error("odd"), context).exit_code == k_exit_error);
}

} // namespace cli_errors_test
