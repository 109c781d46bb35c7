#include "hubcache/aws/config.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"

#include <algorithm>
#include <cctype>

namespace hubcache::aws {

namespace {

constexpr std::uint64_t k_ini_limit = std::uint64_t{1} << 20;

std::string lowercase(std::string_view text)
{
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string without_trailing_slash(std::string url)
{
  while (!url.empty() && url.back() == '/') {
    url.pop_back();
  }
  return url;
}

} // namespace

ProfileChoice choose_profile(const util::Environment& env, const Overrides& overrides)
{
  if (overrides.profile && !overrides.profile->empty()) {
    return {*overrides.profile, "--profile"};
  }
  for (const char* name : {"AWS_PROFILE", "AWS_DEFAULT_PROFILE"}) {
    if (auto value = env.get_non_empty(name)) {
      return {*value, name};
    }
  }
  return {"default", "default"};
}

std::string profile_name(const util::Environment& env, const Overrides& overrides)
{
  return choose_profile(env, overrides).name;
}

bool profile_is_explicit(const util::Environment& env, const Overrides& overrides)
{
  return choose_profile(env, overrides).is_explicit();
}

std::filesystem::path credentials_file(const util::Environment& env)
{
  if (auto path = env.get_non_empty("AWS_SHARED_CREDENTIALS_FILE")) {
    return util::expand_user(*path, env);
  }
  return util::expand_user("~/.aws/credentials", env);
}

std::filesystem::path config_file(const util::Environment& env)
{
  if (auto path = env.get_non_empty("AWS_CONFIG_FILE")) {
    return util::expand_user(*path, env);
  }
  return util::expand_user("~/.aws/config", env);
}

std::optional<std::string> setting(const Section& section, std::string_view key)
{
  auto it = section.find(key);
  if (it == section.end() || it->second.empty()) {
    return std::nullopt;
  }
  return it->second;
}

IniFile parse_ini(std::string_view text)
{
  IniFile sections;
  Section* current = nullptr;
  std::string last_key;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    auto raw = text.substr(start, end - start);
    start = end + 1;
    auto line = util::trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') {
      continue;
    }
    if (line.front() == '[' && line.back() == ']') {
      auto name = std::string(util::trim(line.substr(1, line.size() - 2)));
      current = &sections[name];
      last_key.clear();
      continue;
    }
    if (current == nullptr) {
      continue;
    }
    auto equals = line.find('=');
    if (equals == std::string_view::npos) {
      continue;
    }
    bool nested = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
    if (nested && !last_key.empty()) {
      continue; // sub-settings (e.g. `s3 =` blocks) are not read here
    }
    auto key = lowercase(util::trim(line.substr(0, equals)));
    auto value = std::string(util::trim(line.substr(equals + 1)));
    // Inline comments after a value: `key = value ; note`, as the CLI strips them.
    for (auto marker : {" #", " ;", "\t#", "\t;"}) {
      if (auto pos = value.find(marker); pos != std::string::npos) {
        value = std::string(util::trim(value.substr(0, pos)));
      }
    }
    (*current)[key] = value;
    last_key = value.empty() ? key : std::string();
  }
  return sections;
}

IniFile read_ini(const std::filesystem::path& file)
{
  std::optional<std::string> text;
  try {
    text = util::read_file_if_exists(file, k_ini_limit);
  } catch (const IoError& error) {
    throw ConfigError(std::string("cannot read the AWS settings file: ") + error.what(),
                      "fix its permissions or point AWS_CONFIG_FILE/AWS_SHARED_CREDENTIALS_FILE elsewhere");
  }
  if (!text) {
    return {};
  }
  return parse_ini(*text);
}

SharedFiles SharedFiles::load(const util::Environment& env)
{
  auto config = config_file(env);
  auto credentials = credentials_file(env);
  return SharedFiles(read_ini(config), config, read_ini(credentials), credentials);
}

SharedFiles::SharedFiles(IniFile config, std::filesystem::path config_path, IniFile credentials,
                         std::filesystem::path credentials_path)
  : m_config(std::move(config)), m_config_path(std::move(config_path)), m_credentials(std::move(credentials)),
    m_credentials_path(std::move(credentials_path))
{}

const Section* SharedFiles::config_section(std::string_view name) const
{
  if (auto it = m_config.find("profile " + std::string(name)); it != m_config.end()) {
    return &it->second;
  }
  if (name == "default") {
    if (auto it = m_config.find("default"); it != m_config.end()) {
      return &it->second;
    }
  }
  return nullptr;
}

const Section* SharedFiles::credentials_section(std::string_view name) const
{
  auto it = m_credentials.find(name);
  return it != m_credentials.end() ? &it->second : nullptr;
}

