#pragma once

#include "hubcache/http/client.hpp"
#include "hubcache/http/listing_bounds.hpp"
#include "hubcache/util/environment.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

// Where the Hub is and who we are to it: endpoint, token, offline mode, retry and transfer
// settings, read once per run from the environment as the official clients read them.
namespace hubcache::hub {

inline constexpr std::string_view k_default_hub_endpoint = "https://huggingface.co";
// Files moved at once, as `hf download/upload --max-workers` default to.
inline constexpr std::size_t k_default_workers = 8;

// HF_ENDPOINT without its trailing '/', else https://huggingface.co.
std::string hub_endpoint(const util::Environment& env);
// HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) set to 1/ON/YES/TRUE.
bool hub_offline(const util::Environment& env);
// The token the official clients would use: the explicit one, HF_TOKEN,
// HUGGING_FACE_HUB_TOKEN, the file HF_TOKEN_PATH, else $HF_HOME/token. Values are trimmed
// and an empty one means "none". A token file that is not a small regular file (a FIFO,
// a device, a directory, over 64 KiB) is a ConfigError naming it.
std::optional<std::string> resolve_hub_token(const util::Environment& env,
                                             const std::optional<std::string>& explicit_token);

// Where the token in effect comes from, so a rejected token can be traced to its source.
enum class TokenSource { none, explicit_value, environment, file };
struct HubToken {
  std::optional<std::string> value;
  TokenSource source = TokenSource::none;
  std::string origin; // the variable name (HF_TOKEN...) or the token file's path
};
// The same search as resolve_hub_token, telling where the token was found.
HubToken locate_hub_token(const util::Environment& env, const std::optional<std::string>& explicit_token);

// HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
std::filesystem::path hf_home(const util::Environment& env);
// The Hub cache, where huggingface_hub keeps its downloads: HF_HUB_CACHE, else
// HUGGINGFACE_HUB_CACHE (older name), else $HF_HOME/hub, as huggingface_hub resolves it.
std::filesystem::path hf_hub_cache(const util::Environment& env);

// A file the Hub stores with Xet, as /resolve announced it.
struct XetFileRef {
  std::string file_hash;  // X-Xet-Hash
  std::string token_url;  // Link rel="xet-auth": the read-token URL, on the Hub's origin
  std::uint64_t size = 0; // X-Linked-Size
};
// Writes a Xet file's bytes in order to `write`. The storage floor sets it (the hub floor
// does not see the xet floor); unset, Xet files download through the Hub's redirect.
using XetReader = std::function<void(const XetFileRef& file, const std::function<void(std::string_view)>& write)>;

struct HubConfig {
  std::string endpoint{k_default_hub_endpoint};
  std::optional<std::string> token;
  bool offline = false;
  http::RetryPolicy retry;
  std::size_t workers = k_default_workers;                  // transfers in flight (hashing too)
  std::chrono::seconds stall_timeout{30};                   // HF_HUB_DOWNLOAD_TIMEOUT, at least 1 s
  std::chrono::milliseconds conflict_base{1000};            // commit re-plan backoff, scaled like `retry`
  http::ListingLimits listing;                              // pages and entries of one tree listing
  std::size_t max_answer_size = http::k_default_body_limit; // one API answer held in memory
  // A spent commit quota (429) is waited out when the Hub says it resets within this
  // (NEURON_CACHE_MAX_QUOTA_WAIT_S); a longer wait stops the push cleanly instead.
  std::chrono::seconds max_quota_wait{300};
  // Entries one folder may hold (the Hub refuses a commit past 10,000);
  // NEURON_CACHE_HUB_MAX_FOLDER_ENTRIES for a Hub with another limit.
  std::size_t max_folder_entries = 10000;
  // How a repeated writer (`add` over a manifest) paces its commits: a burst of 8 at once,
  // then one every 30 s, so at most 8 + 3600 / 30 = 128 land in any hour (the Hub's quota);
  // NEURON_CACHE_HUB_COMMIT_SPACING_MS and NEURON_CACHE_HUB_COMMIT_BURST for another quota.
  std::chrono::milliseconds commit_spacing{30000};
  std::size_t commit_burst = 8;
  bool xet = true; // HF_HUB_DISABLE_XET=1 (or --no-xet) turns Xet transfers off
  XetReader xet_reader;

  static HubConfig from_environment(const util::Environment& env, const std::optional<std::string>& explicit_token);
};

} // namespace hubcache::hub
