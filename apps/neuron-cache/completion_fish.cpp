// The fish completion script: a fixed engine and one complete line per option.
#include "completion_scripts.hpp"

#include <sstream>

namespace neuron_cache::completion {

namespace {

// ---------------------------------------------------------------------------- fish

constexpr const char* k_fish_engine = R"FISH(
# The line before the cursor, as two values: the subcommand (- when none yet), then
# where the current word stands: a positional index, "value" (an option's value) or
# "after-dash" (the command given after a bare --).
function __neuron_cache_state
    set -l tokens (commandline -opc)
    set -l command -
    set -l positional 0
    set -l pending 0
    for token in $tokens[2..-1]
        if test $pending = 1
            set pending 0
            continue
        end
        if test "$command" != - -a "x$token" = x--; and __neuron_cache_runs_command $command
            echo $command
            echo after-dash
            return
        end
        if string match -q -- '--*=*' $token
            continue
        end
        if string match -qr -- '^-.' $token
            __neuron_cache_takes_value $command $token; and set pending 1
            continue
        end
        if test "$command" = -
            set command $token
        else
            set positional (math $positional + 1)
        end
    end
    echo $command
    if test $pending = 1
        echo value
    else
        echo $positional
    end
end

function __neuron_cache_needs_command
    set -l state (__neuron_cache_state)
    test "$state[1]" = - -a "$state[2]" = 0
end

function __neuron_cache_using --argument-names command
    set -l state (__neuron_cache_state)
    test "$state[1]" = "$command" -a "$state[2]" != after-dash
end

function __neuron_cache_positional --argument-names command index
    set -l state (__neuron_cache_state)
    test "$state[1]" = "$command" -a "$state[2]" = "$index"
end

function __neuron_cache_after_dash
    set -l state (__neuron_cache_state)
    test "$state[2]" = after-dash
end

# The current word without a leading --option= part.
function __neuron_cache_word
    string replace -r -- '^--[^=]*=' '' (commandline -ct)
end

# Cache repos the user already named: the one `set` saved, and $CUSTOM_CACHE_REPO.
# A path (/..., ~..., file:///...) completes as a directory.
function __neuron_cache_repos
    set -l word (__neuron_cache_word)
    switch "$word"
        case '/*' '~*'
            __fish_complete_directories $word 'Directory repo'
            return
        case 'file://*'
            for dir in (__fish_complete_directories (string replace -- file:// '' $word) 'Directory repo')
                echo file://$dir
            end
            return
    end
    set -l home $HF_HOME
    if test -z "$home"
        set home $XDG_CACHE_HOME
        test -n "$home"; or set home $HOME/.cache
        set home $home/huggingface
    end
    set -l file (string replace -r -- '^~/' "$HOME/" $home)/optimum_neuron_custom_cache
    set -l repos
    set -l config $XDG_CONFIG_HOME
    test -n "$config"; or set config $HOME/.config
    if test -r $config/neuron-cache/repo
        read -l name <$config/neuron-cache/repo
        set -a repos (string trim -- $name)
    end
    if test -r $file
        read -l name <$file
        set -a repos (string trim -- $name)
    end
    set -q CUSTOM_CACHE_REPO; and set -a repos $CUSTOM_CACHE_REPO
    set -l seen
    for repo in $repos
        if test -n "$repo"; and not contains -- $repo $seen
            set -a seen $repo
            printf '%s\tCache repo\n' $repo
        end
    end
end

# Model ids from the listing `neuron-cache list` keeps of the current repo, else a
# local model directory or config.json.
function __neuron_cache_models
    set -l word (__neuron_cache_word)
    set -l base $XDG_CACHE_HOME
    test -n "$base"; or set base $HOME/.cache
    set -l file $base/neuron-cache/completion/models.txt
    if not string match -qr -- '^[/.~]' $word; and test -r $file
        set -l models (string match -rv -- '^\s*$' <$file)
        if string match -q -- "$word*" $models
            printf '%s\tModel id\n' $models
            return
        end
    end
    __fish_complete_path $word
end

# After a bare --: the command to run, completed as fish completes it anywhere.
function __neuron_cache_shell_command
    set -l tokens (commandline -opc) (commandline -ct)
    set -l dash (contains -i -- -- $tokens)
    complete -C (string join ' ' -- (string escape -- $tokens[(math $dash + 1)..-1]))
end
)FISH";

std::string fish_value_flags(ValueKind kind, const std::vector<std::string>& choices)
{
  switch (kind) {
  case ValueKind::flag: return "";
  case ValueKind::choice: {
    std::vector<std::string> words;
    for (const auto& choice : choices) {
      words.push_back(sh_word(choice));
    }
    return " -x -a " + fish_quote(join(words));
  }
  case ValueKind::file: return " -r -F";
  case ValueKind::directory: return " -x -a '(__fish_complete_directories (__neuron_cache_word))'";
  case ValueKind::repo: return " -x -a '(__neuron_cache_repos)'";
  case ValueKind::model: return " -x -a '(__neuron_cache_models)'";
  case ValueKind::shell_command: return " -x -a '(__fish_complete_command)'";
  case ValueKind::text:
  case ValueKind::integer: return " -x";
  }
  return " -x";
}

std::string fish_option(const std::string& condition, const OptionSpec& option)
{
  std::string line = "complete -c neuron-cache -n " + fish_quote(condition);
  if (!option.short_name.empty()) {
    line += " -s " + option.short_name;
  }
  for (const auto& name : long_names(option)) {
    line += " -l " + name;
  }
  return line + " -d " + fish_quote(first_sentence(option.help)) + fish_value_flags(option.kind, option.choices) + "\n";
}

// __neuron_cache_takes_value: which options of which command take a value.
std::string fish_takes_value_function()
{
  std::vector<std::string> patterns;
  for (const auto& command : completion_commands()) {
    for (const auto& option : command.options) {
      if (takes_value(option)) {
        for (const auto& name : dashed_names(option)) {
          patterns.push_back(fish_quote(command.name + ":" + name));
        }
      }
    }
  }
  for (const auto& option : global_options()) {
    if (takes_value(option)) {
      for (const auto& name : dashed_names(option)) {
        patterns.push_back(fish_quote("*:" + name));
      }
    }
  }
  return "# Options of command $1 that take a value ($1 is - before the command).\n"
         "function __neuron_cache_takes_value --argument-names command option\n"
         "    switch \"$command:$option\"\n"
         "        case "
         + join(patterns) + "\n            return 0\n    end\n    return 1\nend\n\n";
}

// The functions the completions below call: which command runs another, where the
// common options are allowed, and the engine that reads the command line.
std::string fish_functions()
{
  std::ostringstream out;
  out << fish_takes_value_function();
  out << "# Commands that run another command given after a bare --.\n"
      << "function __neuron_cache_runs_command --argument-names command\n"
      << "    contains -- $command";
  for (const auto& command : completion_commands()) {
    if (runs_shell_command(command)) {
      out << " " << fish_quote(command.name);
    }
  }
  out << "\nend\n" << k_fish_engine << "\n";

  out << "# The common options: before the command or after a known one, not after --.\n"
      << "function __neuron_cache_options_allowed\n"
      << "    set -l state (__neuron_cache_state)\n"
      << "    test \"$state[2]\" != after-dash; and contains -- $state[1] -";
  for (const auto& command : completion_commands()) {
    out << " " << fish_quote(command.name);
  }
  out << "\nend\n\n";
  return out.str();
}

// What completes before a command, everywhere, and after `help`.
std::string fish_top_level()
{
  std::ostringstream out;
  out << "complete -c neuron-cache -f\n\n# Before the command\n";
  for (const auto& command : completion_commands()) {
    out << "complete -c neuron-cache -n __neuron_cache_needs_command -a " << fish_quote(command.name) << " -d "
        << fish_quote(first_sentence(command.summary)) << "\n";
  }
  out << "complete -c neuron-cache -n __neuron_cache_needs_command -a " << k_help_command << " -d "
      << fish_quote(first_sentence(k_help_summary)) << "\n";
  for (const auto* option : global_only_options()) {
    out << fish_option("__neuron_cache_needs_command", *option);
  }
  out << "\n# Everywhere but after --\n";
  for (const auto& option : common_options()) {
    out << fish_option("__neuron_cache_options_allowed", option);
  }
  out << "\n# help COMMAND\n";
  for (const auto& command : completion_commands()) {
    out << "complete -c neuron-cache -n '__neuron_cache_positional help 0' -a " << fish_quote(command.name) << " -d "
        << fish_quote(first_sentence(command.summary)) << "\n";
  }
  return out.str();
}

// One command's options, positionals and, for add, the command after --.
std::string fish_command(const CommandSpec& command)
{
  std::ostringstream out;
  out << "\n# " << command.name << "\n";
  std::string using_command = "__neuron_cache_using " + sh_word(command.name);
  for (const auto& option : command.options) {
    out << fish_option(using_command, option);
  }
  for (const auto* option : command_forms_of_common(command)) {
    // The long name is completed everywhere already: only the command's short form here.
    out << "complete -c neuron-cache -n " << fish_quote(using_command) << " -s " << option->short_name << " -d "
        << fish_quote(first_sentence(option->help)) << fish_value_flags(option->kind, option->choices) << "\n";
  }
  auto positionals = plain_positionals(command);
  for (std::size_t index = 0; index < positionals.size(); ++index) {
    const auto& positional = *positionals[index];
    if (positional.kind == ValueKind::flag || positional.kind == ValueKind::text
        || positional.kind == ValueKind::integer) {
      continue;
    }
    std::string flags = fish_value_flags(positional.kind, positional.choices);
    // -x/-r describe an option's value; a positional only needs its candidates.
    flags = replace_all(replace_all(flags, " -x", ""), " -r", "");
    out << "complete -c neuron-cache -n "
        << fish_quote("__neuron_cache_positional " + sh_word(command.name) + " " + std::to_string(index)) << flags
        << " -d " << fish_quote(first_sentence(positional.help)) << "\n";
  }
  if (runs_shell_command(command)) {
    out << "complete -c neuron-cache -n __neuron_cache_after_dash -a '(__neuron_cache_shell_command)'\n";
  }
  return out.str();
}

} // namespace

std::string fish_script()
{
  std::string script = "# fish completion for neuron-cache. Generated from its option table by\n"
                       "# `neuron-cache completion fish`: do not edit; regenerate with `make completions`.\n"
                       "# Turn it on: neuron-cache completion fish > ~/.config/fish/completions/neuron-cache.fish\n\n";
  script += fish_functions();
  script += fish_top_level();
  for (const auto& command : completion_commands()) {
    script += fish_command(command);
  }
  return script;
}

} // namespace neuron_cache::completion
