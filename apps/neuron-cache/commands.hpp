#pragma once

#include "cli.hpp"

#include <hubcache/storage/repo_spec.hpp>
#include <hubcache/storage/repository.hpp>

#include <filesystem>
#include <memory>

namespace neuron_cache {

// Shared option definitions, so every command spells them the same way.
OptionSpec repo_id_option();
OptionSpec token_option();
// --max-workers N: files moved (and hashed) at once; default 8, as the hf CLI.
OptionSpec max_workers_option();
std::size_t max_workers(const Invocation& invocation);

// A path as it can be shown: control characters and bytes that are not UTF-8 become '?'.
std::string printable_path(const std::filesystem::path& path);

// The cache repo this invocation works on (--repo-id, env, config file, default).
hubcache::storage::ResolvedRepo resolve_repo(const Invocation& invocation);
std::unique_ptr<hubcache::storage::Repository> open_repository(const Invocation& invocation, const hubcache::storage::RepoSpec& spec);

// One per cmd_*.cpp; commands.cpp lists them in help and completion order.
CommandSpec make_create_command();
CommandSpec make_set_command();
CommandSpec make_config_command();
CommandSpec make_synchronize_command();
CommandSpec make_status_command();
CommandSpec make_cleanup_command();
CommandSpec make_lookup_command();
CommandSpec make_list_command();
CommandSpec make_add_command();
CommandSpec make_completion_command();
CommandSpec make_man_command();

} // namespace neuron_cache
