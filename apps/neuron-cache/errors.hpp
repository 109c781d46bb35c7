#pragma once

#include "cli.hpp"

#include <exception>
#include <string>

namespace neuron_cache {

// An error as the user reads it: what failed, what to do next, and the exit code.
struct ErrorReport {
  std::string message;
  std::string hint;
  int exit_code = k_exit_error;
};

// The one table from error type (and the facts the error carries) to the program's words:
// the libraries say what happened; only here are commands, options and other tools named
// in a next step. `context` adds what the run knows: where the repo name came from, where
// the token came from.
ErrorReport describe_error(const std::exception& error, const RunContext& context);

// The hint for logging in to the Hub, the same everywhere.
std::string login_hint();

// Where the repo in effect came from, as a phrase: "named by --repo-id", "from
// CUSTOM_CACHE_REPO", "saved in FILE by 'neuron-cache set'", "the built-in default".
std::string describe_repo_origin(const hubcache::storage::ResolvedRepo& repo);

// Where the token in effect came from: "--token", "HF_TOKEN", "the token file PATH".
std::string describe_token_origin(hubcache::hub::TokenSource source, const std::string& origin);

} // namespace neuron_cache
