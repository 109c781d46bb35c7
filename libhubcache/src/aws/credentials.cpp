#include "hubcache/aws/credentials.hpp"

#include "detail.hpp"
#include "hubcache/aws/config.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>

namespace hubcache::aws {

namespace {

constexpr std::size_t k_metadata_limit = 64 * 1024;

bool flag_true(const util::Environment& env, const char* name)
{
  auto value = env.get_non_empty(name);
  if (!value) {
    return false;
  }
  std::string lower = *value;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower == "true" || lower == "1";
}

// The host of an absolute URL, without port or brackets.
std::string host_of(std::string_view url)
{
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos) {
    return {};
  }
  auto rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    rest = rest.substr(at + 1);
  }
  if (rest.starts_with("[")) {
    return std::string(rest.substr(1, rest.find(']') - 1));
  }
  return std::string(rest.substr(0, rest.find(':')));
}

// Full container-credential URIs must stay on this host or the container agent, as the SDKs
// require (a token must not be sent anywhere else), unless they are https.
bool allowed_full_uri(std::string_view url)
{
  if (url.starts_with("https://")) {
    return true;
  }
  if (!url.starts_with("http://")) {
    return false;
  }
  auto host = host_of(url);
  return host == "localhost" || host.starts_with("127.") || host == "::1" || host == "169.254.170.2"
         || host == "169.254.170.23" || host == "fd00:ec2::23";
}

Credentials from_json(const std::string& body, const std::string& source)
{
  auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("AccessKeyId") || !parsed.contains("SecretAccessKey")
      || !parsed["AccessKeyId"].is_string() || !parsed["SecretAccessKey"].is_string()) {
    throw AuthError("the " + source + " answered without credentials");
  }
  if (parsed.contains("Code") && parsed["Code"].is_string() && parsed["Code"] != "Success") {
    throw AuthError("the " + source + " refused to give credentials (" + parsed["Code"].get<std::string>() + ")");
  }
  Credentials credentials;
  credentials.access_key_id = parsed["AccessKeyId"].get<std::string>();
  credentials.secret_access_key = parsed["SecretAccessKey"].get<std::string>();
  if (parsed.contains("Token") && parsed["Token"].is_string()) {
    credentials.session_token = parsed["Token"].get<std::string>();
  }
  if (parsed.contains("Expiration") && parsed["Expiration"].is_string()) {
    credentials.expiration = parse_iso8601(parsed["Expiration"].get<std::string>());
    if (!credentials.expiration) {
      throw AuthError("the " + source + " gave credentials with an unreadable expiration time");
    }
  }
  credentials.source = source;
  return credentials;
}

std::string format_time(Clock::time_point time)
{
  std::time_t seconds = Clock::to_time_t(time);
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buffer;
}

} // namespace

std::optional<Clock::time_point> parse_iso8601(std::string_view text)
{
  std::tm parts{};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  std::string copy(text);
  if (std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &year, &month, &day, &hour, &minute, &second) != 6) {
    return std::nullopt;
  }
  if (!(copy.ends_with("Z") || copy.ends_with("+00:00"))) {
    return std::nullopt;
  }
  parts.tm_year = year - 1900;
  parts.tm_mon = month - 1;
  parts.tm_mday = day;
  parts.tm_hour = hour;
  parts.tm_min = minute;
  parts.tm_sec = second;
  return Clock::from_time_t(::timegm(&parts));
}

CredentialChain::CredentialChain(util::Environment env) : CredentialChain(std::move(env), Options{}) {}

CredentialChain::CredentialChain(util::Environment env, Options options)
  : m_env(std::move(env)), m_options(std::move(options))
{}

bool CredentialChain::fresh(const Credentials& credentials) const
{
  return !credentials.expiration || Clock::now() + m_options.refresh_margin < *credentials.expiration;
}

Credentials CredentialChain::get()
{
  std::lock_guard lock(m_mutex);
  if (!m_current || !fresh(*m_current)) {
    m_current = resolve();
  }
  return *m_current;
}

Credentials CredentialChain::refresh()
{
  std::lock_guard lock(m_mutex);
  m_current = resolve();
  return *m_current;
}