std::optional<Section> SharedFiles::profile(std::string_view name) const
{
  const auto* config = config_section(name);
  const auto* credentials = credentials_section(name);
  if (config == nullptr && credentials == nullptr) {
    return std::nullopt;
  }
  Section merged = config != nullptr ? *config : Section{};
  if (credentials != nullptr) {
    for (const auto& [key, value] : *credentials) {
      merged[key] = value;
    }
  }
  return merged;
}

std::optional<Section> SharedFiles::sso_session(std::string_view name) const
{
  if (auto it = m_config.find("sso-session " + std::string(name)); it != m_config.end()) {
    return it->second;
  }
  return std::nullopt;
}

const std::filesystem::path& SharedFiles::file_of(std::string_view profile, std::string_view key) const
{
  const auto* credentials = credentials_section(profile);
  return credentials != nullptr && credentials->contains(key) ? m_credentials_path : m_config_path;
}

std::optional<Section> credentials_section(const util::Environment& env, const Overrides& overrides)
{
  auto sections = read_ini(credentials_file(env));
  if (auto it = sections.find(profile_name(env, overrides)); it != sections.end()) {
    return it->second;
  }
  return std::nullopt;
}

std::optional<Section> config_section(const util::Environment& env, const Overrides& overrides)
{
  auto name = profile_name(env, overrides);
  auto sections = read_ini(config_file(env));
  if (auto it = sections.find("profile " + name); it != sections.end()) {
    return it->second;
  }
  if (name == "default") {
    if (auto it = sections.find("default"); it != sections.end()) {
      return it->second;
    }
  }
  return std::nullopt;
}

bool is_valid_region(std::string_view region) noexcept
{
  if (region.empty() || region.size() > 64) {
    return false;
  }
  return std::all_of(region.begin(), region.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

Region resolve_region(const util::Environment& env, const Overrides& overrides)
{
  auto checked = [](std::string value, std::string source) {
    if (!is_valid_region(value)) {
      throw ConfigError("the AWS region '" + util::escape_control(value) + "' from " + source + " is not a region name",
                        "use a name such as us-east-1");
    }
    return Region{std::move(value), std::move(source)};
  };
  if (overrides.region && !overrides.region->empty()) {
    return checked(*overrides.region, "--region");
  }
  for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    if (auto region = env.get_non_empty(name)) {
      return checked(*region, name);
    }
  }
  if (auto section = config_section(env, overrides)) {
    if (auto it = section->find("region"); it != section->end() && !it->second.empty()) {
      return checked(it->second, "profile '" + profile_name(env, overrides) + "' in " + config_file(env).string());
    }
  }
  return Region{std::string(k_default_region), "default"};
}

std::string aws_endpoint(std::string_view service_host, std::string_view region)
{
  std::string suffix = region.starts_with("cn-") ? ".amazonaws.com.cn" : ".amazonaws.com";
  return "https://" + std::string(service_host) + "." + std::string(region) + suffix;
}

std::string s3_endpoint_for_region(std::string_view region)
{
  return aws_endpoint("s3", region);
}

Endpoint resolve_service_endpoint(const util::Environment& env, const Overrides& overrides, std::string_view service_id,
                                  std::string default_url)
{
  auto checked = [](const std::string& url, const std::string& source) {
    if (!url.starts_with("http://") && !url.starts_with("https://")) {
      throw ConfigError("the endpoint from " + source + " must be an http:// or https:// URL", "fix " + source);
    }
    return Endpoint{without_trailing_slash(url), true, source};
  };
  auto ignore = env.get_non_empty("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
  if (ignore && lowercase(*ignore) == "true") {
    return Endpoint{std::move(default_url), false, "default"};
  }
  // AWS_ENDPOINT_URL_<ID> first, then the global one.
  for (auto name : {std::string("AWS_ENDPOINT_URL") + "_" + std::string(service_id), std::string("AWS_ENDPOINT_URL")}) {
    if (auto url = env.get_non_empty(name)) {
      return checked(*url, name);
    }
  }
  if (auto section = config_section(env, overrides)) {
    if (auto it = section->find("endpoint_url"); it != section->end() && !it->second.empty()) {
      return checked(it->second, "profile '" + profile_name(env, overrides) + "' in " + config_file(env).string());
    }
  }
  return Endpoint{std::move(default_url), false, "default"};
}

Endpoint resolve_s3_endpoint(const util::Environment& env, std::string_view region, const Overrides& overrides)
{
  if (overrides.endpoint_url && !overrides.endpoint_url->empty()) {
    const auto& url = *overrides.endpoint_url;
    if (!url.starts_with("http://") && !url.starts_with("https://")) {
      throw ConfigError("--endpoint-url must be an http:// or https:// URL");
    }
    return Endpoint{without_trailing_slash(url), true, "--endpoint-url"};
  }
  return resolve_service_endpoint(env, overrides, "S3", s3_endpoint_for_region(region));
}

} // namespace hubcache::aws
