// neuron-cache: entry point. Parses the subcommand, runs it, and maps every error to
// one line on stderr and an exit code (0 ok, 1 error, 2 usage, 3 nothing found).
#include "cli.hpp"

#include <hubcache/error.hpp>
#include <hubcache/http/client.hpp>
#include <hubcache/util/fs.hpp>

#include <csignal>
#include <iostream>
#include <set>

namespace {

using namespace neuron_cache;

bool is_global_flag(const std::string& arg)
{
  static const std::set<std::string> flags = {"--json", "-q", "--quiet"};
  return flags.count(arg) != 0 || arg.starts_with("--format=");
}

int run(int argc, char** argv, const hubcache::util::Environment& env, std::string& command_name)
{
  std::vector<std::string> args(argv + 1, argv + argc);
  // Global output options may come before the subcommand: move them after it.
  std::vector<std::string> leading;
  std::size_t index = 0;
  while (index < args.size() && args[index].starts_with("-")) {
    const auto& arg = args[index];
    if (arg == "--version" || arg == "-V") {
      std::cout << "neuron-cache " << NEURON_CACHE_VERSION << "\n";
      return k_exit_ok;
    }
    if (arg == "--help" || arg == "-h") {
      std::cout << render_main_help();
      return k_exit_ok;
    }
    if (arg == "--format" && index + 1 < args.size()) {
      leading.push_back(arg);
      leading.push_back(args[index + 1]);
      index += 2;
      continue;
    }
    if (!is_global_flag(arg)) {
      throw UsageError("unknown option '" + arg + "' before the command");
    }
    leading.push_back(arg);
    ++index;
  }
  if (index >= args.size()) {
    std::cerr << render_main_help();
    return k_exit_usage;
  }
  command_name = args[index];
  if (command_name == "help") {
    if (index + 1 < args.size()) {
      if (const auto* command = find_command(args[index + 1])) {
        std::cout << render_command_help(*command);
        return k_exit_ok;
      }
      throw UsageError("unknown command '" + args[index + 1] + "'");
    }
    std::cout << render_main_help();
    return k_exit_ok;
  }
  const auto* command = find_command(command_name);
  if (command == nullptr) {
    command_name.clear();
    throw UsageError("unknown command '" + args[index] + "'; run 'neuron-cache --help' for the list");
  }
  std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(index) + 1, args.end());
  rest.insert(rest.end(), leading.begin(), leading.end());
  Invocation invocation(*command, rest, env);
  if (invocation.help_requested()) {
    std::cout << render_command_help(*command);
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
  std::string command_name;
  try {
    return run(argc, argv, env, command_name);
  } catch (const UsageError& error) {
    std::cerr << "neuron-cache: usage error: " << error.what() << " (see 'neuron-cache "
              << (command_name.empty() ? "" : command_name + " ") << "--help')\n";
    return k_exit_usage;
  } catch (const hubcache::Error& error) {
    std::cerr << "neuron-cache: error: " << error.what();
    if (!error.hint().empty()) {
      std::cerr << "; " << error.hint();
    }
    std::cerr << "\n";
    return k_exit_error;
  } catch (const std::exception& error) {
    std::cerr << "neuron-cache: error: " << error.what() << "\n";
    return k_exit_error;
  }
}
