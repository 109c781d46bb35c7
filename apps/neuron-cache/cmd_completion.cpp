// `neuron-cache completion bash|zsh|fish`: a completion script generated from the
// option table (completion_model.hpp), so completion never drifts from the parser.
// Dynamic values come from small local files only: a completion never spawns the
// binary and never touches the network.
#include "commands.hpp"
#include "completion_model.hpp"

#include <sstream>

namespace neuron_cache {

namespace {

using namespace completion;

const std::vector<std::string> k_shells = {"bash", "zsh", "fish"};

std::string join(const std::vector<std::string>& words, const std::string& separator = " ")
{
  std::string joined;
  for (const auto& word : words) {
    joined += (joined.empty() ? "" : separator) + word;
  }
  return joined;
}

bool is_plain_word(const std::string& text)
{
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0
           || std::string_view("-_./:=+,@%").find(c) != std::string_view::npos;
  });
}

// POSIX single quoting (bash and zsh): 'it'\''s'.
std::string sh_quote(const std::string& text)
{
  std::string quoted = "'";
  for (char c : text) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

std::string sh_word(const std::string& text)
{
  return is_plain_word(text) ? text : sh_quote(text);
}

// fish single quotes only know \\ and \'.
std::string fish_quote(const std::string& text)
{
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') {
      quoted += '\\';
    }
    quoted += c;
  }
  return quoted + "'";
}

std::string kind_name(ValueKind kind)
{
  switch (kind) {
  case ValueKind::flag: return "flag";
  case ValueKind::text: return "text";
  case ValueKind::integer: return "integer";
  case ValueKind::choice: return "choice";
  case ValueKind::file: return "file";
  case ValueKind::directory: return "directory";
  case ValueKind::repo: return "repo";
  case ValueKind::model: return "model";
  case ValueKind::shell_command: return "shell_command";
  }
  return "text";
}

std::vector<std::string> command_names()
{
  std::vector<std::string> names;
  for (const auto& command : completion_commands()) {
    names.push_back(command.name);
  }
  names.emplace_back(k_help_command);
  return names;
}

// Options that exist before the subcommand but not after it (--version).
std::vector<const OptionSpec*> global_only_options()
{
  std::vector<const OptionSpec*> only;
  for (const auto& option : global_options()) {
    bool common = std::any_of(common_options().begin(), common_options().end(),
                              [&](const OptionSpec& other) { return other.long_name == option.long_name; });
    if (!common) {
      only.push_back(&option);
    }
  }
  return only;
}

// The common options a command takes in its own form (-v for --verbose): they need
// per-command completion, the others are completed everywhere.
std::vector<const OptionSpec*> command_forms_of_common(const CommandSpec& command)
{
  std::vector<const OptionSpec*> forms;
  for (const auto* option : common_options_of(command)) {
    bool shared = std::any_of(common_options().begin(), common_options().end(),
                              [&](const OptionSpec& common) { return &common == option; });
    if (!shared) {
      forms.push_back(option);
    }
  }
  return forms;
}

// ---------------------------------------------------------------------------- bash

