#pragma once
// The command line as the completion scripts and the man page see it, read from the
// same CommandSpec/OptionSpec table that parses and documents it, so they cannot drift.

#include "cli.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace neuron_cache::completion {

inline std::string underscore_twin_of(const std::string& long_name)
{
  OptionSpec spec;
  spec.long_name = long_name;
  return spec.underscore_twin();
}

// Every long name the parser accepts, without dashes: the kebab-case name, its
// underscore twin (optimum's spelling), each alias and the alias's twin.
inline std::vector<std::string> long_names(const OptionSpec& option)
{
  std::vector<std::string> names{option.long_name};
  auto add = [&](const std::string& name) {
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  };
  add(option.underscore_twin());
  for (const auto& alias : option.aliases) {
    add(alias);
    add(underscore_twin_of(alias));
  }
  return names;
}

// Every spelling with its dashes: "-n", "--name", "--repo_id", ...
inline std::vector<std::string> dashed_names(const OptionSpec& option)
{
  std::vector<std::string> names;
  if (!option.short_name.empty()) {
    names.push_back("-" + option.short_name);
  }
  for (const auto& name : long_names(option)) {
    names.push_back("--" + name);
  }
  return names;
}

inline bool takes_value(const OptionSpec& option)
{
  return option.kind != ValueKind::flag;
}

// The commands as a shell sees them: each alias ("sync", "env") completes like the command
// it names, so every script is generated from this list rather than from all_commands().
inline const std::vector<CommandSpec>& completion_commands()
{
  static const std::vector<CommandSpec> commands = [] {
    std::vector<CommandSpec> all = all_commands();
    for (const auto& command : all_commands()) {
      for (const auto& alias : command.aliases) {
        CommandSpec twin = command;
        twin.name = alias;
        twin.aliases.clear();
        twin.summary = "Alias of " + command.name + ": " + command.summary;
        all.push_back(std::move(twin));
      }
    }
    return all;
  }();
  return commands;
}

// Options a subcommand accepts: its own, then the common ones.
inline std::vector<const OptionSpec*> options_of(const CommandSpec& command)
{
  std::vector<const OptionSpec*> all;
  for (const auto& option : command.options) {
    all.push_back(&option);
  }
  for (const auto* option : common_options_of(command)) {
    all.push_back(option);
  }
  return all;
}

// Options accepted before the subcommand (main.cpp): --version, --help and the output options.
inline const std::vector<OptionSpec>& global_options()
{
  static const std::vector<OptionSpec> options = [] {
    std::vector<OptionSpec> all = {
      {"V", "version", ValueKind::flag, "", "Print the version and exit.", {}, {}},
      {"h", "help", ValueKind::flag, "", "Show the list of commands and exit.", {}, {}},
    };
    for (const auto& option : common_options()) {
      if (option.long_name != "help") {
        all.push_back(option);
      }
    }
    return all;
  }();
  return options;
}

// The pseudo-command `neuron-cache help COMMAND` (main.cpp).
inline constexpr const char* k_help_command = "help";
inline constexpr const char* k_help_summary = "Show a command's options and examples.";

// `add -- COMMAND...`: a command that runs another takes it after a bare `--`.
inline bool runs_shell_command(const CommandSpec& command)
{
  return std::any_of(command.positionals.begin(), command.positionals.end(),
                     [](const PositionalSpec& positional) { return positional.kind == ValueKind::shell_command; });
}

// Positionals typed before any `--` (the shell command after `--` is not one of them).
inline std::vector<const PositionalSpec*> plain_positionals(const CommandSpec& command)
{
  std::vector<const PositionalSpec*> plain;
  for (const auto& positional : command.positionals) {
    if (positional.kind != ValueKind::shell_command) {
      plain.push_back(&positional);
    }
  }
  return plain;
}

// "Cache repo to use: a Hub id. Default: ..." -> "Cache repo to use: a Hub id": completion
// menus show one short line.
inline std::string first_sentence(const std::string& text)
{
  std::string flat;
  for (char c : text) {
    flat += (c == '\n' || c == '\t') ? ' ' : c;
  }
  int depth = 0; // "(see. this)" and "e.g. that" do not end a sentence
  for (std::size_t at = 0; at + 1 < flat.size(); ++at) {
    depth += flat[at] == '(' ? 1 : (flat[at] == ')' ? -1 : 0);
    bool abbreviation = at >= 3 && (flat.compare(at - 3, 3, "e.g") == 0 || flat.compare(at - 3, 3, "i.e") == 0);
    if (depth <= 0 && flat[at] == '.' && flat[at + 1] == ' ' && !abbreviation) {
      flat.resize(at);
      break;
    }
  }
  while (!flat.empty() && (flat.back() == '.' || flat.back() == ' ')) {
    flat.pop_back();
  }
  return flat;
}

// Where the dynamic values come from; the scripts read these files themselves, never the network.
// Repo ids: the name `set` saved, as optimum-neuron resolves HF_HOME.
inline constexpr const char* k_repo_config_shell_path =
  "${HF_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/huggingface}/optimum_neuron_custom_cache";
// ... and neuron-cache's own choice (directory and S3 repos).
inline constexpr const char* k_own_repo_config_shell_path = "${XDG_CONFIG_HOME:-$HOME/.config}/neuron-cache/repo";
// Model ids: one per line, written by `list` from the last listing of the current repo.
inline constexpr const char* k_models_cache_shell_path =
  "${XDG_CACHE_HOME:-$HOME/.cache}/neuron-cache/completion/models.txt";

} // namespace neuron_cache::completion
