// The zsh completion script: one _arguments function per command.
#include "completion_scripts.hpp"

#include <sstream>

namespace neuron_cache::completion {

namespace {

// ----------------------------------------------------------------------------- zsh

constexpr const char* k_zsh_helpers = R"ZSH(
# Directories only (_files -/ also offers files when asked for directories).
(( $+functions[_neuron_cache_directories] )) ||
_neuron_cache_directories() {
  local expl
  _wanted directories expl directory _path_files -/
}

# Cache repos the user already named: the one `set` saved, and $CUSTOM_CACHE_REPO.
# A path (/..., ~..., file:///...) completes as a directory.
(( $+functions[_neuron_cache_repos] )) ||
_neuron_cache_repos() {
  if [[ $PREFIX == (/|\~)* ]]; then
    _neuron_cache_directories
    return
  fi
  if [[ $PREFIX == file://* ]]; then
    compset -P 'file://'
    _neuron_cache_directories
    return
  fi
  local file=__REPO_CONFIG__ own=${XDG_CONFIG_HOME:-$HOME/.config}/neuron-cache/repo
  local name own_name
  local -a repos expl
  file=${file/#\~\//$HOME/}
  [[ -r $own ]] && read -r own_name <$own
  [[ -n $own_name ]] && repos+=($own_name)
  [[ -r $file ]] && read -r name <$file
  [[ -n $name ]] && repos+=($name)
  [[ -n $CUSTOM_CACHE_REPO ]] && repos+=($CUSTOM_CACHE_REPO)
  repos=(${(u)repos})
  _wanted repos expl 'cache repo' compadd -a - repos
}

# Model ids from the listing `neuron-cache list` keeps of the current repo, else a
# local model directory or config.json.
(( $+functions[_neuron_cache_models] )) ||
_neuron_cache_models() {
  local file=__MODELS_CACHE__
  local model
  local -a models expl
  if [[ $PREFIX != (/|.|\~)* && -r $file ]]; then
    while IFS= read -r model || [[ -n $model ]]; do
      [[ -n $model ]] && models+=($model)
    done <$file
    _wanted models expl 'model id' compadd -a - models && return
  fi
  _files
}
)ZSH";

// Text inside an _arguments [description], itself inside single quotes.
std::string zsh_description(const std::string& text)
{
  std::string escaped;
  for (char c : first_sentence(text)) {
    if (c == '\\' || c == '[' || c == ']') {
      escaped += '\\';
    }
    escaped += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return escaped;
}

std::string zsh_colon_escaped(const std::string& text)
{
  std::string escaped;
  for (char c : text) {
    if (c == ':' || c == '\\') {
      escaped += '\\';
    }
    escaped += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return escaped;
}

// The ":MESSAGE:ACTION" tail of an option or positional spec, without quotes.
std::string zsh_value_spec(ValueKind kind, const std::string& value_name, const std::vector<std::string>& choices)
{
  std::string message = zsh_colon_escaped(value_name.empty() ? "value" : value_name);
  std::string action;
  switch (kind) {
  case ValueKind::flag: return "";
  case ValueKind::choice: {
    std::vector<std::string> quoted;
    for (const auto& choice : choices) {
      quoted.push_back(zsh_colon_escaped(choice));
    }
    action = "(" + join(quoted) + ")";
    break;
  }
  case ValueKind::file: action = "_files"; break;
  case ValueKind::directory: action = "_neuron_cache_directories"; break;
  case ValueKind::repo: action = "_neuron_cache_repos"; break;
  case ValueKind::model: action = "_neuron_cache_models"; break;
  case ValueKind::shell_command: action = "_command_names -e"; break;
  case ValueKind::text:
  case ValueKind::integer: action = " "; break; // shows the message, offers nothing
  }
  return ":" + message + ":" + action;
}

std::string zsh_option_spec(const OptionSpec& option)
{
  std::vector<std::string> names;
  std::vector<std::string> suffixed;
  if (!option.short_name.empty()) {
    names.push_back("-" + option.short_name);
    suffixed.push_back("-" + option.short_name + (takes_value(option) ? "+" : ""));
  }
  for (const auto& name : long_names(option)) {
    names.push_back("--" + name);
    suffixed.push_back("--" + name + (takes_value(option) ? "=" : ""));
  }
  std::string spec = "'(" + join(names) + ")'";
  spec += suffixed.size() == 1 ? suffixed.front() : "{" + join(suffixed, ",") + "}";
  spec +=
    "'[" + zsh_description(option.help) + "]" + zsh_value_spec(option.kind, option.value_name, option.choices) + "'";
  return spec;
}

std::string zsh_function_name(const std::string& command)
{
  return "_neuron_cache_command_" + replace_all(command, "-", "_");
}

} // namespace

std::string zsh_script()
{
  std::ostringstream out;
  out << "#compdef neuron-cache\n"
      << "# zsh completion for neuron-cache. Generated from its option table by\n"
      << "# `neuron-cache completion zsh`: do not edit; regenerate with `make completions`.\n"
      << "# Turn it on: put this file, named _neuron-cache, in a directory of $fpath before\n"
      << "# compinit runs, or: source <(neuron-cache completion zsh) after compinit.\n";

  out << replace_all(replace_all(k_zsh_helpers, "__REPO_CONFIG__", k_repo_config_shell_path), "__MODELS_CACHE__",
                     k_models_cache_shell_path);

  out << "\n(( $+functions[_neuron_cache_commands] )) ||\n_neuron_cache_commands() {\n"
      << "  local -a commands\n  commands=(\n";
  for (const auto& command : completion_commands()) {
    out << "    '" << zsh_colon_escaped(command.name) << ":" << zsh_description(command.summary) << "'\n";
  }
  out << "    '" << k_help_command << ":" << zsh_description(k_help_summary) << "'\n  )\n"
      << "  _describe -t commands 'neuron-cache command' commands\n}\n";

  for (const auto& command : completion_commands()) {
    out << "\n" << zsh_function_name(command.name) << "() {\n";
    if (runs_shell_command(command)) {
      out << "  # After a bare `--`: the command to run, completed as zsh completes it anywhere.\n"
          << "  local dash=${words[(i)--]}\n"
          << "  if (( dash < CURRENT )); then\n"
          << "    shift $dash words\n    (( CURRENT -= dash ))\n    _normal\n    return\n  fi\n";
    }
    out << "  _arguments -s -S";
    for (const auto* option : options_of(command)) {
      out << " \\\n    " << zsh_option_spec(*option);
    }
    auto positionals = plain_positionals(command);
    for (std::size_t index = 0; index < positionals.size(); ++index) {
      const auto& positional = *positionals[index];
      out << " \\\n    '" << index + 1
          << zsh_value_spec(positional.kind == ValueKind::flag ? ValueKind::text : positional.kind, positional.name,
                            positional.choices)
          << "'";
    }
    out << "\n}\n";
  }

  out << "\n_neuron-cache() {\n"
      << "  local curcontext=$curcontext state state_descr line ret=1\n"
      << "  typeset -A opt_args\n"
      << "  _arguments -C";
  for (const auto& option : global_options()) {
    std::string spec = zsh_option_spec(option);
    if (option.long_name == "version" || option.long_name == "help") {
      spec.replace(2, spec.find(')') - 2, "- : *"); // nothing follows --version or --help
    }
    out << " \\\n    " << spec;
  }
  out << " \\\n    '1: :_neuron_cache_commands' \\\n    '*:: :->command' && ret=0\n"
      << "  if [[ $state == command ]]; then\n"
      << "    curcontext=${curcontext%:*:*}:neuron-cache-$words[1]:\n"
      << "    case $words[1] in\n";
  for (const auto& command : completion_commands()) {
    out << "      (" << sh_word(command.name) << ") " << zsh_function_name(command.name) << " && ret=0 ;;\n";
  }
  out << "      (" << k_help_command << ") _arguments '1: :_neuron_cache_commands' && ret=0 ;;\n"
      << "    esac\n  fi\n  return ret\n}\n\n"
      << "# Autoloaded from $fpath: complete now. Sourced: register for the command.\n"
      << "if [[ $funcstack[1] == _neuron-cache ]]; then\n  _neuron-cache \"$@\"\nelse\n"
      << "  compdef _neuron-cache neuron-cache\nfi\n";
  return out.str();
}

} // namespace neuron_cache::completion
