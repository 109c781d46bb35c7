#pragma once

#include "hubcache/aws/config.hpp"
#include "hubcache/storage/repo_spec.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/environment.hpp"

#include <memory>

namespace hubcache::storage {

// Everything a backend may need besides the spec: environment (tokens, endpoint) and
// an explicit token from the command line.
struct BackendOptions {
  std::optional<std::string> token;
  // Transfers (and hashes) a backend runs at once inside one call, e.g. a commit's
  // uploads; 0 keeps the backend's default.
  std::size_t max_workers = 0;
  // --no-xet: Hub transfers through LFS only, as HF_HUB_DISABLE_XET=1.
  bool no_xet = false;
  // S3: --profile, --region, --endpoint-url, --no-sign-request.
  aws::Overrides aws;
};

// Picks the backend for a spec, the way ccache picks remote storage by URL scheme.
std::unique_ptr<Repository> open_repository(const RepoSpec& spec, const util::Environment& env,
                                            const BackendOptions& options = {});

} // namespace hubcache::storage
