// `neuron-cache set NAME`: remember the cache repo to use on this host.
#include "commands.hpp"

#include <hubcache/error.hpp>
#include <hubcache/storage/repo_choice.hpp>

namespace neuron_cache {

namespace {

// `set` alone says which repo this host uses and why, as `git config` does for a key.
int show_current(Invocation& invocation)
{
  auto resolved = hubcache::storage::resolve_repo(std::nullopt, invocation.env());
  auto name = resolved.spec.canonical();
  std::string origin = resolved.origin.empty() ? std::string(hubcache::storage::to_string(resolved.source))
                                               : printable_path(resolved.origin);
  invocation.out().result(
    "Cache repo: " + name + " (from " + origin + ")",
    {{"repo", name}, {"source", hubcache::storage::to_string(resolved.source)}, {"origin", resolved.origin}}, name);
  return k_exit_ok;
}

int run_unset(Invocation& invocation)
{
  auto removed = hubcache::storage::forget_repo_choice(invocation.env());
  auto now = hubcache::storage::resolve_repo(std::nullopt, invocation.env());
  nlohmann::json files = nlohmann::json::array();
  for (const auto& file : removed) {
    files.push_back(file.string());
  }
  std::string human = removed.empty() ? "No cache repo was set on this host." : "Cache repo choice removed.";
  human += " This host now uses " + now.spec.canonical() + " ("
           + (now.origin.empty() ? std::string(hubcache::storage::to_string(now.source)) : now.origin) + ").";
  invocation.out().result(human, {{"removed", files}, {"repo", now.spec.canonical()}}, now.spec.canonical());
  return k_exit_ok;
}

int run_set(Invocation& invocation)
{
  auto positional = invocation.positional("NAME");
  auto option = invocation.value("name");
  if (positional && option && *positional != *option) {
    throw UsageError("give the repo name once, either as NAME or with --name");
  }
  if (invocation.has("unset")) {
    if (positional || option) {
      throw UsageError("--unset takes no NAME");
    }
    return run_unset(invocation);
  }
  if (!positional && !option) {
    return show_current(invocation);
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
  command.summary = "Set the cache repo to use on this host (checks that it exists); alone, show it.";
  command.description =
    "A Hub repo is written to $HF_HOME/optimum_neuron_custom_cache, the file optimum-neuron reads too\n"
    "(byte for byte), and clears neuron-cache's own choice. A directory or S3 repo is written to\n"
    "${XDG_CONFIG_HOME:-~/.config}/neuron-cache/repo, leaving optimum's file untouched: optimum-neuron\n"
    "reads that file as a Hub id.\n"
    "Without NAME, prints the repo this host uses and where that comes from; --unset removes the choice.";
  command.positionals = {{"NAME", ValueKind::repo,
                          "The cache repo: org/name, a directory (/abs/path, ./rel/path, file:///abs/path) or "
                          "s3://bucket/prefix or hf://buckets/ns/name.",
                          false}};
  command.options = {{"n", "name", ValueKind::repo, "NAME", "Same as the NAME argument (optimum v0.0.4 form).", {}, {}},
                     {"", "unset", ValueKind::flag, "", "Remove the recorded choice (both files).", {}, {}},
                     token_option()};
  command.examples = {"neuron-cache set", "neuron-cache set my-org/optimum-neuron-cache",
                      "neuron-cache set /fsx/neuron-cache-repo", "neuron-cache set ./neuron-cache-repo",
                      "neuron-cache set s3://my-bucket/neuron-cache --json"};
  command.run = run_set;
  return command;
}

} // namespace neuron_cache
