// What the three completion scripts share: quoting, the command and option lists.
#include "completion_scripts.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace neuron_cache::completion {

std::string join(const std::vector<std::string>& words, const std::string& separator)
{
  std::string joined;
  for (const auto& word : words) {
    joined += (joined.empty() ? "" : separator) + word;
  }
  return joined;
}

namespace {

bool is_plain_word(const std::string& text)
{
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0
           || std::string_view("-_./:=+,@%").find(c) != std::string_view::npos;
  });
}

} // namespace

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

std::string replace_all(std::string text, const std::string& from, const std::string& to)
{
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

} // namespace neuron_cache::completion
