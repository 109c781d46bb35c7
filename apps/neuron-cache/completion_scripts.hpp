#pragma once
// The pieces the three completion scripts share, and the scripts themselves: one room per
// shell (completion_bash.cpp, completion_zsh.cpp, completion_fish.cpp), all generated from
// the option table (completion_model.hpp).

#include "completion_model.hpp"

#include <string>
#include <vector>

namespace neuron_cache::completion {

std::string join(const std::vector<std::string>& words, const std::string& separator = " ");
// POSIX single quoting (bash and zsh): 'it'\''s'.
std::string sh_quote(const std::string& text);
// A word as is when it needs no quoting, else sh_quote'd.
std::string sh_word(const std::string& text);
// fish single quotes only know \\ and \'.
std::string fish_quote(const std::string& text);
// The name the scripts give a kind of value ("repo", "path", ...).
std::string kind_name(ValueKind kind);
std::string replace_all(std::string text, const std::string& from, const std::string& to);
std::vector<std::string> command_names();
// Options that exist before the subcommand but not after it (--version).
std::vector<const OptionSpec*> global_only_options();
// The common options a command takes in its own form (-v for --verbose): they need
// per-command completion, the others are completed everywhere.
std::vector<const OptionSpec*> command_forms_of_common(const CommandSpec& command);

std::string bash_script();
std::string zsh_script();
std::string fish_script();

} // namespace neuron_cache::completion
