#pragma once

#include "hubcache/hub/api.hpp"
#include "hubcache/storage/repository.hpp"

#include <string>

namespace hubcache::storage {

// Lands `request` on the Hub repo `repo_id` (with its namespace) as HubRepository::commit
// documents: in one commit when it fits, else in as many as the Hub's limits want, by
// whole units and in unit order, each commit naming the previous one as its parent.
CommitResult commit_to_hub(hub::HubApi& api, const std::string& repo_id, const std::string& repo_description,
                           const CommitRequest& request, const util::ProgressCallback& progress);

} // namespace hubcache::storage