// The part of the bash script that does not depend on the table.
constexpr const char* k_bash_engine = R"BASH(
# Completes a value of kind $1 for the word $2 into COMPREPLY (choices in _nc_choices).
_neuron_cache_values() {
  local kind=$1 cur=$2 word
  case $kind in
    subcommand | choice)
      [[ $kind == subcommand ]] && _nc_choices=$_neuron_cache_commands
      for word in $_nc_choices; do
        [[ $word == "$cur"* ]] && COMPREPLY+=("$word")
      done
      ;;
    file)
      compopt -o filenames 2>/dev/null
      mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
      ;;
    directory) _neuron_cache_directories "$cur" ;;
    repo)
      case $cur in
        /* | '~'*) _neuron_cache_directories "$cur" ;;
        file://*) _neuron_cache_directories "${cur#file://}" file:// ;;
        *) _neuron_cache_repos "$cur" ;;
      esac
      ;;
    model)
      # A Hub model id from the cached listing, else a local model directory or config.json.
      case $cur in
        /* | ./* | ../* | '~'*) ;;
        *) _neuron_cache_models "$cur" ;;
      esac
      ((${#COMPREPLY[@]})) || _neuron_cache_values file "$cur"
      ;;
    shell_command) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -c -- "$cur") ;;
  esac
}

# Directories starting with $1, each put back behind $2 (file://).
_neuron_cache_directories() {
  local dir
  compopt -o filenames 2>/dev/null
  while IFS= read -r dir; do
    COMPREPLY+=("${2-}$dir")
  done < <(compgen -d -- "$1")
}

# Cache repos the user already named: the one `set` saved, and $CUSTOM_CACHE_REPO.
_neuron_cache_repos() {
  local file=__REPO_CONFIG__ own="${XDG_CONFIG_HOME:-$HOME/.config}/neuron-cache/repo"
  local name= own_name= seen=' '
  [[ $file == '~/'* ]] && file=$HOME/${file#'~/'}
  [[ -r $file ]] && read -r name <"$file"
  [[ -r $own ]] && read -r own_name <"$own"
  for name in "$own_name" "$name" "${CUSTOM_CACHE_REPO-}"; do
    [[ -n $name && $name == "$1"* && $seen != *" $name "* ]] || continue
    COMPREPLY+=("$name")
    seen+="$name "
  done
}

# Model ids from the listing `neuron-cache list` keeps of the current repo.
_neuron_cache_models() {
  local file=__MODELS_CACHE__
  local model
  [[ -r $file ]] || return 0
  while IFS= read -r model || [[ -n $model ]]; do
    [[ -n $model && $model == "$1"* ]] && COMPREPLY+=("$model")
  done <"$file"
}

_neuron_cache() {
  local IFS=$' \t\n'
  local line=${COMP_LINE:0:COMP_POINT} cur command= pending= dash= positional=0 word prefix= i
  local -a words
  # Our own split of the line before the cursor, on blanks only (backslash-escaped blanks
  # kept), so --opt=value and file:///path stay one word whatever COMP_WORDBREAKS holds.
  read -a words <<<"$line"
  [[ -z $line || $line == *[[:blank:]] ]] && words+=("")
  local cword=$((${#words[@]} - 1))
  cur=${words[cword]}
  COMPREPLY=()

  for ((i = 1; i < cword; i++)); do
    word=${words[i]}
    if [[ -n $pending ]]; then
      pending=
      continue
    fi
    if [[ -n $command && $word == -- ]] && _neuron_cache_runs_command "$command"; then
      dash=$i
      break
    fi
    [[ $word == --*=* ]] && continue
    if [[ $word == -?* ]]; then
      _neuron_cache_option "$command" "$word" && [[ $_nc_kind != flag ]] && pending=$word
      continue
    fi
    if [[ -z $command ]]; then
      command=$word
    else
      positional=$((positional + 1))
    fi
  done

  if [[ -n $dash ]]; then
    if ((cword == dash + 1)); then
      _neuron_cache_values shell_command "$cur"
    elif declare -F _command_offset >/dev/null; then
      # bash-completion completes the rest as the arguments of that command.
      for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == -- ]] && break
      done
      _command_offset $((i + 1))
      return
    else
      _neuron_cache_values file "$cur"
    fi
  elif [[ -n $pending ]]; then
    _neuron_cache_option "$command" "$pending"
    _neuron_cache_values "$_nc_kind" "$cur"
  elif [[ $cur == --*=* ]]; then
    if _neuron_cache_option "$command" "${cur%%=*}" && [[ $_nc_kind != flag ]]; then
      _neuron_cache_values "$_nc_kind" "${cur#*=}"
      COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
    fi
  elif [[ $cur != -* ]] && _neuron_cache_positional "$command" "$positional"; then
    _neuron_cache_values "$_nc_kind" "$cur"
  elif [[ -z $cur || $cur == -* ]]; then
    _neuron_cache_option_names "$command"
    for word in $_nc_words; do
      [[ $word == "$cur"* ]] && COMPREPLY+=("$word")
    done
  fi

  # Readline replaces only the text after the word's last break character (= or :).
  for ((i = ${#cur} - 1; i >= 0; i--)); do
    if [[ ${cur:i:1} == [=:] && ${COMP_WORDBREAKS-} == *"${cur:i:1}"* ]]; then
      prefix=${cur:0:i+1}
      break
    fi
  done
  [[ -n $prefix ]] && COMPREPLY=("${COMPREPLY[@]#"$prefix"}")
  return 0
}

complete -F _neuron_cache neuron-cache
)BASH";

std::string replace_all(std::string text, const std::string& from, const std::string& to)
{
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string bash_kind_assignment(ValueKind kind, const std::vector<std::string>& choices)
{
  std::string assignment = "_nc_kind=" + kind_name(kind);
  if (kind == ValueKind::choice) {
    assignment += " _nc_choices=" + sh_quote(join(choices));
  }
  return assignment;
}

std::string bash_pattern(const std::string& command, const std::vector<std::string>& names)
{
  std::vector<std::string> patterns;
  for (const auto& name : names) {
    patterns.push_back(command == "*" ? "*:" + sh_word(name) : sh_word(command + ":" + name));
  }
  return join(patterns, " | ");
}

std::string bash_script()
{
  std::ostringstream out;
  out << "# bash completion for neuron-cache. Generated from its option table by\n"
      << "# `neuron-cache completion bash`: do not edit; regenerate with `make completions`.\n"
      << "# Turn it on: source <(neuron-cache completion bash), or install it as\n"
      << "# share/bash-completion/completions/neuron-cache (cmake --install does).\n\n";

  out << "_neuron_cache_commands=" << sh_quote(join(command_names())) << "\n\n";

  out << "# Sets _nc_kind (and _nc_choices) for option $2 of command $1 (\"\" before the command);\n"
      << "# fails for an unknown option.\n"
      << "_neuron_cache_option() {\n  _nc_kind= _nc_choices=\n  case \"$1:$2\" in\n";
  for (const auto& command : completion_commands()) {
    for (const auto& option : command.options) {
      out << "    " << bash_pattern(command.name, dashed_names(option)) << ") "
          << bash_kind_assignment(option.kind, option.choices) << " ;;\n";
    }
    for (const auto* option : command_forms_of_common(command)) {
      out << "    " << bash_pattern(command.name, {"-" + option->short_name}) << ") "
          << bash_kind_assignment(option->kind, option->choices) << " ;;\n";
    }
  }
  for (const auto* option : global_only_options()) {
    out << "    " << bash_pattern("", dashed_names(*option)) << ") "
        << bash_kind_assignment(option->kind, option->choices) << " ;;\n";
  }
  for (const auto& option : common_options()) {
    out << "    " << bash_pattern("*", dashed_names(option)) << ") "
        << bash_kind_assignment(option.kind, option.choices) << " ;;\n";
  }
  out << "    *) return 1 ;;\n  esac\n}\n\n";

  out << "# Sets _nc_words to the options of command $1 (\"\" before the command).\n"
      << "_neuron_cache_option_names() {\n  case $1 in\n";
  for (const auto& command : completion_commands()) {
    std::vector<std::string> names;
    for (const auto* option : options_of(command)) {
      for (const auto& name : dashed_names(*option)) {
        names.push_back(name);
      }
    }
    out << "    " << sh_word(command.name) << ") _nc_words=" << sh_quote(join(names)) << " ;;\n";
  }
  std::vector<std::string> global_names;
  for (const auto& option : global_options()) {
    for (const auto& name : dashed_names(option)) {
      global_names.push_back(name);
    }
  }
  out << "    '') _nc_words=" << sh_quote(join(global_names)) << " ;;\n"
      << "    *) _nc_words= ;;\n  esac\n}\n\n";

  out << "# Sets _nc_kind (and _nc_choices) for positional argument $2 (from 0) of command $1.\n"
      << "_neuron_cache_positional() {\n  _nc_kind= _nc_choices=\n  case \"$1:$2\" in\n"
      << "    ':0' | " << sh_word(std::string(k_help_command) + ":0") << ") _nc_kind=subcommand ;;\n";
  for (const auto& command : completion_commands()) {
    auto positionals = plain_positionals(command);
    for (std::size_t index = 0; index < positionals.size(); ++index) {
      out << "    " << sh_word(command.name + ":" + std::to_string(index)) << ") "
          << bash_kind_assignment(positionals[index]->kind, positionals[index]->choices) << " ;;\n";
    }
  }
  out << "    *) return 1 ;;\n  esac\n}\n\n";

  out << "# Commands that run another command given after a bare `--`.\n"
      << "_neuron_cache_runs_command() {\n  case $1 in\n";
  for (const auto& command : completion_commands()) {
    if (runs_shell_command(command)) {
      out << "    " << sh_word(command.name) << ") return 0 ;;\n";
    }
  }
  out << "  esac\n  return 1\n}\n";

  std::string engine = replace_all(k_bash_engine, "__REPO_CONFIG__", k_repo_config_shell_path);
  out << replace_all(engine, "__MODELS_CACHE__", k_models_cache_shell_path);
  return out.str();
}

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

std::string fish_script()
{
  std::ostringstream out;
  out << "# fish completion for neuron-cache. Generated from its option table by\n"
      << "# `neuron-cache completion fish`: do not edit; regenerate with `make completions`.\n"
      << "# Turn it on: neuron-cache completion fish > ~/.config/fish/completions/neuron-cache.fish\n\n";

  out << "# Options of command $1 that take a value ($1 is - before the command).\n"
      << "function __neuron_cache_takes_value --argument-names command option\n"
      << "    switch \"$command:$option\"\n";
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
  out << "        case " << join(patterns) << "\n            return 0\n    end\n    return 1\nend\n\n";

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

  for (const auto& command : completion_commands()) {
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
  }
  return out.str();
}

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
