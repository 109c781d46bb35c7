#pragma once

#include "output.hpp"

#include <hubcache/hub/config.hpp>
#include <hubcache/storage/repo_choice.hpp>
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
  std::string short_name; // "n" or empty
  std::string long_name;  // kebab-case; its underscore twin is accepted too
  ValueKind kind = ValueKind::flag;
  std::string value_name; // "NAME"
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
  std::vector<std::string> aliases; // further names, e.g. "sync"
  std::string summary;
  std::string description;
  std::vector<PositionalSpec> positionals;
  std::vector<OptionSpec> options;
  std::vector<std::string> examples;
  std::function<int(Invocation&)> run;
};

// Options every subcommand accepts (and, but for --help, before it).
const std::vector<OptionSpec>& common_options();
// The common options as `command` takes them: -v is --verbose unless the command has a
// -v of its own (list and lookup: optimum-cli's compiler version).
std::vector<const OptionSpec*> common_options_of(const CommandSpec& command);
// All subcommands, in help order.
const std::vector<CommandSpec>& all_commands();
const CommandSpec* find_command(const std::string& name);

// A command line the user got wrong: exit code 2.
class UsageError : public std::runtime_error {
public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

// Exit codes; exit_statuses() documents them (man page, --help).
inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_error = 1;
inline constexpr int k_exit_usage = 2;
inline constexpr int k_exit_not_found = 3;
inline constexpr int k_exit_signal_base = 128; // add, interrupted by signal N: 128+N

struct ExitStatus {
  std::string code;    // "0", or "128+N"
  std::string brief;   // "usage error", for the one-line summary in --help
  std::string meaning; // a sentence, for the man page
};
const std::vector<ExitStatus>& exit_statuses();

// What the program learns during a run that its error messages need: the command, the
// output format, which repo it opened and where that name came from, where the token
// came from. Filled as the run goes; read by main when an error reaches it.
struct RunContext {
  std::string command;
  Format format = Format::human;
  bool verbose = false;
  std::optional<hubcache::storage::ResolvedRepo> repo;
  hubcache::hub::TokenSource token_source = hubcache::hub::TokenSource::none;
  std::string token_origin; // HF_TOKEN, the token file path; never the token
};

// One parsed run of a subcommand: options, positionals, environment and output.
class Invocation {
public:
  // `context` (owned by the caller, e.g. main) receives what error messages need; without
  // one, the invocation keeps its own.
  Invocation(const CommandSpec& command, std::vector<std::string> args, const hubcache::util::Environment& env,
             RunContext* context = nullptr);
  ~Invocation();

  const CommandSpec& command() const { return m_command; }
  const hubcache::util::Environment& env() const { return m_env; }
  Output& out() { return *m_output; }
  RunContext& context() { return *m_context; }
  const RunContext& context() const { return *m_context; }
  bool verbose() const { return m_context->verbose; }

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
  std::unique_ptr<RunContext> m_own_context;
  RunContext* m_context;
  bool m_help = false;
};

// Help text laid out for `width` columns (at most 100 are used): descriptions reflowed,
// options' help wrapped in their column, long examples continued with " \\".
std::string render_command_help(const CommandSpec& command, std::size_t width = k_default_width);
std::string render_main_help(std::size_t width = k_default_width);

// The closest of `candidates` to `word` when it is a likely typo (edit distance at most
// 2, and less than half the word), else empty: "did you mean ...?".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

} // namespace neuron_cache
