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
  auto previous = hubcache::storage::recorded_repo_choice(env);
  auto name = repo->spec();
  if (previous && *previous != name) {
    invocation.out().warning("A custom cache repo was already registered: " + *previous + ". It will be overwritten to "
                             + name + ".");
  }
  // Hub ids go to optimum-neuron's file; directories and S3 to neuron-cache's own, which
  // optimum-neuron never reads.
  auto config_file = hubcache::storage::record_repo_choice(resolved.spec, name, env);
  invocation.out().result("Neuron cache name set locally to " + name + " in " + config_file.string() + ".",
                          {{"repo", name},
                           {"config_file", config_file.string()},
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
  command.description =
    "A Hub repo is written to $HF_HOME/optimum_neuron_custom_cache, the file optimum-neuron reads too\n"
    "(byte for byte), and clears neuron-cache's own choice. A directory or S3 repo is written to\n"
    "${XDG_CONFIG_HOME:-~/.config}/neuron-cache/repo, leaving optimum's file untouched: optimum-neuron\n"
    "reads that file as a Hub id.";
  command.positionals = {{"NAME", ValueKind::repo,
                          "The cache repo: org/name, a directory (/abs/path, ./rel/path, file:///abs/path) or "
                          "s3://bucket/prefix.",
                          false}};
  command.options = {{"n", "name", ValueKind::repo, "NAME", "Same as the NAME argument (optimum v0.0.4 form).", {}, {}},
                     token_option()};
  command.examples = {"neuron-cache set my-org/optimum-neuron-cache", "neuron-cache set /fsx/neuron-cache-repo",
                      "neuron-cache set ./neuron-cache-repo", "neuron-cache set s3://my-bucket/neuron-cache --json"};
  command.run = run_set;
  return command;
}

} // namespace neuron_cache
