#pragma once

#include "hubcache/error.hpp"
#include "hubcache/http/client.hpp"

#include <optional>
#include <string>

// The Hub's failures as typed errors.
namespace hubcache::hub {

// Raised instead of touching the network when HF_HUB_OFFLINE is set.
class HubOfflineError : public RemoteError {
public:
  using RemoteError::RemoteError;
};

// What an error needs to say what happened and what to do next.
struct HubErrorContext {
  std::string action;  // "create the repo alice/cache"
  std::string repo_id; // empty when not about one repo
  std::string path;    // a file path for EntryNotFound, if any
  bool write = false;  // the request needs write access
  bool token_sent = false;
};

// Maps a failed response to a typed error: X-Error-Code first (RepoNotFound,
// RevisionNotFound, EntryNotFound, GatedRepo), then the status. The X-Request-Id goes into
// the message, the next step into the hint; `token` is scrubbed from anything the server
// echoed.
[[noreturn]] void throw_hub_error(const http::Response& response, const HubErrorContext& context,
                                  const std::optional<std::string>& token);

} // namespace hubcache::hub
