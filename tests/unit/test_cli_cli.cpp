// The CLI's option parsing and help rendering, on the real command table.
#include "cli.hpp"

#include <doctest/doctest.h>

using namespace neuron_cache;

namespace cli_cli_test {

namespace {

const hubcache::util::Environment k_empty_env = hubcache::util::Environment::from_map({});

std::string usage_error(const std::string& command, std::vector<std::string> args)
{
  try {
    Invocation invocation(*find_command(command), std::move(args), k_empty_env);
  } catch (const UsageError& error) {
    return error.what();
  }
  FAIL("expected a usage error");
  return {};
}

} // namespace

TEST_CASE("cli: options, their underscore twins and positionals parse into an invocation")
{
  Invocation invocation(*find_command("synchronize"), {"--repo_id", "/data/repo", "--dry-run", "--json"}, k_empty_env);
  CHECK(invocation.value("repo-id") == "/data/repo");
  CHECK(invocation.has("dry-run"));
  CHECK_FALSE(invocation.has("pull"));
  CHECK(invocation.out().format() == Format::json);
  CHECK(invocation.context().format == Format::json);
  CHECK(invocation.context().command == "synchronize");

  Invocation set(*find_command("set"), {"my-org/cache", "--verbose"}, k_empty_env);
  CHECK(set.positional("NAME") == "my-org/cache");
  CHECK(set.verbose());

  Invocation add(*find_command("add"), {"--model", "m", "--", "torchrun", "--nproc_per_node", "2"}, k_empty_env);
  CHECK(add.trailing() == std::vector<std::string>{"torchrun", "--nproc_per_node", "2"});
}

TEST_CASE("cli: bad command lines are usage errors that say what is wrong, in plain ASCII")
{
  CHECK(usage_error("synchronize", {"--bogus"}) == "unknown option '--bogus'");
  CHECK(usage_error("synchronize", {"--dry-rn"}) == "unknown option '--dry-rn' (did you mean '--dry-run'?)");
  CHECK(usage_error("synchronize", {"--repo-id"}) == "option '--repo-id' needs a value");
  CHECK(usage_error("synchronize", {"--clear-stale-locks", "soon"})
        == "--clear-stale-locks expects an integer (got 'soon')");
  CHECK(usage_error("synchronize", {"--json", "--format", "quiet"}).find("conflicts") != std::string::npos);
  CHECK(usage_error("set", {"a/b", "c/d"}) == "unexpected argument 'c/d'");
  CHECK(usage_error("completion", {}) == "missing argument SHELL");
  CHECK(usage_error("config", {"--format", "yaml"}) == "--format must be one of human, json, quiet (got 'yaml')");
  for (const auto& command : all_commands()) {
    for (const auto& option : command.options) {
      CHECK(usage_error(command.name, {"--" + option.long_name + "-typo-that-is-long-enough"})
              .starts_with("unknown option"));
    }
  }
}

TEST_CASE("cli: a usage error under --json is known to be json before parsing fails")
{
  RunContext context;
  CHECK_THROWS_AS(Invocation(*find_command("list"), {"--json", "--bogus"}, k_empty_env, &context), UsageError);
  CHECK(context.format == Format::json);
  CHECK(context.command == "list");
}

TEST_CASE("cli: commands are found by name and alias; typos get a suggestion")
{
  REQUIRE(find_command("sync") != nullptr);
  CHECK(find_command("sync")->name == "synchronize");
  CHECK(find_command("env")->name == "config");
  CHECK(find_command("nope") == nullptr);
  std::vector<std::string> names = {"create", "set", "config", "synchronize", "lookup", "list", "add"};
  CHECK(closest_match("synchronise", names) == "synchronize");
  CHECK(closest_match("lst", names) == "list");
  CHECK(closest_match("crate", names) == "create");
  CHECK(closest_match("lsit", names) == "list");
  CHECK(closest_match("synch", names) == "synchronize");
  CHECK(closest_match("xyz", names).empty());
  CHECK(closest_match("delete", names).empty());
}

TEST_CASE("cli: help aligns argument and option descriptions in one column, with a gap after long names")
{
  for (const auto& command : all_commands()) {
    auto help = render_command_help(command);
    CAPTURE(command.name);
    std::istringstream lines(help);
    std::string line;
    bool in_table = false;
    while (std::getline(lines, line)) {
      if (line == "Arguments:" || line == "Options:" || line == "Common options:") {
        in_table = true;
        continue;
      }
      if (line.empty() || !line.starts_with("  ")) {
        in_table = false;
        continue;
      }
      if (!in_table || line.size() <= 34) {
        continue;
      }
      // A row: either a name alone (description on the next line) or a description at 34,
      // after at least two spaces.
      auto name_start = line.find_first_not_of(' ');
      auto name_end = line.find("  ", name_start);
      if (name_start < 34 && name_end != std::string::npos && name_end < 34) {
        CHECK(line[33] == ' ');
        CHECK(line[34] != ' ');
      }
    }
  }
  auto sync_help = render_command_help(*find_command("synchronize"));
  CHECK(sync_help.find("--clear-stale-locks MINUTES\n") != std::string::npos);
  auto main_help = render_main_help();
  CHECK(main_help.find("(alias: sync)") != std::string::npos);
  CHECK(main_help.find("Exit codes: 0 ok, 1 error, 2 usage error, 3 nothing found, 128+N interrupted.")
        != std::string::npos);
}

TEST_CASE("cli: help fits the width it is given, 80 columns by default; examples continue with a backslash")
{
  for (std::size_t width : {k_default_width, std::size_t{60}}) {
    std::vector<std::pair<std::string, std::string>> helps = {{"main", render_main_help(width)}};
    for (const auto& command : all_commands()) {
      helps.emplace_back(command.name, render_command_help(command, width));
    }
    for (const auto& named_help : helps) { // (clang 14 cannot CAPTURE a structured binding)
      const auto& name = named_help.first;
      const auto& help = named_help.second;
      CAPTURE(name);
      CAPTURE(width);
      std::istringstream lines(help);
      std::string line;
      while (std::getline(lines, line)) {
        CAPTURE(line);
        CHECK(line.size() <= width);
      }
    }
  }
  // A wide terminal gets at most 100 columns; a long example is cut between words, outside quotes.
  auto add_help = render_command_help(*find_command("add"), 200);
  CHECK(add_help.find(" \\\n      ") != std::string::npos);
  auto lookup_help = render_command_help(*find_command("lookup"), 50);
  CHECK(lookup_help.find("'not cached: compile it'") != std::string::npos);
}

TEST_CASE("cli: the exit-status table matches the exit-code constants")
{
  const auto& statuses = exit_statuses();
  REQUIRE(statuses.size() >= 4);
  CHECK(statuses[0].code == std::to_string(k_exit_ok));
  CHECK(statuses[1].code == std::to_string(k_exit_error));
  CHECK(statuses[2].code == std::to_string(k_exit_usage));
  CHECK(statuses[3].code == std::to_string(k_exit_not_found));
}

} // namespace cli_cli_test
