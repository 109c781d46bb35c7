// SSO (IAM Identity Center) profiles, as the AWS CLI v2 uses them after `aws sso login`:
// the cached access token is exchanged for the role's credentials at the portal,
// GET /federation/credentials?account_id=..&role_name=.. with x-amz-sso_bearer_token.
// Both forms: a legacy profile with sso_start_url/sso_region, and one naming an
// [sso-session]. The token is never refreshed here: `aws sso login` does that.
#include "sources.hpp"

#include "detail.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/text.hpp"

#include <nlohmann/json.hpp>

namespace hubcache::aws::detail {

namespace {

std::string login_hint(const std::string& profile_name)
{
  return "run: aws sso login --profile " + util::quote_argument(profile_name);
}

} // namespace

std::optional<SsoProfile> read_sso_profile(const Section& profile, const SharedFiles& files,
                                           const std::string& profile_name)
{
  auto session_name = setting(profile, "sso_session").value_or("");
  if (session_name.empty() && setting(profile, "sso_start_url").value_or("").empty()) {
    return std::nullopt;
  }
  SsoProfile sso;
  sso.account_id = setting(profile, "sso_account_id").value_or("");
  sso.role_name = setting(profile, "sso_role_name").value_or("");
  std::string where = "AWS profile '" + profile_name + "'";
  if (!session_name.empty()) {
    auto session = files.sso_session(session_name);
    if (!session) {
      throw AuthError(where + " names sso_session " + session_name + ", which is not in "
                        + files.config_path().string(),
                      "add an [sso-session " + session_name + "] section (aws configure sso-session)");
    }
    sso.session_name = session_name;
    sso.start_url = setting(*session, "sso_start_url").value_or("");
    sso.region = setting(*session, "sso_region").value_or("");
    where = "[sso-session " + session_name + "]";
  } else {
    sso.start_url = setting(profile, "sso_start_url").value_or("");
    sso.region = setting(profile, "sso_region").value_or("");
  }
  for (auto [value, name] : {std::pair{&sso.start_url, "sso_start_url"}, std::pair{&sso.region, "sso_region"}}) {
    if (value->empty()) {
      throw AuthError(where + " has no " + name, "complete it with aws configure sso");
    }
  }
  if (sso.account_id.empty() || sso.role_name.empty()) {
    throw AuthError("AWS profile '" + profile_name + "' uses SSO but has no sso_account_id and sso_role_name",
                    "complete it with aws configure sso");
  }
  if (!is_valid_region(sso.region)) {
    throw AuthError("the sso_region of AWS profile '" + profile_name + "' is not a region name");
  }
  return sso;
}

std::filesystem::path sso_token_file(const util::Environment& env, const SsoProfile& sso)
{
  return util::expand_user("~/.aws/sso/cache", env)
         / (util::hex_digest(util::HashAlgorithm::sha1, sso.cache_key()) + ".json");
}

std::string read_sso_token(const std::filesystem::path& file, const std::string& profile_name)
{
  std::optional<std::string> text;
  try {
    text = util::read_file_if_exists(file, k_credentials_document_limit);
  } catch (const IoError& error) {
    throw AuthError(std::string("cannot read the cached SSO token: ") + error.what(), login_hint(profile_name));
  }
  if (!text) {
    throw AuthError("no SSO session for AWS profile '" + profile_name + "' (no " + file.string() + ")",
                    login_hint(profile_name));
  }
  auto document = nlohmann::json::parse(*text, nullptr, false);
  if (!document.is_object() || !document.contains("accessToken") || !document["accessToken"].is_string()
      || !document.contains("expiresAt") || !document["expiresAt"].is_string()) {
    throw AuthError("the cached SSO token " + file.string() + " is not one the AWS CLI writes",
                    login_hint(profile_name));
  }
  // The CLI has written both "...Z" and "...UTC".
  auto expires = document["expiresAt"].get<std::string>();
  if (expires.ends_with("UTC")) {
    expires = expires.substr(0, expires.size() - 3) + "Z";
  }
  auto expiration = parse_iso8601(expires);
  if (!expiration || Clock::now() >= *expiration) {
    throw AuthError("the SSO session of AWS profile '" + profile_name + "' has expired", login_hint(profile_name));
  }
  return document["accessToken"].get<std::string>();
}

Credentials parse_sso_role_credentials(std::string_view body, const std::string& source)
{
  auto document = nlohmann::json::parse(body, nullptr, false);
  auto role = document.is_object() ? document.find("roleCredentials") : document.end();
  if (!document.is_object() || role == document.end() || !role->is_object()) {
    throw AuthError("the SSO portal answered without role credentials for " + source);
  }
  Credentials credentials;
  for (auto [field, name] : {std::pair{&credentials.access_key_id, "accessKeyId"},
                             std::pair{&credentials.secret_access_key, "secretAccessKey"},
                             std::pair{&credentials.session_token, "sessionToken"}}) {
    auto it = role->find(name);
    if (it == role->end() || !it->is_string() || it->get<std::string>().empty()) {
      throw AuthError("the SSO portal answered without " + std::string(name) + " for " + source);
    }
    *field = it->get<std::string>();
  }
  auto expiration = role->find("expiration");
  if (expiration == role->end() || !expiration->is_number_integer()) {
    throw AuthError("the SSO portal answered without an expiration for " + source);
  }
  credentials.expiration = Clock::time_point(std::chrono::milliseconds(expiration->get<long long>()));
  credentials.source = source;
  return credentials;
}

Credentials sso_credentials(const util::Environment& env, const Overrides& overrides, const SsoProfile& sso,
                            const std::string& profile_name, http::Client& client)
{
  auto token = read_sso_token(sso_token_file(env, sso), profile_name);
  auto endpoint = resolve_service_endpoint(env, overrides, "SSO", aws_endpoint("portal.sso", sso.region));
  std::string source = "SSO (profile '" + profile_name + "', account " + util::escape_control(sso.account_id)
                       + ", role " + util::escape_control(sso.role_name) + ")";
  http::Request request;
  request.url = endpoint.url + "/federation/credentials?account_id=" + http::url_encode(sso.account_id)
                + "&role_name=" + http::url_encode(sso.role_name);
  request.headers.emplace_back("x-amz-sso_bearer_token", token);
  request.total_timeout = std::chrono::seconds(30);
  CappedBody body(k_credentials_document_limit);
  http::Response response;
  try {
    response = client.perform(request, &body);
  } catch (const http::TransportError& error) {
    throw AuthError("cannot reach the SSO portal at " + http::url_origin(request.url) + ": " + error.what(),
                    "check the network and AWS_ENDPOINT_URL_SSO");
  }
  if (response.status == 401 || response.status == 403) {
    throw AuthError("the SSO portal refused the session of AWS profile '" + profile_name + "' (HTTP "
                      + std::to_string(response.status) + ")",
                    login_hint(profile_name) + "; check sso_account_id and sso_role_name");
  }
  if (!response.ok()) {
    throw AuthError("the SSO portal at " + http::url_origin(request.url) + " answered HTTP "
                    + std::to_string(response.status) + " for " + source);
  }
  return parse_sso_role_credentials(body.body(), source);
}

} // namespace hubcache::aws::detail
