#pragma once

#include "hubcache/aws/config.hpp"
#include "hubcache/http/client.hpp"
#include "hubcache/util/environment.hpp"

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

// AWS credentials, found in the AWS CLI's order:
//   1. AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN
//   2. web identity: AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN (EKS IRSA), by STS
//      AssumeRoleWithWebIdentity
//   3. the profile (--profile, AWS_PROFILE, else default) of the shared config and
//      credentials files (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE): role_arn with
//      source_profile or credential_source (STS AssumeRole), web_identity_token_file,
//      SSO (the token `aws sso login` cached), static keys, credential_process
//   4. container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (ECS, SageMaker) or
//      _FULL_URI with AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE)
//   5. EC2 instance metadata with an IMDSv2 session token (AWS_EC2_METADATA_SERVICE_ENDPOINT,
//      off with AWS_EC2_METADATA_DISABLED=true)
// Temporary credentials are fetched again before they expire. Secrets are never
// part of any message.
namespace hubcache::aws {

using Clock = std::chrono::system_clock;

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token; // empty for long-term keys
  std::optional<Clock::time_point> expiration;
  std::string source; // where they came from, for messages: "environment variables", ...
};

// An access key id as `aws configure list` shows it: its last 4 characters.
std::string mask_access_key_id(std::string_view access_key_id);
// "static" or "temporary" (with a session token).
inline const char* kind_of(const Credentials& credentials)
{
  return credentials.session_token.empty() ? "static" : "temporary";
}

// ISO 8601 UTC ("2026-11-23T14:00:00Z", fractions allowed) as the services write it.
std::optional<Clock::time_point> parse_iso8601(std::string_view text);
std::string format_iso8601(Clock::time_point time); // "2026-11-23T14:00:00Z"

class CredentialChain {
public:
  struct Options {
    // Base of AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (the ECS/SageMaker agent address).
    std::string container_base = "http://169.254.170.2";
    // Fetch temporary credentials again when they expire within this margin.
    std::chrono::seconds refresh_margin{300};
    // Metadata services answer locally: a short wait, like the SDKs' 1 s.
    std::chrono::milliseconds metadata_timeout{1000};
    // A credential_process must answer within this time (the CLI waits forever).
    std::chrono::milliseconds process_timeout{60000};
  };

  explicit CredentialChain(util::Environment env, Overrides overrides = {});
  CredentialChain(util::Environment env, Overrides overrides, Options options);

  // Current credentials, fetched on first use and again before they expire. Thread-safe.
  // AuthError naming every source tried when none has credentials.
  Credentials get();
  // Drops what is cached (after the service said the token expired) and fetches again.
  Credentials refresh();

private:
  std::optional<Credentials> from_environment();
  std::optional<Credentials> from_web_identity();
  std::optional<Credentials> from_profile();
  std::optional<Credentials> from_container();
  std::optional<Credentials> from_instance_metadata();
  Credentials resolve();
  bool fresh(const Credentials& credentials) const;

  // A role's `credential_source`: Environment, EcsContainer or Ec2InstanceMetadata.
  Credentials from_named_source(const std::string& name, const std::string& profile);

  util::Environment m_env;
  Overrides m_overrides;
  Options m_options;
  std::mutex m_mutex;
  std::optional<Credentials> m_current;
  std::vector<std::string> m_tried;
  http::Client m_client;
};

} // namespace hubcache::aws
