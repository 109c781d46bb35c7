#include "commands.hpp"

#include <hubcache/compilecache/compile_cache.hpp>
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

void warn_skipped_paths(const Output& out, hubcache::storage::Repository& repo)
{
  for (const auto& path : repo.take_skipped_paths()) {
    out.warning("skipped '" + path + "' in " + repo.spec() + ": not a path that can be installed safely");
  }
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
    }
  }
  return hubcache::storage::open_repository(spec, invocation.env(), options);
}

} // namespace neuron_cache
