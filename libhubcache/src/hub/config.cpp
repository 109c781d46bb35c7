#include "hubcache/hub/config.hpp"

#include "detail.hpp"

#include "hubcache/util/fs.hpp"

#include <algorithm>

namespace hubcache::hub {

using json = nlohmann::json;
using namespace detail;
namespace stdfs = std::filesystem;

std::string hub_endpoint(const util::Environment& env)
{
  auto endpoint = env.get_non_empty("HF_ENDPOINT").value_or(std::string(k_default_hub_endpoint));
  while (!endpoint.empty() && endpoint.back() == '/') {
    endpoint.pop_back();
  }
  return endpoint;
}

bool hub_offline(const util::Environment& env)
{
  return env.get_flag("HF_HUB_OFFLINE") || env.get_flag("TRANSFORMERS_OFFLINE");
}

HubToken locate_hub_token(const util::Environment& env, const std::optional<std::string>& explicit_token)
{
  if (explicit_token) {
    if (auto token = clean_token(*explicit_token)) {
      return {token, TokenSource::explicit_value, {}};
    }
  }
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    if (auto value = env.get(name)) {
      if (auto token = clean_token(*value)) {
        return {token, TokenSource::environment, name};
      }
    }
  }
  stdfs::path token_file = hf_home(env) / "token";
  if (auto path = env.get_non_empty("HF_TOKEN_PATH")) {
    token_file = util::expand_user(*path, env);
  }
  // A token is a line of a few hundred bytes at most: anything else in its place (a
  // FIFO, a device, a huge file) is a configuration error, not a token to wait for.
  constexpr std::uint64_t k_max_token_file_size = 64 * 1024;
  std::optional<std::string> content;
  try {
    content = util::read_file_if_exists(token_file, k_max_token_file_size);
  } catch (const IoError& error) {
    throw ConfigError(std::string("the Hugging Face token file cannot be used: ") + error.what());
  }
  if (content) {
    if (auto token = clean_token(*content)) {
      return {token, TokenSource::file, token_file.string()};
    }
  }
  return {};
}

std::optional<std::string> resolve_hub_token(const util::Environment& env,
                                             const std::optional<std::string>& explicit_token)
{
  return locate_hub_token(env, explicit_token).value;
}

HubConfig HubConfig::from_environment(const util::Environment& env, const std::optional<std::string>& explicit_token)
{
  HubConfig config;
  config.endpoint = hub_endpoint(env);
  config.token = resolve_hub_token(env, explicit_token);
  config.offline = hub_offline(env);
  config.retry = http::RetryPolicy::from_environment(env);
  config.conflict_base = config.retry.base;
  if (auto wait = env.get_non_empty("NEURON_CACHE_MAX_QUOTA_WAIT_S")) {
    if (auto seconds = parse_u64(*wait)) {
      config.max_quota_wait = std::chrono::seconds(std::min<std::uint64_t>(*seconds, 86400));
    }
  }
  if (auto limit = env.get_non_empty("NEURON_CACHE_HUB_MAX_FOLDER_ENTRIES")) {
    if (auto entries = parse_u64(*limit); entries && *entries > 0) {
      config.max_folder_entries = static_cast<std::size_t>(*entries);
    }
  }
  if (auto spacing = env.get_non_empty("NEURON_CACHE_HUB_COMMIT_SPACING_MS")) {
    if (auto ms = parse_u64(*spacing)) {
      config.commit_spacing = std::chrono::milliseconds(std::min<std::uint64_t>(*ms, 3600000));
    }
  }
  if (auto burst = env.get_non_empty("NEURON_CACHE_HUB_COMMIT_BURST")) {
    if (auto commits = parse_u64(*burst); commits && *commits > 0) {
      config.commit_burst = static_cast<std::size_t>(std::min<std::uint64_t>(*commits, 1000));
    }
  }
  config.xet = !env.get_flag("HF_HUB_DISABLE_XET");
  if (auto timeout = env.get_non_empty("HF_HUB_DOWNLOAD_TIMEOUT")) {
    if (auto seconds = parse_u64(*timeout)) {
      config.stall_timeout = std::chrono::seconds(std::max<std::uint64_t>(1, *seconds));
    }
  }
  return config;
}

std::filesystem::path hf_home(const util::Environment& env)
{
  if (auto value = env.get_non_empty("HF_HOME")) {
    return util::expand_user(*value, env);
  }
  if (auto xdg = env.get_non_empty("XDG_CACHE_HOME")) {
    return util::expand_user(*xdg, env) / "huggingface";
  }
  return util::expand_user("~/.cache/huggingface", env);
}

std::filesystem::path hf_hub_cache(const util::Environment& env)
{
  for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}) {
    if (auto value = env.get_non_empty(name)) {
      return util::expand_user(*value, env);
    }
  }
  return hf_home(env) / "hub";
}

} // namespace hubcache::hub
