#pragma once

#include "cli.hpp"

#include <hubcache/repo_spec.hpp>
#include <hubcache/repository.hpp>

#include <memory>

namespace neuron_cache {

// Shared option definitions, so every command spells them the same way.
OptionSpec repo_id_option();
OptionSpec token_option();

// The cache repo this invocation works on (--repo-id, env, config file, default).
hubcache::ResolvedRepo resolve_repo(const Invocation& invocation);
std::unique_ptr<hubcache::Repository> open_repository(const Invocation& invocation, const hubcache::RepoSpec& spec);

// Each cmd_*.cpp registers its command with a static CommandRegistration; `order`
// places it in help and completion (create 10, set 20, config 30, synchronize 40,
// lookup 50, list 60, add 70, completion 90).
struct CommandRegistration {
  CommandRegistration(int order, CommandSpec (*make)());
};

} // namespace neuron_cache
