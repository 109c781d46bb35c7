#include "hubcache/repository_factory.hpp"

#include "hubcache/directory_repository.hpp"
#include "hubcache/error.hpp"

namespace hubcache {

std::unique_ptr<Repository> open_repository(const RepoSpec& spec, const Environment& /*env*/,
                                            const BackendOptions& /*options*/)
{
  switch (spec.kind) {
  case RepoKind::directory: return std::make_unique<DirectoryRepository>(spec.directory);
  case RepoKind::hub:
    throw NotSupported("Hub cache repos (" + spec.hub_id + ") are not supported by this build yet",
                       "use a directory repo for now: neuron-cache create /path/to/repo");
  }
  throw NotSupported("unknown repo kind");
}

} // namespace hubcache
