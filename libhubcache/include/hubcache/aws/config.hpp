#pragma once

#include "hubcache/util/environment.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

// Where AWS settings come from, read as the AWS SDKs and CLI read them: the command line
// first, then environment variables, then the shared config and credentials files of the
// profile.
namespace hubcache::aws {

// What the command line says (--profile, --region, --endpoint-url, --no-sign-request),
// ahead of the environment and the files, as the AWS CLI's options are.
struct Overrides {
  std::optional<std::string> profile;
  std::optional<std::string> region;
  std::optional<std::string> endpoint_url; // S3's only, as the CLI's --endpoint-url
  bool no_sign_request = false;
};

struct ProfileChoice {
  std::string name;
  std::string source; // "--profile", "AWS_PROFILE", "AWS_DEFAULT_PROFILE" or "default"
  bool is_explicit() const { return source != "default"; }
};
// --profile, else AWS_PROFILE, else AWS_DEFAULT_PROFILE, else "default".
ProfileChoice choose_profile(const util::Environment& env, const Overrides& overrides = {});
std::string profile_name(const util::Environment& env, const Overrides& overrides = {});
bool profile_is_explicit(const util::Environment& env, const Overrides& overrides = {});
// AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials.
std::filesystem::path credentials_file(const util::Environment& env);
// AWS_CONFIG_FILE, else ~/.aws/config.
std::filesystem::path config_file(const util::Environment& env);

using Section = std::map<std::string, std::string, std::less<>>;
using IniFile = std::map<std::string, Section, std::less<>>;
// The sections of an INI file as the AWS CLI reads it (keys lowercase, values trimmed,
// `#`/`;` comments); empty when the file does not exist. Bounded in size.
IniFile read_ini(const std::filesystem::path& file);
IniFile parse_ini(std::string_view text);
// A section's value for KEY; nullopt when it is missing or empty (botocore treats both alike).
std::optional<std::string> setting(const Section& section, std::string_view key);

// The shared config and credentials files, read once: profiles (a profile's settings are
// its config-file section with its credentials-file section over it, as botocore merges
// them) and `[sso-session NAME]` sections.
class SharedFiles {
public:
  static SharedFiles load(const util::Environment& env);
  SharedFiles(IniFile config, std::filesystem::path config_path, IniFile credentials,
              std::filesystem::path credentials_path);

  std::optional<Section> profile(std::string_view name) const;
  std::optional<Section> sso_session(std::string_view name) const;
  // The file a profile's setting comes from (the credentials file when it is in both).
  const std::filesystem::path& file_of(std::string_view profile, std::string_view key) const;
  const std::filesystem::path& config_path() const { return m_config_path; }
  const std::filesystem::path& credentials_path() const { return m_credentials_path; }

private:
  const Section* config_section(std::string_view name) const;
  const Section* credentials_section(std::string_view name) const;

  IniFile m_config;
  std::filesystem::path m_config_path;
  IniFile m_credentials;
  std::filesystem::path m_credentials_path;
};

// The profile's section: `[name]` in the credentials file, `[profile name]` (or
// `[default]`) in the config file.
std::optional<Section> credentials_section(const util::Environment& env, const Overrides& overrides = {});
std::optional<Section> config_section(const util::Environment& env, const Overrides& overrides = {});

inline constexpr std::string_view k_default_region = "us-east-1";

struct Region {
  std::string name;
  std::string source; // "--region", "AWS_REGION", "AWS_DEFAULT_REGION", "profile 'x' in <file>", "default"
};
// --region, else AWS_REGION, else AWS_DEFAULT_REGION, else the profile's `region`, else us-east-1.
Region resolve_region(const util::Environment& env, const Overrides& overrides = {});

struct Endpoint {
  std::string url;     // scheme://host[:port], no trailing '/'
  bool custom = false; // set by the user (for S3: an S3-compatible store, path-style)
  std::string source;  // "--endpoint-url", "AWS_ENDPOINT_URL_S3", "profile 'x' in <file>", "default"
};
// The endpoint of an AWS service (`service_id` as the SDKs spell it in variables: "S3",
// "STS", "SSO"): AWS_ENDPOINT_URL_<ID>, else AWS_ENDPOINT_URL, else the profile's
// `endpoint_url`, else `default_url` (AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true skips the
// variables and the profile).
Endpoint resolve_service_endpoint(const util::Environment& env, const Overrides& overrides, std::string_view service_id,
                                  std::string default_url);
// --endpoint-url, else as resolve_service_endpoint, else https://s3.<region>.amazonaws.com.
Endpoint resolve_s3_endpoint(const util::Environment& env, std::string_view region, const Overrides& overrides = {});
// The AWS endpoint of a region (amazonaws.com.cn for China regions).
std::string s3_endpoint_for_region(std::string_view region);
// https://<service>.<region>.amazonaws.com (.cn in China regions).
std::string aws_endpoint(std::string_view service_host, std::string_view region);

// A region name as AWS spells them (lowercase letters, digits, '-'); guards what goes
// into host names and signatures.
bool is_valid_region(std::string_view region) noexcept;

} // namespace hubcache::aws
