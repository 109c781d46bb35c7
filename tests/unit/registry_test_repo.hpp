#pragma once

// A directory repo seeded with registry files through the real commit path, for the
// registry unit tests.
#include "test_support.hpp"

#include <hubcache/storage/directory_repository.hpp>
#include <registry/lookup.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace registry_test {

struct Seeded {
  test_support::TempDir dir;
  std::unique_ptr<hubcache::storage::DirectoryRepository> repo;
  Seeded()
  {
    repo = std::make_unique<hubcache::storage::DirectoryRepository>(dir / "repo");
    repo->create({});
  }
  void add(const std::vector<std::pair<std::string, std::string>>& files)
  {
    hubcache::storage::CommitRequest request;
    request.message = "seed";
    for (const auto& [path, content] : files) {
      request.additions.push_back({path, hubcache::storage::FileSource::from_bytes(content)});
    }
    repo->commit(request);
  }
  registry::RepositoryOpener opener()
  {
    auto root = repo->root();
    return [root] { return std::make_unique<hubcache::storage::DirectoryRepository>(root); };
  }
};

} // namespace registry_test
