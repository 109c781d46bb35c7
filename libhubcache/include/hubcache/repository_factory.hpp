#pragma once

#include "hubcache/environment.hpp"
#include "hubcache/repo_spec.hpp"
#include "hubcache/repository.hpp"

#include <memory>

namespace hubcache {

// Everything a backend may need besides the spec: environment (tokens, endpoint) and
// an explicit token from the command line.
struct BackendOptions {
  std::optional<std::string> token;
};

// Picks the backend for a spec, the way ccache picks remote storage by URL scheme.
std::unique_ptr<Repository> open_repository(const RepoSpec& spec, const Environment& env,
                                            const BackendOptions& options = {});

} // namespace hubcache
