#pragma once

// Synchronizing a local compile cache with a cache repo, through the Repository
// interface only, so every backend behaves the same. The repo mirrors the cache root's
// relative paths 1:1, as optimum-neuron's `synchronize` does. One header for all of it;
// each room has its own:
#include "hubcache/compilecache/digest_cache.hpp"    // digests of local files, same_content
#include "hubcache/compilecache/pull.hpp"            // plan_pull, apply_pull, pull
#include "hubcache/compilecache/push.hpp"            // plan_push, push
#include "hubcache/compilecache/remote_snapshot.hpp" // what the repo held at a head
#include "hubcache/compilecache/repo_layout.hpp"     // a repo listing as entries, version_matches
#include "hubcache/compilecache/transfer_errors.hpp" // which failures stop a run
