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

std::string profile_name(const util::Environment& env)
{
  if (auto name = env.get_non_empty("AWS_PROFILE")) {
    return *name;
  }
  if (auto name = env.get_non_empty("AWS_DEFAULT_PROFILE")) {
    return *name;
  }
  return "default";
}

bool profile_is_explicit(const util::Environment& env)
{
  return env.get_non_empty("AWS_PROFILE").has_value() || env.get_non_empty("AWS_DEFAULT_PROFILE").has_value();
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

std::map<std::string, Section, std::less<>> parse_ini(std::string_view text)
{
  std::map<std::string, Section, std::less<>> sections;
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

std::map<std::string, Section, std::less<>> read_ini(const std::filesystem::path& file)
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

std::optional<Section> credentials_section(const util::Environment& env)
{
  auto sections = read_ini(credentials_file(env));
  if (auto it = sections.find(profile_name(env)); it != sections.end()) {
    return it->second;
  }
  return std::nullopt;
}

std::optional<Section> config_section(const util::Environment& env)
{
  auto name = profile_name(env);
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

Region resolve_region(const util::Environment& env)
{
  auto checked = [](std::string value, std::string source) {
    if (!is_valid_region(value)) {
      throw ConfigError("the AWS region '" + value + "' from " + source + " is not a region name",
                        "use a name such as us-east-1");
    }
    return Region{std::move(value), std::move(source)};
  };
  if (auto region = env.get_non_empty("AWS_REGION")) {
    return checked(*region, "AWS_REGION");
  }
  if (auto region = env.get_non_empty("AWS_DEFAULT_REGION")) {
    return checked(*region, "AWS_DEFAULT_REGION");
  }
  if (auto section = config_section(env)) {
    if (auto it = section->find("region"); it != section->end() && !it->second.empty()) {
      return checked(it->second, "profile '" + profile_name(env) + "' in " + config_file(env).string());
    }
  }
  return Region{std::string(k_default_region), "default"};
}

std::string s3_endpoint_for_region(std::string_view region)
{
  std::string suffix = region.starts_with("cn-") ? ".amazonaws.com.cn" : ".amazonaws.com";
  return "https://s3." + std::string(region) + suffix;
}

Endpoint resolve_s3_endpoint(const util::Environment& env, std::string_view region)
{
  for (const char* name : {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}) {
    if (auto url = env.get_non_empty(name)) {
      if (!url->starts_with("http://") && !url->starts_with("https://")) {
        throw ConfigError(std::string(name) + " must be an http:// or https:// URL", "fix " + std::string(name));
      }
      return Endpoint{without_trailing_slash(*url), true};
    }
  }
  return Endpoint{s3_endpoint_for_region(region), false};
}

} // namespace hubcache::aws
