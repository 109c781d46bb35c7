// `neuron-cache completion bash|zsh|fish`: a completion script generated from the
// option table (completion_model.hpp), so completion never drifts from the parser.
// Dynamic values come from small local files only: a completion never spawns the
// binary and never touches the network.
#include "commands.hpp"
#include "completion_scripts.hpp"

namespace neuron_cache {

namespace {

using namespace completion;

const std::vector<std::string> k_shells = {"bash", "zsh", "fish"};

// ------------------------------------------------------------------------- command

int run_completion(Invocation& invocation)
{
  auto shell = invocation.positional("SHELL").value_or("");
  if (shell == "bash") {
    invocation.out().raw(bash_script());
  } else if (shell == "zsh") {
    invocation.out().raw(zsh_script());
  } else if (shell == "fish") {
    invocation.out().raw(fish_script());
  } else {
    throw UsageError("unknown shell '" + shell + "'; choose one of " + join(k_shells, ", "));
  }
  return k_exit_ok;
}

} // namespace

CommandSpec make_completion_command()
{
  CommandSpec command;
  command.name = "completion";
  command.summary = "Print the shell completion script for bash, zsh or fish.";
  command.description =
    "Completes commands, options (and their underscore twins such as --repo_id), choices, paths,\n"
    "the cache repo saved by 'set' and the model ids of the last 'list'. It reads local files only:\n"
    "no network, no process. Installed builds already ship these scripts in the standard places.";
  command.positionals = {{"SHELL", ValueKind::choice, "bash, zsh or fish.", true, k_shells}};
  command.examples = {"source <(neuron-cache completion bash)            # in ~/.bashrc",
                      "neuron-cache completion zsh > ~/.zfunc/_neuron-cache  # with fpath+=(~/.zfunc) before compinit",
                      "neuron-cache completion fish > ~/.config/fish/completions/neuron-cache.fish"};
  command.run = run_completion;
  return command;
}

} // namespace neuron_cache
