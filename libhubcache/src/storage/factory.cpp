#include "hubcache/storage/factory.hpp"

#include "hub_xet.hpp"
#include "hubcache/error.hpp"
#include "hubcache/storage/bucket_repository.hpp"
#include "hubcache/storage/directory_repository.hpp"
#include "hubcache/storage/hub_repository.hpp"
#include "hubcache/storage/s3_repository.hpp"

#include <charconv>

namespace hubcache::storage {

namespace {

// $NEURON_CACHE_MAX_FILE_SIZE: the largest file a directory repo serves, in bytes.
std::uint64_t max_file_size(const util::Environment& env)
{
  auto text = env.get_non_empty("NEURON_CACHE_MAX_FILE_SIZE");
  if (!text) {
    return DirectoryRepository::k_default_max_file_size;
  }
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || value == 0) {
    throw ConfigError("NEURON_CACHE_MAX_FILE_SIZE must be a positive number of bytes");
  }
  return value;
}

} // namespace

std::unique_ptr<Repository> open_repository(const RepoSpec& spec, const util::Environment& env,
                                            const BackendOptions& options)
{
  switch (spec.kind) {
  case RepoKind::directory: {
    auto repo = std::make_unique<DirectoryRepository>(spec.directory);
    repo->max_file_size = max_file_size(env);
    return repo;
  }
  case RepoKind::s3: {
    auto config = aws::S3Config::from_environment(env, options.aws);
    if (options.max_workers > 0) {
      config.workers = options.max_workers; // a commit's uploads and deletions, a multipart's parts
    }
    auto credentials = config.sign ? std::make_shared<aws::CredentialChain>(env, options.aws) : nullptr;
    auto client = std::make_shared<aws::S3Client>(std::move(config), std::move(credentials));
    return std::make_unique<S3Repository>(aws::parse_s3_url(spec.s3_url), std::move(client));
  }
  case RepoKind::hub: {
    auto config = hub::HubConfig::from_environment(env, options.token);
    if (options.max_workers > 0) {
      config.workers = options.max_workers;
    }
    if (options.no_xet) {
      config.xet = false;
    }
    if (config.xet) {
      config.xet_reader = make_xet_reader(config);
    }
    return std::make_unique<HubRepository>(spec.hub_id, std::move(config));
  }
  case RepoKind::bucket: {
    auto config = hub::HubConfig::from_environment(env, options.token);
    if (options.max_workers > 0) {
      config.workers = options.max_workers;
    }
    if (config.xet) {
      config.xet_reader = make_xet_reader(config); // for a resolve that redirects to Xet
    }
    return std::make_unique<BucketRepository>(spec.bucket_id, spec.bucket_prefix, std::move(config));
  }
  }
  throw NotSupported("unknown repo kind");
}

} // namespace hubcache::storage
