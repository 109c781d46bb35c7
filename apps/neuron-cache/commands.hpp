#pragma once

#include "cli.hpp"

#include <hubcache/aws/config.hpp>
#include <hubcache/storage/repo_choice.hpp>
#include <hubcache/storage/repository.hpp>

#include <filesystem>
#include <memory>

namespace registry {
struct LookupTarget;
struct Filters;
} // namespace registry

namespace neuron_cache {

// Shared option definitions, so every command spells them the same way.
OptionSpec repo_id_option();
// --cache-dir DIR (alias --cache_dir): the local compile cache; `help` says what for.
OptionSpec
cache_dir_option(const std::string& help = "The local compile cache (default: as the Neuron SDK resolves it).");
OptionSpec token_option();
// --max-workers N: files moved (and hashed) at once; default 8, as the hf CLI.
OptionSpec max_workers_option();
std::size_t max_workers(const Invocation& invocation);
// --no-xet: Hub transfers through LFS only (HF_HUB_DISABLE_XET=1 does the same).
OptionSpec no_xet_option();
// --profile, --region, --endpoint-url, --no-sign-request: the AWS CLI's options, for the
// commands that may open an S3 repo or compile cache.
std::vector<OptionSpec> aws_options();
// What they say (empty for a command without them).
hubcache::aws::Overrides aws_overrides(const Invocation& invocation);

// A path as it can be shown: control characters and bytes that are not UTF-8 become '?'.
std::string printable_path(const std::filesystem::path& path);

// A repo name the user typed: a Hub id, /abs/path, file:///abs/path, or a relative
// directory (., .., ./dir, ../dir) made absolute against the working directory.
hubcache::storage::RepoSpec parse_user_repo(const std::string& text);

// The cache repo this invocation works on: --repo-id (else `fallback`, e.g. a manifest's
// repo, named by `fallback_origin`), then $CUSTOM_CACHE_REPO, the name saved by `set`, the
// default. Recorded in the run context, so errors can say where the name came from.
hubcache::storage::ResolvedRepo resolve_repo(Invocation& invocation, const std::optional<std::string>& fallback = {},
                                             const std::string& fallback_origin = {});
// A repo named by a positional argument (`set NAME`, `list REPO`), recorded likewise.
hubcache::storage::ResolvedRepo repo_from_argument(Invocation& invocation, const std::string& text,
                                                   const std::string& argument_name);

// Opens the backend for `spec` with this invocation's token (recording where the token
// comes from for error messages).
std::unique_ptr<hubcache::storage::Repository> open_repository(Invocation& invocation,
                                                               const hubcache::storage::RepoSpec& spec);
// The one way commands open a repo that must exist: RepoNotFound otherwise, which the
// error table words with where the name came from.
std::unique_ptr<hubcache::storage::Repository>
open_existing_repository(Invocation& invocation, const hubcache::storage::ResolvedRepo& resolved);

// One warning per path a listing of `repo` left out as unsafe to install.
void warn_skipped_paths(const Output& out, hubcache::storage::Repository& repo);

// What `lookup MODEL` searches for: a local directory or config.json (filed under its
// _name_or_path when that is a Hub id), a Hub model's config (diffusers too), or, when a
// Hub config cannot be fetched, the entries filed under its name (with a warning).
registry::LookupTarget lookup_target_for(Invocation& invocation, const std::string& model,
                                         const std::optional<std::string>& task);

// The shape filters lookup and a targeted pull share: --task, --batch-size,
// --sequence-length, --num-cores (each a positive integer).
registry::Filters shape_filters(Invocation& invocation);

// The seconds of an AGE option (30d, 12h); a UsageError naming --NAME when malformed.
std::int64_t age_option(const Invocation& invocation, const std::string& name);

// `cleanup --repo` (cmd_cleanup_repo.cpp): prunes the cache repo itself.
int run_repo_cleanup(Invocation& invocation);

// Asks QUESTION [y/N] on the terminal; true for y/yes.
bool confirm(const std::string& question);

// One per cmd_*.cpp; commands.cpp lists them in help and completion order.
CommandSpec make_create_command();
CommandSpec make_set_command();
CommandSpec make_config_command();
CommandSpec make_synchronize_command();
CommandSpec make_push_command(); // synchronize, one direction each
CommandSpec make_pull_command();
CommandSpec make_status_command();
CommandSpec make_cleanup_command();
CommandSpec make_lookup_command();
CommandSpec make_list_command();
CommandSpec make_add_command();
CommandSpec make_completion_command();
CommandSpec make_man_command();

} // namespace neuron_cache
