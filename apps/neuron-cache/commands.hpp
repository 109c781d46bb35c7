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

CommandSpec make_config_command();
CommandSpec make_create_command();
CommandSpec make_set_command();

} // namespace neuron_cache