std::optional<Credentials> CredentialChain::from_environment()
{
  auto key = m_env.get_non_empty("AWS_ACCESS_KEY_ID");
  auto secret = m_env.get_non_empty("AWS_SECRET_ACCESS_KEY");
  if (key.has_value() != secret.has_value()) {
    throw AuthError(std::string(key ? "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
                                    : "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"),
                    "set both, or neither to use a profile or instance credentials");
  }
  if (!key) {
    m_tried.push_back("environment variables (AWS_ACCESS_KEY_ID not set)");
    return std::nullopt;
  }
  return Credentials{*key, *secret, m_env.get_non_empty("AWS_SESSION_TOKEN").value_or(""), std::nullopt,
                     "environment variables"};
}

std::optional<Credentials> CredentialChain::from_profile()
{
  auto name = profile_name(m_env);
  auto read_keys = [&](const std::optional<Section>& section,
                       const std::filesystem::path& file) -> std::optional<Credentials> {
    if (!section) {
      return std::nullopt;
    }
    auto key = section->find("aws_access_key_id");
    auto secret = section->find("aws_secret_access_key");
    if (key == section->end() || secret == section->end() || key->second.empty() || secret->second.empty()) {
      return std::nullopt;
    }
    Credentials credentials{
      key->second, secret->second, {}, std::nullopt, "profile '" + name + "' in " + file.string()};
    if (auto token = section->find("aws_session_token"); token != section->end()) {
      credentials.session_token = token->second;
    }
    return credentials;
  };
  auto credentials_section_found = credentials_section(m_env);
  if (auto found = read_keys(credentials_section_found, credentials_file(m_env))) {
    return found;
  }
  auto config = config_section(m_env);
  if (auto found = read_keys(config, config_file(m_env))) {
    return found;
  }
  if (config) {
    for (const char* key :
         {"role_arn", "sso_session", "sso_start_url", "credential_process", "web_identity_token_file"}) {
      if (config->contains(key)) {
        throw AuthError("AWS profile '" + name + "' in " + config_file(m_env).string() + " uses " + key
                          + ", which neuron-cache cannot use to get credentials",
                        "export temporary keys (aws configure export-credentials --format env) or use a profile"
                        " with aws_access_key_id");
      }
    }
  }
  if (!credentials_section_found && !config && profile_is_explicit(m_env)) {
    throw AuthError("AWS profile '" + name + "' is not in " + credentials_file(m_env).string() + " nor in "
                      + config_file(m_env).string(),
                    "check AWS_PROFILE");
  }
  m_tried.push_back("profile '" + name + "' (no keys in " + credentials_file(m_env).string() + " nor "
                    + config_file(m_env).string() + ")");
  return std::nullopt;
}

