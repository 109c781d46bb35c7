// A profile's credentials, in botocore's order of what a profile can name: a role
// (role_arn with source_profile or credential_source, or with web_identity_token_file),
// SSO, keys in the credentials file, credential_process, keys in the config file.
#include "sources.hpp"

#include "hubcache/aws/sts.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"

#include <charconv>

namespace hubcache::aws::detail {

namespace {

// source_profile chains deeper than this are a mistake (botocore has no limit, only a
// cycle check; we have both).
constexpr std::size_t k_max_role_chain = 8;

std::string session_name_for(const Section& profile)
{
  if (auto name = setting(profile, "role_session_name")) {
    return *name;
  }
  return "neuron-cache-" + std::to_string(Clock::to_time_t(Clock::now()));
}

AssumeRoleRequest role_request(const Section& profile, const std::string& profile_name)
{
  AssumeRoleRequest request{*setting(profile, "role_arn"), session_name_for(profile), setting(profile, "external_id"),
                            std::nullopt};
  if (auto text = setting(profile, "duration_seconds")) {
    int seconds = 0;
    auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), seconds);
    if (error != std::errc() || end != text->data() + text->size() || seconds < 900 || seconds > 43200) {
      throw AuthError("duration_seconds of AWS profile '" + profile_name + "' must be 900 to 43200");
    }
    request.duration_seconds = seconds;
  }
  return request;
}

std::optional<Credentials> static_keys(const ProfileContext& context, const Section& profile, const std::string& name)
{
  auto key = setting(profile, "aws_access_key_id");
  auto secret = setting(profile, "aws_secret_access_key");
  if (!key || !secret) {
    return std::nullopt;
  }
  return Credentials{*key, *secret, setting(profile, "aws_session_token").value_or(""), std::nullopt,
                     "profile '" + name + "' in " + context.files.file_of(name, "aws_access_key_id").string()};
}

Credentials role_credentials(const ProfileContext& context, const Section& profile, const std::string& name,
                             std::set<std::string> visited)
{
  if (profile.contains("mfa_serial")) {
    throw AuthError("AWS profile '" + name
                      + "' needs an MFA code to assume its role, which neuron-cache cannot ask for",
                    "export temporary keys first (aws configure export-credentials --profile "
                      + util::quote_argument(name) + " --format env)");
  }
  auto request = role_request(profile, name);
  StsClient sts(context.env, context.overrides);
  if (auto token_file = setting(profile, "web_identity_token_file")) {
    auto token = read_web_identity_token(util::expand_user(*token_file, context.env),
                                         "web_identity_token_file of AWS profile '" + name + "'");
    return sts.assume_role_with_web_identity(request, token);
  }
  auto source_profile = setting(profile, "source_profile");
  auto credential_source = setting(profile, "credential_source");
  if (source_profile && credential_source) {
    throw AuthError("AWS profile '" + name + "' has both source_profile and credential_source", "keep one");
  }
  std::optional<Credentials> source;
  if (credential_source) {
    source = context.named_source(*credential_source, name);
  } else if (!source_profile) {
    throw AuthError("AWS profile '" + name + "' has role_arn but no source_profile nor credential_source",
                    "name the profile whose credentials assume the role");
  } else if (*source_profile == name) {
    // A profile may be its own source: its keys assume its role.
    source = static_keys(context, profile, name);
  } else {
    if (visited.contains(*source_profile) || visited.size() >= k_max_role_chain) {
      throw AuthError("the source_profile chain of AWS profile '" + name + "' loops through '" + *source_profile + "'",
                      "fix source_profile in " + context.files.config_path().string());
    }
    if (!context.files.profile(*source_profile)) {
      throw AuthError("AWS profile '" + name + "' names source_profile '" + *source_profile + "', which is not in "
                      + context.files.config_path().string() + " nor " + context.files.credentials_path().string());
    }
    source = profile_credentials(context, *source_profile, std::move(visited));
  }
  if (!source) {
    throw AuthError("the source of AWS profile '" + name + "' ('" + source_profile.value_or(name)
                      + "') has no credentials to assume its role",
                    "give it aws_access_key_id and aws_secret_access_key, or a role, SSO or credential_process");
  }
  return sts.assume_role(*source, request);
}

} // namespace

std::string read_web_identity_token(const std::filesystem::path& file, const std::string& setting_name)
{
  std::string text;
  try {
    text = util::read_file(file, k_credentials_document_limit);
  } catch (const IoError& error) {
    throw AuthError("cannot read the " + setting_name + ": " + error.what(), "check that the token is projected");
  }
  auto token = std::string(util::trim(text));
  if (token.empty()) {
    throw AuthError("the " + setting_name + " (" + file.string() + ") is empty");
  }
  return token;
}

std::optional<Credentials> profile_credentials(const ProfileContext& context, const std::string& name,
                                               std::set<std::string> visited)
{
  auto profile = context.files.profile(name);
  if (!profile) {
    return std::nullopt;
  }
  visited.insert(name);
  if (setting(*profile, "role_arn")) {
    return role_credentials(context, *profile, name, std::move(visited));
  }
  if (auto sso = read_sso_profile(*profile, context.files, name)) {
    return sso_credentials(context.env, context.overrides, *sso, name, context.client);
  }
  auto keys = static_keys(context, *profile, name);
  bool keys_in_credentials_file = context.files.file_of(name, "aws_access_key_id") == context.files.credentials_path();
  if (keys && keys_in_credentials_file) {
    return keys;
  }
  if (auto command = setting(*profile, "credential_process")) {
    return run_credential_process(*command, "credential_process of AWS profile '" + name + "'",
                                  context.process_timeout);
  }
  return keys;
}

} // namespace hubcache::aws::detail
