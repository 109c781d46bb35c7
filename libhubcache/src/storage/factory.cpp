#include "hubcache/storage/factory.hpp"

#include "hubcache/error.hpp"
#include "hubcache/storage/directory_repository.hpp"
#include "hubcache/storage/hub_repository.hpp"
#include "hubcache/storage/s3_repository.hpp"

namespace hubcache::storage {

std::unique_ptr<Repository> open_repository(const RepoSpec& spec, const util::Environment& env,
                                            const BackendOptions& options)
{
  switch (spec.kind) {
  case RepoKind::directory: return std::make_unique<DirectoryRepository>(spec.directory);
  case RepoKind::s3: {
    auto config = aws::S3Config::from_environment(env, options.aws);
    auto credentials = config.sign ? std::make_shared<aws::CredentialChain>(env, options.aws) : nullptr;
    auto client = std::make_shared<aws::S3Client>(std::move(config), std::move(credentials));
    return std::make_unique<S3Repository>(aws::parse_s3_url(spec.s3_url), std::move(client));
  }
  case RepoKind::hub: {
    auto config = hub::HubConfig::from_environment(env, options.token);
    if (options.max_workers > 0) {
      config.workers = options.max_workers;
    }
    return std::make_unique<HubRepository>(spec.hub_id, std::move(config));
  }
  }
  throw NotSupported("unknown repo kind");
}

} // namespace hubcache::storage
