#pragma once

#include "hubcache/util/environment.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

// Where AWS settings come from, read as the AWS SDKs and CLI read them: environment
// variables first, then the shared config and credentials files of the profile.
namespace hubcache::aws {

// AWS_PROFILE, else AWS_DEFAULT_PROFILE, else "default".
std::string profile_name(const util::Environment& env);
bool profile_is_explicit(const util::Environment& env);
// AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials.
std::filesystem::path credentials_file(const util::Environment& env);
// AWS_CONFIG_FILE, else ~/.aws/config.
std::filesystem::path config_file(const util::Environment& env);

using Section = std::map<std::string, std::string, std::less<>>;
// The sections of an INI file as the AWS CLI reads it (keys lowercase, values trimmed,
// `#`/`;` comments); empty when the file does not exist. Bounded in size.
std::map<std::string, Section, std::less<>> read_ini(const std::filesystem::path& file);
std::map<std::string, Section, std::less<>> parse_ini(std::string_view text);

// The profile's section: `[name]` in the credentials file, `[profile name]` (or
// `[default]`) in the config file.
std::optional<Section> credentials_section(const util::Environment& env);
std::optional<Section> config_section(const util::Environment& env);

inline constexpr std::string_view k_default_region = "us-east-1";

struct Region {
  std::string name;
  std::string source; // "AWS_REGION", "AWS_DEFAULT_REGION", "profile 'x' in <file>", "default"
};
// AWS_REGION, else AWS_DEFAULT_REGION, else the profile's `region`, else us-east-1.
Region resolve_region(const util::Environment& env);

struct Endpoint {
  std::string url;     // scheme://host[:port], no trailing '/'
  bool custom = false; // set by AWS_ENDPOINT_URL_S3/AWS_ENDPOINT_URL (an S3-compatible store)
};
// AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL, else https://s3.<region>.amazonaws.com.
Endpoint resolve_s3_endpoint(const util::Environment& env, std::string_view region);
// The AWS endpoint of a region (amazonaws.com.cn for China regions).
std::string s3_endpoint_for_region(std::string_view region);

// A region name as AWS spells them (lowercase letters, digits, '-'); guards what goes
// into host names and signatures.
bool is_valid_region(std::string_view region) noexcept;

} // namespace hubcache::aws
