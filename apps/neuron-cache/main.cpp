// neuron-cache: entry point. Parses the subcommand, runs it, and reports every error once,
// here, in the words of the error table (errors.cpp): one line on stderr (and the error
// object on stdout under --json), and an exit code (exit_statuses()).
#include "build_info.hpp"
#include "cli.hpp"
#include "errors.hpp"

#include <hubcache/http/client.hpp>
#include <hubcache/util/fs.hpp>

#include <csignal>
#include <set>

namespace {

using namespace neuron_cache;

bool is_global_flag(const std::string& arg)
{
  static const std::set<std::string> flags = {"--json", "-q", "--quiet", "--verbose"};
  return flags.count(arg) != 0 || arg.starts_with("--format=");
}

std::vector<std::string> command_names()
{
  std::vector<std::string> names;
  for (const auto& command : all_commands()) {
    names.push_back(command.name);
    names.insert(names.end(), command.aliases.begin(), command.aliases.end());
  }
  return names;
}

// --version: the version, and the commit and day the binary was built from (provenance).
void print_version(Format format)
{
  const std::string commit = k_build_info.commit;
  const bool dirty = commit.ends_with("-dirty");
  std::string short_commit = commit.substr(0, dirty ? commit.size() - 6 : commit.size());
  short_commit = short_commit.substr(0, 12) + (dirty ? "-dirty" : "");
  Output(format).result(std::string("neuron-cache ") + k_build_info.version + " (commit " + short_commit + ", built "
                          + k_build_info.date + ")",
                        {{"program", "neuron-cache"},
                         {"version", k_build_info.version},
                         {"commit", commit},
                         {"build_date", k_build_info.date}},
                        k_build_info.version);
}

[[noreturn]] void unknown_command(const std::string& name)
{
  std::string message = "unknown command '" + name + "'";
  if (auto suggestion = closest_match(name, command_names()); !suggestion.empty()) {
    message += " (did you mean '" + suggestion + "'?)";
  }
  throw UsageError(message);
}

int run(const std::vector<std::string>& args, const hubcache::util::Environment& env, RunContext& context)
{
  const auto terminal = Terminal::detect(env);
  // Global output options may come before the subcommand: move them after it.
  std::vector<std::string> leading;
  std::size_t index = 0;
  bool version = false;
  while (index < args.size() && args[index].starts_with("-")) {
    const auto& arg = args[index];
    if (arg == "--version" || arg == "-V") {
      version = true;
      ++index;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      Output(Format::human, false, terminal).raw(render_main_help(terminal.stdout_width));
      return k_exit_ok;
    }
    if (arg == "--format" && index + 1 < args.size()) {
      leading.push_back(arg);
      leading.push_back(args[index + 1]);
      context.format = args[index + 1] == "json" ? Format::json : context.format;
      index += 2;
      continue;
    }
    if (!is_global_flag(arg)) {
      std::string message = "unknown option '" + arg + "' before the command";
      if (auto suggestion = closest_match(arg, {"--version", "--help", "--json", "--quiet", "--verbose", "--format"});
          !suggestion.empty()) {
        message += " (did you mean '" + suggestion + "'?)";
      }
      throw UsageError(message);
    }
    if (arg == "--json" || arg == "--format=json") {
      context.format = Format::json;
    }
    leading.push_back(arg);
    ++index;
  }
  if (version) {
    print_version(context.format);
    return k_exit_ok;
  }
  if (index >= args.size()) {
    Output(Format::human, false, terminal).passthrough(render_main_help(terminal.stderr_width));
    throw UsageError("no command given");
  }
  const auto& name = args[index];
  if (name == "help") {
    if (index + 1 < args.size()) {
      if (const auto* command = find_command(args[index + 1])) {
        Output(Format::human, false, terminal).raw(render_command_help(*command, terminal.stdout_width));
        return k_exit_ok;
      }
      unknown_command(args[index + 1]);
    }
    Output(Format::human, false, terminal).raw(render_main_help(terminal.stdout_width));
    return k_exit_ok;
  }
  const auto* command = find_command(name);
  if (command == nullptr) {
    unknown_command(name);
  }
  std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(index) + 1, args.end());
  rest.insert(rest.end(), leading.begin(), leading.end());
  context.command = command->name;
  Invocation invocation(*command, rest, env, &context);
  if (invocation.help_requested()) {
    invocation.out().raw(render_command_help(*command, terminal.stdout_width));
    return k_exit_ok;
  }
  return command->run(invocation);
}

} // namespace

int main(int argc, char** argv)
{
  std::signal(SIGPIPE, SIG_IGN);
  hubcache::util::remove_temp_files_on_fatal_signals();
  hubcache::http::set_user_agent("neuron-cache/" NEURON_CACHE_VERSION);
  auto env = hubcache::util::Environment::process();
  RunContext context;
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc), env, context);
  } catch (const std::exception& error) {
    auto report = describe_error(error, context);
    Output(context.format, context.verbose).error(report.message, report.hint, report.exit_code);
    return report.exit_code;
  }
}
