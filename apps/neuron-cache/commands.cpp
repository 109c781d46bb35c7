#include "commands.hpp"

#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/hub/config.hpp>
#include <hubcache/storage/factory.hpp>

namespace neuron_cache {

const std::vector<CommandSpec>& all_commands()
{
  static const std::vector<CommandSpec> commands = {
    make_create_command(),     make_set_command(),  make_config_command(),
    make_synchronize_command(), make_status_command(), make_cleanup_command(),
    make_lookup_command(),     make_list_command(),
    make_add_command(),        make_completion_command(), make_man_command(),
  };
  return commands;
}

OptionSpec repo_id_option()
{
  return {"", "repo-id", ValueKind::repo, "REPO",
          "Cache repo to use: a Hub id (org/name) or a directory (/path, file:///path). Default: "
          "$CUSTOM_CACHE_REPO, then the name saved by 'set', then aws-neuron/optimum-neuron-cache.",
          {}, {}};
}

OptionSpec token_option()
{
  return {"", "token", ValueKind::text, "TOKEN",
          "Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME).", {}, {}};
}

OptionSpec max_workers_option()
{
  return {"", "max-workers", ValueKind::integer, "N",
          "Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64).", {},
          {}};
}

std::size_t max_workers(const Invocation& invocation)
{
  constexpr long long k_most = 64;
  auto workers = invocation.integer("max-workers", 1).value_or(static_cast<long long>(hubcache::hub::k_default_workers));
  if (workers > k_most) {
    throw UsageError("--max-workers is at most " + std::to_string(k_most) + " (got " + std::to_string(workers) + ")");
  }
  return static_cast<std::size_t>(workers);
}

std::string printable_path(const std::filesystem::path& path)
{
  return hubcache::compilecache::printable(path.string());
}

hubcache::storage::ResolvedRepo resolve_repo(const Invocation& invocation)
{
  return hubcache::storage::resolve_repo(invocation.value("repo-id"), invocation.env());
}

std::unique_ptr<hubcache::storage::Repository> open_repository(const Invocation& invocation, const hubcache::storage::RepoSpec& spec)
{
  hubcache::storage::BackendOptions options;
  if (invocation.command().name != "config") {
    for (const auto& option : invocation.command().options) {
      if (option.long_name == "token") {
        options.token = invocation.value("token");
      }
      if (option.long_name == "max-workers") {
        options.max_workers = max_workers(invocation);
      }
    }
  }
  return hubcache::storage::open_repository(spec, invocation.env(), options);
}

} // namespace neuron_cache
