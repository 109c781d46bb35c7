#include "commands.hpp"

#include <iostream>

#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/error.hpp>
#include <hubcache/hub/config.hpp>
#include <hubcache/storage/factory.hpp>

#include <filesystem>

namespace neuron_cache {

const std::vector<CommandSpec>& all_commands()
{
  static const std::vector<CommandSpec> commands = {
    make_create_command(), make_set_command(),  make_config_command(), make_synchronize_command(),
    make_push_command(),   make_pull_command(), make_status_command(), make_cleanup_command(),
    make_lookup_command(), make_list_command(), make_add_command(),    make_completion_command(),
    make_man_command(),
  };
  return commands;
}

void warn_skipped_paths(const Output& out, hubcache::storage::Repository& repo)
{
  for (const auto& item : repo.take_skipped()) {
    // Output::warning escapes control characters: the path goes as it is.
    out.warning("skipped '" + item.path + "' in " + repo.spec() + ": "
                + (item.reason.empty() ? "not a path that can be installed safely" : item.reason));
  }
}

OptionSpec cache_dir_option(const std::string& help)
{
  return {"", "cache-dir", ValueKind::directory, "DIR", help, {}, {}};
}

OptionSpec repo_id_option()
{
  return {"",
          "repo-id",
          ValueKind::repo,
          "REPO",
          "Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix "
          "(s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix]). Default: "
          "$CUSTOM_CACHE_REPO, then the name saved by 'set', then aws-neuron/optimum-neuron-cache.",
          {},
          {}};
}

OptionSpec token_option()
{
  return {
    "", "token", ValueKind::text, "TOKEN", "Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME).",
    {}, {}};
}

OptionSpec max_workers_option()
{
  return {"",
          "max-workers",
          ValueKind::integer,
          "N",
          "Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64).",
          {},
          {}};
}

OptionSpec no_xet_option()
{
  return {
    "", "no-xet", ValueKind::flag, "", "Move Hub files through Git LFS only, never Xet (as HF_HUB_DISABLE_XET=1).",
    {}, {}};
}

std::size_t max_workers(const Invocation& invocation)
{
  constexpr long long k_most = 64;
  auto workers =
    invocation.integer("max-workers", 1).value_or(static_cast<long long>(hubcache::hub::k_default_workers));
  if (workers > k_most) {
    throw UsageError("--max-workers is at most " + std::to_string(k_most) + " (got " + std::to_string(workers) + ")");
  }
  return static_cast<std::size_t>(workers);
}

std::vector<OptionSpec> aws_options()
{
  return {
    {"",
     "profile",
     ValueKind::text,
     "NAME",
     "AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI's.",
     {},
     {}},
    {"",
     "region",
     ValueKind::text,
     "REGION",
     "AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile's region, then us-east-1).",
     {},
     {}},
    {"",
     "endpoint-url",
     ValueKind::text,
     "URL",
     "S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the "
     "profile's endpoint_url, then AWS's for the region).",
     {},
     {}},
    {"",
     "no-sign-request",
     ValueKind::flag,
     "",
     "Send S3 requests unsigned, without looking for credentials: reads public buckets.",
     {},
     {}},
  };
}

hubcache::aws::Overrides aws_overrides(const Invocation& invocation)
{
  hubcache::aws::Overrides overrides;
  overrides.profile = invocation.value("profile");
  overrides.region = invocation.value("region");
  overrides.endpoint_url = invocation.value("endpoint-url");
  overrides.no_sign_request = invocation.has("no-sign-request");
  for (const auto& [value, name] :
       {std::pair{&overrides.profile, "--profile"}, std::pair{&overrides.region, "--region"},
        std::pair{&overrides.endpoint_url, "--endpoint-url"}}) {
    if (*value && value->value().empty()) {
      throw UsageError(std::string(name) + " needs a non-empty value");
    }
  }
  return overrides;
}

std::string printable_path(const std::filesystem::path& path)
{
  return hubcache::compilecache::printable(path.string());
}

hubcache::storage::RepoSpec parse_user_repo(const std::string& text)
{
  bool relative_directory = text == "." || text == ".." || text.starts_with("./") || text.starts_with("../");
  if (relative_directory) {
    std::error_code ec;
    auto absolute = std::filesystem::absolute(text, ec);
    if (ec) {
      throw hubcache::InvalidArgument("cannot make '" + text + "' an absolute path: " + ec.message());
    }
    return hubcache::storage::parse_repo_spec(absolute.lexically_normal().string());
  }
  return hubcache::storage::parse_repo_spec(text);
}

hubcache::storage::ResolvedRepo resolve_repo(Invocation& invocation, const std::optional<std::string>& fallback,
                                             const std::string& fallback_origin)
{
  hubcache::storage::ResolvedRepo resolved;
  if (auto option = invocation.value("repo-id")) {
    resolved = {parse_user_repo(*option), hubcache::storage::RepoSource::option, "--repo-id"};
  } else if (fallback) {
    resolved = {parse_user_repo(*fallback), hubcache::storage::RepoSource::option, fallback_origin};
  } else {
    resolved = hubcache::storage::resolve_repo(std::nullopt, invocation.env());
  }
  invocation.context().repo = resolved;
  return resolved;
}

hubcache::storage::ResolvedRepo repo_from_argument(Invocation& invocation, const std::string& text,
                                                   const std::string& argument_name)
{
  hubcache::storage::ResolvedRepo resolved{parse_user_repo(text), hubcache::storage::RepoSource::option,
                                           "the " + argument_name + " argument"};
  invocation.context().repo = resolved;
  return resolved;
}

std::unique_ptr<hubcache::storage::Repository> open_repository(Invocation& invocation,
                                                               const hubcache::storage::RepoSpec& spec)
{
  hubcache::storage::BackendOptions options;
  options.aws = aws_overrides(invocation);
  for (const auto& option : invocation.command().options) {
    if (option.long_name == "token") {
      options.token = invocation.value("token");
    }
    if (option.long_name == "max-workers") {
      options.max_workers = max_workers(invocation);
    }
    if (option.long_name == "no-xet") {
      options.no_xet = invocation.has("no-xet");
    }
  }
  if (spec.kind == hubcache::storage::RepoKind::hub || spec.kind == hubcache::storage::RepoKind::bucket) {
    auto token = hubcache::hub::locate_hub_token(invocation.env(), options.token);
    invocation.context().token_source = token.source;
    invocation.context().token_origin = token.origin;
  }
  return hubcache::storage::open_repository(spec, invocation.env(), options);
}

std::unique_ptr<hubcache::storage::Repository> open_existing_repository(Invocation& invocation,
                                                                        const hubcache::storage::ResolvedRepo& resolved)
{
  invocation.context().repo = resolved;
  auto repo = open_repository(invocation, resolved.spec);
  if (!repo->exists()) {
    const auto& directory = resolved.spec.directory;
    std::error_code ec;
    if (resolved.spec.kind == hubcache::storage::RepoKind::directory && std::filesystem::is_directory(directory, ec)
        && !std::filesystem::is_empty(directory, ec)) {
      throw hubcache::NotACacheRepo(directory.string() + " exists but is not a neuron-cache repo",
                                    hubcache::ErrorFacts{resolved.spec.canonical()});
    }
    bool token_sent = invocation.context().token_source != hubcache::hub::TokenSource::none;
    throw hubcache::RepoNotFound("the cache repo " + resolved.spec.canonical() + " does not exist or is not readable",
                                 hubcache::ErrorFacts{resolved.spec.canonical(), token_sent, false});
  }
  return repo;
}

bool confirm(const std::string& question)
{
  std::cerr << question << " [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) {
    return false;
  }
  return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES" || answer == "Yes";
}

} // namespace neuron_cache
