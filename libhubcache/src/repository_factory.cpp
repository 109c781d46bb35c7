#include "hubcache/repository_factory.hpp"

#include "hubcache/directory_repository.hpp"
#include "hubcache/error.hpp"
#include "hubcache/hub_repository.hpp"

namespace hubcache {

std::unique_ptr<Repository> open_repository(const RepoSpec& spec, const Environment& env,
                                            const BackendOptions& options)
{
  switch (spec.kind) {
  case RepoKind::directory: return std::make_unique<DirectoryRepository>(spec.directory);
  case RepoKind::hub:
    return std::make_unique<HubRepository>(spec.hub_id, HubConfig::from_environment(env, options.token));
  }
  throw NotSupported("unknown repo kind");
}

} // namespace hubcache
