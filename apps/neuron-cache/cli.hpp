#pragma once

#include "output.hpp"

#include <hubcache/util/environment.hpp>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cxxopts {
class ParseResult;
}

namespace neuron_cache {

// What kind of value an option takes; drives parsing, help and shell completion.
enum class ValueKind { flag, text, integer, choice, file, directory, repo, model, shell_command };

struct OptionSpec {
  std::string short_name;              // "n" or empty
  std::string long_name;               // kebab-case; its underscore twin is accepted too
  ValueKind kind = ValueKind::flag;
  std::string value_name;              // "NAME"
  std::string help;
  std::vector<std::string> choices;    // for ValueKind::choice
  std::vector<std::string> aliases;    // further long names, e.g. "tensor-parallel-size"
  bool repeatable = false;             // may be given several times (values())
  std::string underscore_twin() const; // "repo_id" for "repo-id", empty when none
};

struct PositionalSpec {
  std::string name; // "NAME"
  ValueKind kind = ValueKind::text;
  std::string help;
  bool required = false;
  std::vector<std::string> choices = {}; // for ValueKind::choice (e.g. `completion SHELL`)
};

class Invocation;

struct CommandSpec {
  std::string name;
  std::string summary;
  std::string description;
  std::vector<PositionalSpec> positionals;
  std::vector<OptionSpec> options;
  std::vector<std::string> examples;
  std::function<int(Invocation&)> run;
};

// Options every subcommand accepts.
const std::vector<OptionSpec>& common_options();
// All subcommands, in help order.
const std::vector<CommandSpec>& all_commands();
const CommandSpec* find_command(const std::string& name);

// A command line the user got wrong: exit code 2.
class UsageError : public std::runtime_error {
public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

// Exit codes, documented in the README.
inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_error = 1;
inline constexpr int k_exit_usage = 2;
inline constexpr int k_exit_not_found = 3;

// One parsed run of a subcommand: options, positionals, environment and output.
class Invocation {
public:
  Invocation(const CommandSpec& command, std::vector<std::string> args, const hubcache::util::Environment& env);
  ~Invocation();

  const CommandSpec& command() const { return m_command; }
  const hubcache::util::Environment& env() const { return m_env; }
  Output& out() { return *m_output; }

  bool has(const std::string& long_name) const;
  std::optional<std::string> value(const std::string& long_name) const;
  std::vector<std::string> values(const std::string& long_name) const;
  // Parsed integer with a clear usage error when the value is not one.
  std::optional<long long> integer(const std::string& long_name, long long minimum = 0) const;
  std::optional<std::string> positional(const std::string& name) const;
  // Arguments after a bare `--` (the command `add` runs).
  const std::vector<std::string>& trailing() const { return m_trailing; }
  bool help_requested() const { return m_help; }

private:
  const CommandSpec& m_command;
  const hubcache::util::Environment& m_env;
  std::unique_ptr<cxxopts::ParseResult> m_result;
  std::vector<std::string> m_positionals;
  std::vector<std::string> m_trailing;
  std::unique_ptr<Output> m_output;
  bool m_help = false;
};

std::string render_command_help(const CommandSpec& command);
std::string render_main_help();

} // namespace neuron_cache
