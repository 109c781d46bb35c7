#pragma once

#include "hubcache/aws/config.hpp"
#include "hubcache/util/environment.hpp"

#include <optional>
#include <string>

// What the AWS side of this host resolves to, each value with where it comes from: what
// `neuron-cache config` shows. Never a secret: the access key id only masked.
namespace hubcache::aws {

struct Setup {
  ProfileChoice profile;
  std::optional<Region> region; // nullopt when the region set is no region (see note)
  std::optional<Endpoint> s3_endpoint;
  bool sign = true;
  // Filled when credentials were looked up.
  bool checked = false;
  std::optional<std::string> credentials_source;
  std::optional<std::string> access_key_id;    // masked
  std::optional<std::string> credentials_kind; // "static" or "temporary"
  std::optional<std::string> expiration;       // ISO 8601 UTC
  std::optional<std::string> account;          // from STS GetCallerIdentity
  std::optional<std::string> arn;
  std::string note; // why something is missing or was not checked
};

// `check_credentials`: also resolve the credentials (asking whatever source they come
// from) and whose account they are (STS GetCallerIdentity). Problems become notes.
Setup describe_setup(const util::Environment& env, const Overrides& overrides, bool check_credentials);

} // namespace hubcache::aws
