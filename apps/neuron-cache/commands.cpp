#include "commands.hpp"

#include <hubcache/repository_factory.hpp>

#include <algorithm>

namespace neuron_cache {

namespace {

std::vector<std::pair<int, CommandSpec (*)()>>& registrations()
{
  static std::vector<std::pair<int, CommandSpec (*)()>> entries;
  return entries;
}

} // namespace

CommandRegistration::CommandRegistration(int order, CommandSpec (*make)())
{
  registrations().emplace_back(order, make);
}

const std::vector<CommandSpec>& all_commands()
{
  static const std::vector<CommandSpec> commands = [] {
    auto entries = registrations();
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<CommandSpec> specs;
    for (const auto& [order, make] : entries) {
      specs.push_back(make());
    }
    return specs;
  }();
  return commands;
}

OptionSpec repo_id_option()
{
  return {"", "repo-id", ValueKind::repo, "REPO",
          "Cache repo to use: a Hub id (org/name) or a directory (/path, file:///path). Default: "
          "$CUSTOM_CACHE_REPO, then the name saved by 'set', then aws-neuron/optimum-neuron-cache.",
          {}, {}};
}

OptionSpec token_option()
{
  return {"", "token", ValueKind::text, "TOKEN",
          "Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME).", {}, {}};
}

hubcache::ResolvedRepo resolve_repo(const Invocation& invocation)
{
  return hubcache::resolve_repo(invocation.value("repo-id"), invocation.env());
}

std::unique_ptr<hubcache::Repository> open_repository(const Invocation& invocation, const hubcache::RepoSpec& spec)
{
  hubcache::BackendOptions options;
  if (invocation.command().name != "config") {
    for (const auto& option : invocation.command().options) {
      if (option.long_name == "token") {
        options.token = invocation.value("token");
      }
    }
  }
  return hubcache::open_repository(spec, invocation.env(), options);
}

} // namespace neuron_cache
