// The bash completion script: a fixed engine and the tables generated from the options.
#include "completion_scripts.hpp"

#include <sstream>

namespace neuron_cache::completion {

namespace {

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

} // namespace

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

} // namespace neuron_cache::completion
