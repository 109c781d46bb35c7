// `neuron-cache config`: which cache repo is in effect, and why.
#include "commands.hpp"

#include <hubcache/hub/config.hpp>
#include <hubcache/util/environment.hpp>
#include <hubcache/storage/repo_spec.hpp>

namespace neuron_cache {

namespace {

int run_config(Invocation& invocation)
{
  const auto& env = invocation.env();
  auto resolved = resolve_repo(invocation);
  auto config_file = hubcache::storage::custom_cache_config_path(env);
  auto own_file = hubcache::storage::own_config_path(env);
  std::string kind = resolved.spec.kind == hubcache::storage::RepoKind::hub         ? "hub"
                     : resolved.spec.kind == hubcache::storage::RepoKind::directory ? "directory"
                                                                                    : "s3";

  std::string human;
  human += "repo:         " + resolved.spec.canonical() + "\n";
  human += "repo kind:    " + kind + "\n";
  human += "repo source:  " + std::string(to_string(resolved.source));
  if (resolved.source != hubcache::storage::RepoSource::default_value) {
    human += " (" + resolved.origin + ")";
  }
  human += "\nconfig file:  " + config_file.string() + " (optimum-neuron's; Hub ids)\n";
  human += "own config:   " + own_file.string() + " (neuron-cache's; directories and S3)\n";
  human += "HF_HOME:      " + hubcache::hub::hf_home(env).string() + "\n";

  nlohmann::json data = {{"repo", resolved.spec.canonical()},
                         {"kind", kind},
                         {"source", to_string(resolved.source)},
                         {"origin", resolved.origin},
                         {"config_file", config_file.string()},
                         {"own_config_file", own_file.string()},
                         {"hf_home", hubcache::hub::hf_home(env).string()}};
  invocation.out().result(human, data, resolved.spec.canonical());
  return k_exit_ok;
}

} // namespace

CommandSpec make_config_command()
{
  CommandSpec command;
  command.name = "config";
  command.summary = "Show the cache repo in effect and where that choice comes from.";
  command.description =
    "The repo is chosen as optimum-neuron chooses it, with neuron-cache's own file for the repos\n"
    "optimum cannot read: --repo-id, then $CUSTOM_CACHE_REPO, then ${XDG_CONFIG_HOME:-~/.config}/\n"
    "neuron-cache/repo (a directory or S3 repo written by 'set'), then $HF_HOME/optimum_neuron_custom_cache\n"
    "(a Hub id; HF_HOME defaults to $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface), then\n"
    "aws-neuron/optimum-neuron-cache. 'repo source' names the file the choice came from.";
  command.options = {repo_id_option()};
  command.examples = {"neuron-cache config", "neuron-cache config --json",
                      "CUSTOM_CACHE_REPO=/data/neuron-cache neuron-cache config -q"};
  command.run = run_config;
  return command;
}


} // namespace neuron_cache
