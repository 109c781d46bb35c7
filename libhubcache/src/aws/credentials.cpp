#include "hubcache/aws/credentials.hpp"

#include "detail.hpp"
#include "hubcache/aws/config.hpp"
#include "hubcache/aws/sts.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"
#include "sources.hpp"

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

} // namespace

std::string format_iso8601(Clock::time_point time)
{
  std::time_t seconds = Clock::to_time_t(time);
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buffer;
}

std::string mask_access_key_id(std::string_view access_key_id)
{
  if (access_key_id.size() <= 4) {
    return std::string(access_key_id.size(), '*');
  }
  return std::string(16, '*') + util::escape_control(access_key_id.substr(access_key_id.size() - 4));
}

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
  // A date from a server or a file: out of range fields are refused, and so are years the
  // clock's nanoseconds cannot hold (past 2262) or that no expiry or upload can carry.
  if (year < 1970 || year > 2200 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23
      || minute < 0 || minute > 59 || second < 0 || second > 60) {
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

CredentialChain::CredentialChain(util::Environment env, Overrides overrides)
  : CredentialChain(std::move(env), std::move(overrides), Options{})
{}

CredentialChain::CredentialChain(util::Environment env, Overrides overrides, Options options)
  : m_env(std::move(env)), m_overrides(std::move(overrides)), m_options(std::move(options))
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
  if (m_overrides.profile) {
    // As the CLI: an explicit --profile is not overridden by keys in the environment.
    m_tried.push_back("environment variables (skipped: --profile)");
    return std::nullopt;
  }
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

std::optional<Credentials> CredentialChain::from_web_identity()
{
  auto token_file = m_env.get_non_empty("AWS_WEB_IDENTITY_TOKEN_FILE");
  auto role_arn = m_env.get_non_empty("AWS_ROLE_ARN");
  if (!token_file || !role_arn) {
    m_tried.push_back("web identity (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN not both set)");
    return std::nullopt;
  }
  auto token = detail::read_web_identity_token(util::expand_user(*token_file, m_env), "AWS_WEB_IDENTITY_TOKEN_FILE");
  AssumeRoleRequest request{*role_arn,
                            m_env.get_non_empty("AWS_ROLE_SESSION_NAME")
                              .value_or("neuron-cache-" + std::to_string(Clock::to_time_t(Clock::now()))),
                            std::nullopt, std::nullopt};
  return StsClient(m_env, m_overrides).assume_role_with_web_identity(request, token);
}

Credentials CredentialChain::from_named_source(const std::string& name, const std::string& profile)
{
  std::optional<Credentials> found;
  if (name == "Environment") {
    auto key = m_env.get_non_empty("AWS_ACCESS_KEY_ID");
    auto secret = m_env.get_non_empty("AWS_SECRET_ACCESS_KEY");
    if (key && secret) {
      found = Credentials{*key, *secret, m_env.get_non_empty("AWS_SESSION_TOKEN").value_or(""), std::nullopt,
                          "environment variables"};
    }
  } else if (name == "EcsContainer") {
    found = from_container();
  } else if (name == "Ec2InstanceMetadata") {
    found = from_instance_metadata();
  } else {
    throw AuthError("credential_source of AWS profile '" + profile + "' is '" + util::escape_control(name)
                      + "', not one of Environment, EcsContainer, Ec2InstanceMetadata",
                    "fix credential_source");
  }
  if (!found) {
    throw AuthError("the credential_source of AWS profile '" + profile + "' (" + name + ") has no credentials");
  }
  return *found;
}

std::optional<Credentials> CredentialChain::from_profile()
{
  auto choice = choose_profile(m_env, m_overrides);
  auto files = SharedFiles::load(m_env);
  if (!files.profile(choice.name)) {
    if (choice.is_explicit()) {
      throw AuthError("AWS profile '" + choice.name + "' is not in " + files.credentials_path().string() + " nor in "
                        + files.config_path().string(),
                      "check " + choice.source);
    }
    m_tried.push_back("profile '" + choice.name + "' (not in " + files.credentials_path().string() + " nor "
                      + files.config_path().string() + ")");
    return std::nullopt;
  }
  detail::ProfileContext context{
    m_env,
    m_overrides,
    files,
    m_client,
    m_options.process_timeout,
    [this](const std::string& name, const std::string& profile) { return from_named_source(name, profile); }};
  auto found = detail::profile_credentials(context, choice.name);
  if (!found) {
    m_tried.push_back("profile '" + choice.name + "' (no keys, role, SSO nor credential_process in "
                      + files.credentials_path().string() + " nor " + files.config_path().string() + ")");
  }
  return found;
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
  for (auto provider :
       {&CredentialChain::from_environment, &CredentialChain::from_web_identity, &CredentialChain::from_profile,
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
                    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (or --profile), or run with an"
                    " instance or task role; --no-sign-request reads public buckets");
  }
  if (found->expiration && Clock::now() >= *found->expiration) {
    throw AuthError("the AWS credentials from " + found->source + " expired at " + format_iso8601(*found->expiration),
                    "renew them");
  }
  return *found;
}

} // namespace hubcache::aws
