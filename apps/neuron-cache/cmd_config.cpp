// `neuron-cache config` (alias `env`): what this host's setup resolves to, and why — the
// cache repo and where its name comes from, the Hub endpoint, whose token, offline or not,
// the local compile cache, the compiler, the files the program keeps. Like `hf env` and
// `ccache -p`: the first thing to run (and to paste into a bug report).
#include "commands.hpp"
#include "errors.hpp"

#include <hubcache/aws/setup.hpp>
#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/error.hpp>
#include <hubcache/hub/api.hpp>
#include <hubcache/hub/config.hpp>
#include <hubcache/storage/repo_choice.hpp>
#include <hubcache/util/process.hpp>

#include <regex>

namespace neuron_cache {

namespace {

namespace storage = hubcache::storage;

nlohmann::json or_null(const std::optional<std::string>& value)
{
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// `neuronx-cc --version` of the compiler on PATH: its version, or why there is none.
struct CompilerInfo {
  std::optional<std::string> version;
  std::string note; // "not found on PATH", ...
};

CompilerInfo installed_compiler()
{
  hubcache::util::ProcessSpec spec;
  spec.argv = {"neuronx-cc", "--version"};
  spec.timeout = std::chrono::seconds(20);
  spec.termination_grace = std::chrono::milliseconds(500);
  std::string output;
  spec.on_line = [&output](hubcache::util::ProcessStream, std::string_view line) {
    if (output.size() < 4096) {
      output.append(line).push_back('\n');
    }
  };
  hubcache::util::ProcessResult result;
  try {
    result = hubcache::util::run_process(spec);
  } catch (const hubcache::IoError&) {
    return {std::nullopt, "not found on PATH"};
  }
  static const std::regex version_pattern(R"(\b(\d+\.\d+(\.[0-9A-Za-z]+)*(\+[0-9A-Za-z.]+)?)\b)");
  std::smatch match;
  if (result.succeeded() && std::regex_search(output, match, version_pattern)) {
    return {match[1].str(), {}};
  }
  return {std::nullopt, "neuronx-cc --version " + result.describe()};
}

// The token's owner, asked of the Hub; never the token itself.
struct TokenInfo {
  std::optional<std::string> user;
  std::string note;
};

TokenInfo token_owner(const hubcache::util::Environment& env, const hubcache::hub::HubToken& token)
{
  if (!token.value) {
    return {std::nullopt, "no token"};
  }
  auto config = hubcache::hub::HubConfig::from_environment(env, token.value);
  if (config.offline) {
    return {std::nullopt, "not checked: offline"};
  }
  try {
    hubcache::hub::HubApi api(config);
    return {api.whoami().name, {}};
  } catch (const hubcache::TokenRejected&) {
    return {std::nullopt, "rejected by the Hub"};
  } catch (const hubcache::Error& error) {
    return {std::nullopt, std::string("not checked: ") + error.what()};
  }
}

nlohmann::json aws_json(const hubcache::aws::Setup& setup)
{
  auto null_or = [](const auto& value) { return value ? nlohmann::json(*value) : nlohmann::json(nullptr); };
  return {
    {"profile", setup.profile.name},
    {"profile_source", setup.profile.source},
    {"region", setup.region ? nlohmann::json(setup.region->name) : nlohmann::json(nullptr)},
    {"region_source", setup.region ? nlohmann::json(setup.region->source) : nlohmann::json(nullptr)},
    {"s3_endpoint", setup.s3_endpoint ? nlohmann::json(setup.s3_endpoint->url) : nlohmann::json(nullptr)},
    {"s3_endpoint_source", setup.s3_endpoint ? nlohmann::json(setup.s3_endpoint->source) : nlohmann::json(nullptr)},
    {"signed", setup.sign},
    {"credentials_checked", setup.checked},
    {"credentials_source", null_or(setup.credentials_source)},
    {"access_key_id", null_or(setup.access_key_id)},
    {"credentials_kind", null_or(setup.credentials_kind)},
    {"credentials_expiration", null_or(setup.expiration)},
    {"account", null_or(setup.account)},
    {"arn", null_or(setup.arn)},
    {"note", setup.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(setup.note)},
  };
}

// The AWS rows: each value and where it comes from; never a secret.
void add_aws_rows(Output::Table& table, const hubcache::aws::Setup& setup)
{
  auto row = [&table](const std::string& name, const std::string& value) { table.rows.push_back({name, value}); };
  auto from = [](const std::string& source) { return source == "default" ? " (default)" : " (from " + source + ")"; };
  row("AWS profile", setup.profile.name + from(setup.profile.source));
  if (setup.region) {
    row("AWS region", setup.region->name + from(setup.region->source));
  }
  if (setup.s3_endpoint) {
    row("S3 endpoint", setup.s3_endpoint->url + from(setup.s3_endpoint->source));
  }
  if (setup.credentials_source) {
    std::string credentials = *setup.access_key_id + ", " + *setup.credentials_kind;
    if (setup.expiration) {
      credentials += " until " + *setup.expiration;
    }
    row("AWS keys", credentials + ", from " + *setup.credentials_source);
  } else {
    row("AWS keys", setup.sign ? "- (" + setup.note + ")" : "none: requests unsigned (--no-sign-request)");
  }
  if (setup.account) {
    row("AWS account", *setup.account + (setup.arn && !setup.arn->empty() ? " (" + *setup.arn + ")" : ""));
  } else if (setup.credentials_source) {
    row("AWS account", "- (" + setup.note + ")");
  }
}

int run_config(Invocation& invocation)
{
  const auto& env = invocation.env();
  auto resolved = resolve_repo(invocation);
  auto config_file = hubcache::storage::custom_cache_config_path(env);
  auto own_file = hubcache::storage::own_config_path(env);
  std::string kind = resolved.spec.kind == hubcache::storage::RepoKind::hub         ? "hub"
                     : resolved.spec.kind == hubcache::storage::RepoKind::directory ? "directory"
                     : resolved.spec.kind == hubcache::storage::RepoKind::bucket    ? "bucket"
                                                                                    : "s3";

  auto endpoint = hubcache::hub::hub_endpoint(env);
  bool offline = hubcache::hub::hub_offline(env);
  auto token = hubcache::hub::locate_hub_token(env, invocation.value("token"));
  std::optional<std::string> token_source;
  if (token.value) {
    token_source = describe_token_origin(token.source, token.origin);
  }
  auto owner = token_owner(env, token);

  std::optional<std::string> cache_dir;
  std::optional<std::string> cache_dir_source;
  std::string cache_dir_from; // the same as people read it: "--cache-dir" rather than "option"
  std::optional<std::string> digest_cache;
  std::string cache_note;
  try {
    auto location = hubcache::compilecache::locate_cache(invocation.value("cache-dir"), env);
    cache_dir = location.display();
    cache_dir_source = hubcache::compilecache::to_string(location.source); // "option", as in every report
    cache_dir_from =
      location.source == hubcache::compilecache::RootSource::option ? std::string("--cache-dir") : *cache_dir_source;
    if (!location.store_url) {
      digest_cache = hubcache::compilecache::DigestCache::default_path(location.root.path, env).string();
    }
  } catch (const hubcache::Error& error) {
    cache_note = error.what();
  }
  auto compiler = installed_compiler();
  auto overrides = aws_overrides(invocation);
  bool aws_option = overrides.profile || overrides.region || overrides.endpoint_url || overrides.no_sign_request;
  bool uses_s3 =
    resolved.spec.kind == hubcache::storage::RepoKind::s3 || (cache_dir && cache_dir->starts_with("s3://"));
  auto aws = hubcache::aws::describe_setup(env, overrides, uses_s3 || aws_option);

  nlohmann::json data = {
    {"version", NEURON_CACHE_VERSION},
    {"repo", resolved.spec.canonical()},
    {"repo_kind", kind},
    // One field for where the repo came from: the file it names is config_file or own_config_file.
    {"repo_source", std::string(to_string(resolved.source))},
    {"config_file", config_file.string()},
    {"own_config_file", own_file.string()},
    {"hf_home", hubcache::hub::hf_home(env).string()},
    {"endpoint", endpoint},
    {"offline", offline},
    {"token_source", or_null(token_source)},
    {"token_user", or_null(owner.user)},
    {"cache_dir", or_null(cache_dir)},
    {"cache_dir_source", or_null(cache_dir_source)},
    {"digest_cache", or_null(digest_cache)},
    {"compiler_version", or_null(compiler.version)},
    {"aws", aws_json(aws)},
  };

  Output::Table table;
  auto row = [&table](const std::string& name, const std::string& value) { table.rows.push_back({name, value}); };
  row("Repo", resolved.spec.canonical() + " (" + kind + ")");
  row("Repo source", describe_repo_origin(resolved));
  row("Config file", config_file.string() + " (optimum-neuron's; Hub ids)");
  row("Own config", own_file.string() + " (neuron-cache's; directories and S3)");
  row("HF_HOME", hubcache::hub::hf_home(env).string());
  row("Endpoint", endpoint);
  row("Offline", offline ? "yes" : "no");
  row("Token", token_source ? "from " + *token_source : "none");
  row("Token user", owner.user ? *owner.user : "- (" + owner.note + ")");
  row("Compile cache", cache_dir ? *cache_dir + " (from " + cache_dir_from + ")" : "- (" + cache_note + ")");
  row("Digest cache", digest_cache.value_or("-"));
  row("neuronx-cc", compiler.version ? *compiler.version : "- (" + compiler.note + ")");
  add_aws_rows(table, aws);
  row("Version", std::string("neuron-cache ") + NEURON_CACHE_VERSION);
  std::string human;
  for (const auto& cells : table.rows) {
    auto label = cells[0] + ":";
    human += label + std::string(label.size() < 15 ? 15 - label.size() : 1, ' ') + cells[1] + "\n";
  }
  invocation.out().result(human, data, resolved.spec.canonical());
  return k_exit_ok;
}

} // namespace

CommandSpec make_config_command()
{
  CommandSpec command;
  command.name = "config";
  command.aliases = {"env"};
  command.summary = "Show the setup in effect: cache repo and why, Hub, token owner, compile cache, compiler, AWS.";
  command.description =
    "The repo is chosen as optimum-neuron chooses it, with neuron-cache's own file for the repos\n"
    "optimum cannot read: --repo-id, then $CUSTOM_CACHE_REPO, then ${XDG_CONFIG_HOME:-~/.config}/\n"
    "neuron-cache/repo (a directory or S3 repo written by 'set'), then $HF_HOME/optimum_neuron_custom_cache\n"
    "(a Hub id; HF_HOME defaults to $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface), then\n"
    "aws-neuron/optimum-neuron-cache. 'repo source' names the file the choice came from.\n"
    "The AWS rows show the profile, region and S3 endpoint with where each comes from; when an S3\n"
    "repo or compile cache is in use, or an AWS option is given, also the credentials (the access key\n"
    "id masked, as 'aws configure list' shows it; never the secret) and their account (STS\n"
    "GetCallerIdentity).";
  command.options = {
    repo_id_option(),
    cache_dir_option("The local compile cache to report on (default: as the Neuron SDK resolves it)."),
    token_option(),
  };
  for (auto& option : aws_options()) {
    command.options.push_back(std::move(option));
  }
  command.examples = {"neuron-cache config", "neuron-cache env --json", "neuron-cache config --profile team",
                      "CUSTOM_CACHE_REPO=/data/neuron-cache neuron-cache config -q"};
  command.run = run_config;
  return command;
}

} // namespace neuron_cache