std::optional<Credentials> CredentialChain::from_container()
{
  std::string url;
  if (auto relative = m_env.get_non_empty("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
    url = m_options.container_base + (relative->starts_with("/") ? "" : "/") + *relative;
  } else if (auto full = m_env.get_non_empty("AWS_CONTAINER_CREDENTIALS_FULL_URI")) {
    if (!allowed_full_uri(*full)) {
      throw AuthError("AWS_CONTAINER_CREDENTIALS_FULL_URI must be https or name this host or the container agent",
                      "fix AWS_CONTAINER_CREDENTIALS_FULL_URI");
    }
    url = *full;
  } else {
    m_tried.push_back("container credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/_FULL_URI not set)");
    return std::nullopt;
  }
  std::string source = "container credentials at " + http::url_origin(url);
  http::Request request;
  request.url = url;
  request.connect_timeout = m_options.metadata_timeout;
  request.total_timeout = std::chrono::seconds(5);
  std::optional<std::string> token;
  if (auto file = m_env.get_non_empty("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")) {
    try {
      token = std::string(util::trim(util::read_file(util::expand_user(*file, m_env), k_metadata_limit)));
    } catch (const IoError& error) {
      throw AuthError(std::string("cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: ") + error.what());
    }
  } else if (auto value = m_env.get_non_empty("AWS_CONTAINER_AUTHORIZATION_TOKEN")) {
    token = *value;
  }
  if (token) {
    request.headers.emplace_back("Authorization", *token);
  }
  http::Response response;
  detail::CappedBody body(k_metadata_limit);
  for (int attempt = 1;; ++attempt) {
    try {
      response = m_client.perform(request, &body);
    } catch (const http::TransportError& error) {
      if (attempt < 3) {
        continue;
      }
      throw AuthError("the " + source + " did not answer (" + error.what() + ")",
                      "check that the container credentials agent is running");
    }
    if (response.status >= 500 && attempt < 3) {
      body.body().clear();
      continue;
    }
    break;
  }
  if (!response.ok()) {
    throw AuthError("the " + source + " answered HTTP " + std::to_string(response.status),
                    "check the task or job role");
  }
  return from_json(body.body(), source);
}

std::optional<Credentials> CredentialChain::from_instance_metadata()
{
  if (flag_true(m_env, "AWS_EC2_METADATA_DISABLED")) {
    m_tried.push_back("EC2 instance metadata (AWS_EC2_METADATA_DISABLED)");
    return std::nullopt;
  }
  std::string endpoint = m_env.get_non_empty("AWS_EC2_METADATA_SERVICE_ENDPOINT").value_or("http://169.254.169.254");
  while (!endpoint.empty() && endpoint.back() == '/') {
    endpoint.pop_back();
  }
  std::string source = "EC2 instance metadata at " + http::url_origin(endpoint);
  auto call = [&](const std::string& method, const std::string& path,
                  std::vector<std::pair<std::string, std::string>> headers) -> std::optional<std::string> {
    http::Request request;
    request.method = method;
    request.url = endpoint + path;
    request.headers = std::move(headers);
    request.connect_timeout = m_options.metadata_timeout;
    request.total_timeout = std::chrono::seconds(5);
    detail::CappedBody body(k_metadata_limit);
    auto response = m_client.perform(request, &body);
    if (!response.ok()) {
      return std::nullopt;
    }
    return body.body();
  };
  try {
    // IMDSv2: a session token first, then the role, then its credentials.
    auto token = call("PUT", "/latest/api/token", {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}});
    if (!token || token->empty()) {
      m_tried.push_back(source + " (no IMDSv2 token)");
      return std::nullopt;
    }
    std::vector<std::pair<std::string, std::string>> auth{{"X-aws-ec2-metadata-token", *token}};
    auto roles = call("GET", "/latest/meta-data/iam/security-credentials/", auth);
    std::string role;
    if (roles) {
      role = std::string(util::trim(roles->substr(0, roles->find('\n'))));
    }
    if (role.empty() || role.find('/') != std::string::npos) {
      m_tried.push_back(source + " (no instance role)");
      return std::nullopt;
    }
    auto document = call("GET", "/latest/meta-data/iam/security-credentials/" + http::url_encode(role), auth);
    if (!document) {
      m_tried.push_back(source + " (no credentials for role " + role + ")");
      return std::nullopt;
    }
    return from_json(*document, source);
  } catch (const http::TransportError&) {
    m_tried.push_back(source + " (no answer)");
    return std::nullopt;
  }
}

Credentials CredentialChain::resolve()
{
  m_tried.clear();
  std::optional<Credentials> found;
  for (auto provider : {&CredentialChain::from_environment, &CredentialChain::from_profile,
                        &CredentialChain::from_container, &CredentialChain::from_instance_metadata}) {
    found = (this->*provider)();
    if (found) {
      break;
    }
  }
  if (!found) {
    std::string tried;
    for (const auto& item : m_tried) {
      tried += (tried.empty() ? "" : "; ") + item;
    }
    throw AuthError("no AWS credentials found; tried " + tried,
                    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run with an instance or"
                    " task role");
  }
  if (found->expiration && Clock::now() >= *found->expiration) {
    throw AuthError("the AWS credentials from " + found->source + " expired at " + format_time(*found->expiration),
                    "renew them");
  }
  return *found;
}

} // namespace hubcache::aws
