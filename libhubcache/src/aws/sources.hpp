#pragma once

// The credential sources a profile (or the environment) can name, private to the aws
// floor: credential_process, SSO, web identity, roles. credentials.cpp chains them.
#include "hubcache/aws/config.hpp"
#include "hubcache/aws/credentials.hpp"
#include "hubcache/http/client.hpp"
#include "hubcache/util/environment.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace hubcache::aws::detail {

// Bounds on what helpers and files give us: credentials are a few KiB.
inline constexpr std::size_t k_credentials_document_limit = 64 * 1024;

// credential_process: the command (split as a shell would, no expansion) runs with our
// environment; its stdout is the CLI's JSON (Version 1, AccessKeyId, SecretAccessKey,
// optional SessionToken and Expiration). `source` names it in messages.
Credentials parse_process_output(std::string_view output, const std::string& source);
Credentials run_credential_process(const std::string& command, const std::string& source,
                                   std::chrono::milliseconds timeout);

// SSO (IAM Identity Center): the profile's account and role, and the token `aws sso login`
// cached in ~/.aws/sso/cache/<sha1 of the sso-session name, or of the start URL>.json.
struct SsoProfile {
  std::string start_url;
  std::string region;
  std::string account_id;
  std::string role_name;
  std::optional<std::string> session_name; // [sso-session NAME], else a legacy profile
  std::string cache_key() const { return session_name ? *session_name : start_url; }
};
// nullopt when the profile has no SSO settings; AuthError when they are incomplete.
std::optional<SsoProfile> read_sso_profile(const Section& profile, const SharedFiles& files,
                                           const std::string& profile_name);
std::filesystem::path sso_token_file(const util::Environment& env, const SsoProfile& sso);
// The cached access token, AuthError when missing, unreadable or expired.
std::string read_sso_token(const std::filesystem::path& file, const std::string& profile_name);
Credentials parse_sso_role_credentials(std::string_view body, const std::string& source);
Credentials sso_credentials(const util::Environment& env, const Overrides& overrides, const SsoProfile& sso,
                            const std::string& profile_name, http::Client& client);

// A web identity token file (EKS projects a new one regularly: read at each refresh).
std::string read_web_identity_token(const std::filesystem::path& file, const std::string& setting);

// STS answers (<ActionResponse><ActionResult><Credentials>...).
Credentials parse_sts_credentials(const std::string& body, const std::string& action, const std::string& source);

// What resolving a profile's credentials needs.
struct ProfileContext {
  const util::Environment& env;
  const Overrides& overrides;
  const SharedFiles& files;
  http::Client& client;
  std::chrono::milliseconds process_timeout;
  // A role's credential_source (Environment, EcsContainer, Ec2InstanceMetadata).
  std::function<Credentials(const std::string& name, const std::string& profile)> named_source;
};
// The credentials profile `name` names (role, web identity, SSO, keys, process), nullopt
// when it names none; AuthError when what it names cannot give any.
std::optional<Credentials> profile_credentials(const ProfileContext& context, const std::string& name,
                                               std::set<std::string> visited = {});

} // namespace hubcache::aws::detail
