// `neuron-cache set NAME`: remember the cache repo to use on this host.
#include "commands.hpp"

#include <hubcache/error.hpp>
#include <hubcache/storage/repo_spec.hpp>

namespace neuron_cache {

namespace {

int run_set(Invocation& invocation)
{
  auto positional = invocation.positional("NAME");
  auto option = invocation.value("name");
  if (positional && option && *positional != *option) {
    throw UsageError("give the repo name once, either as NAME or with --name");
  }
  if (!positional && !option) {
    throw UsageError("missing argument NAME");
  }
  auto resolved = repo_from_argument(invocation, positional ? *positional : *option, positional ? "NAME" : "--name");
  auto repo = open_existing_repository(invocation, resolved);

  const auto& env = invocation.env();
  auto config_file = hubcache::storage::custom_cache_config_path(env);
  std::optional<std::string> previous;
  try {
    previous = hubcache::storage::read_custom_cache_repo(config_file);
  } catch (const hubcache::ConfigError&) {
    // A broken config file is exactly what `set` repairs.
  }
  auto name = repo->spec();
  if (previous && *previous != name) {
    invocation.out().warning("A custom cache repo was already registered: " + *previous
                             + ". It will be overwritten to " + name + ".");
  }
  hubcache::storage::write_custom_cache_repo(config_file, name);
  invocation.out().result("Neuron cache name set locally to " + name + " in " + config_file.string() + ".",
                          {{"repo", name}, {"config_file", config_file.string()},
                           {"previous", previous ? nlohmann::json(*previous) : nlohmann::json(nullptr)}},
                          name);
  return k_exit_ok;
}

} // namespace

CommandSpec make_set_command()
{
  CommandSpec command;
  command.name = "set";
  command.summary = "Set the cache repo to use on this host (checks that it exists).";
  command.description = "Writes NAME to $HF_HOME/optimum_neuron_custom_cache, the file optimum-neuron reads too.";
  command.positionals = {
    {"NAME", ValueKind::repo, "The cache repo: org/name, a directory (/abs/path, ./rel/path, file:///abs/path).", false}};
  command.options = {{"n", "name", ValueKind::repo, "NAME", "Same as the NAME argument (optimum v0.0.4 form).", {}, {}},
                     token_option()};
  command.examples = {"neuron-cache set my-org/optimum-neuron-cache", "neuron-cache set /fsx/neuron-cache-repo",
                      "neuron-cache set ./neuron-cache-repo",
                      "neuron-cache set file:///fsx/neuron-cache-repo --json"};
  command.run = run_set;
  return command;
}


} // namespace neuron_cache
