#include "hubcache/aws/sts.hpp"

#include "detail.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/text.hpp"

#include <pugixml.hpp>

namespace hubcache::aws {

namespace {

// STS answers are a few KiB: anything bigger is not STS.
constexpr std::size_t k_sts_limit = 64 * 1024;
constexpr const char* k_sts_version = "2011-06-15";

// STS text as it may appear in one line of a message.
std::string sts_text(std::string_view text)
{
  return util::escape_control(text, 300);
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& form)
{
  std::string body;
  for (const auto& [name, value] : form) {
    body += (body.empty() ? "" : "&") + http::url_encode(name) + "=" + http::url_encode(value);
  }
  return body;
}

struct Document {
  pugi::xml_document xml;
  bool ok = false;
};

void parse(Document& document, const std::string& body)
{
  auto result = document.xml.load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8);
  document.ok = static_cast<bool>(result);
}

// `<ErrorResponse><Error><Code>..</Code><Message>..</Message></Error></ErrorResponse>`.
std::string error_detail(const std::string& body, long status)
{
  Document document;
  parse(document, body);
  auto error = document.xml.child("ErrorResponse").child("Error");
  std::string code = error.child_value("Code");
  std::string message = error.child_value("Message");
  if (!document.ok || code.empty()) {
    return "HTTP " + std::to_string(status);
  }
  return sts_text(code) + (message.empty() ? "" : ": " + sts_text(message));
}

} // namespace

namespace detail {

Credentials parse_sts_credentials(const std::string& body, const std::string& action, const std::string& source)
{
  Document document;
  parse(document, body);
  auto result = document.xml.child((action + "Response").c_str()).child((action + "Result").c_str());
  auto node = result.child("Credentials");
  Credentials credentials;
  credentials.access_key_id = util::trim(node.child_value("AccessKeyId"));
  credentials.secret_access_key = util::trim(node.child_value("SecretAccessKey"));
  credentials.session_token = util::trim(node.child_value("SessionToken"));
  if (!document.ok || credentials.access_key_id.empty() || credentials.secret_access_key.empty()
      || credentials.session_token.empty()) {
    throw AuthError("STS answered " + action + " without credentials");
  }
  credentials.expiration = parse_iso8601(util::trim(node.child_value("Expiration")));
  if (!credentials.expiration) {
    throw AuthError("STS answered " + action + " with an unreadable expiration time");
  }
  credentials.source = source;
  return credentials;
}

} // namespace detail

StsClient::StsClient(const util::Environment& env, const Overrides& overrides)
  : m_region(resolve_region(env, overrides).name),
    m_endpoint(resolve_service_endpoint(env, overrides, "STS", aws_endpoint("sts", m_region)))
{}

std::string StsClient::post(const std::string& action, std::vector<std::pair<std::string, std::string>> form,
                            const Credentials* signer)
{
  form.insert(form.begin(), {{"Action", action}, {"Version", k_sts_version}});
  http::Request request;
  request.method = "POST";
  request.url = m_endpoint.url + "/";
  request.body = form_encode(form);
  request.total_timeout = std::chrono::seconds(30);
  request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
  if (signer != nullptr) {
    // libcurl hashes only POSTFIELDS bodies: say the hash of ours, so that it signs it.
    request.headers.emplace_back("x-amz-content-sha256", util::hex_digest(util::HashAlgorithm::sha256, *request.body));
    if (!signer->session_token.empty()) {
      request.headers.emplace_back("x-amz-security-token", signer->session_token);
    }
    request.aws_sigv4 = http::AwsSigV4{m_region, "sts", signer->access_key_id, signer->secret_access_key};
  }
  detail::CappedBody body(k_sts_limit);
  http::Response response;
  for (int attempt = 1;; ++attempt) {
    body.body().clear();
    try {
      response = m_client.perform(request, &body);
    } catch (const http::TransportError& error) {
      if (error.retryable() && attempt < 3) {
        continue;
      }
      throw AuthError("cannot reach STS at " + http::url_origin(m_endpoint.url) + " for " + action + ": "
                        + error.what(),
                      "check the network and AWS_ENDPOINT_URL_STS");
    }
    if (response.status >= 500 && attempt < 3) {
      continue;
    }
    break;
  }
  if (!response.ok()) {
    auto text = response.body.empty() ? body.body() : response.body;
    throw AuthError("STS at " + http::url_origin(m_endpoint.url) + " refused " + action + " ("
                    + error_detail(text, response.status) + ")");
  }
  return body.body();
}

Credentials StsClient::assume_role(const Credentials& source, const AssumeRoleRequest& request)
{
  std::vector<std::pair<std::string, std::string>> form{{"RoleArn", request.role_arn},
                                                        {"RoleSessionName", request.session_name}};
  if (request.external_id) {
    form.emplace_back("ExternalId", *request.external_id);
  }
  if (request.duration_seconds) {
    form.emplace_back("DurationSeconds", std::to_string(*request.duration_seconds));
  }
  std::string described = "role " + request.role_arn + " (assumed with " + source.source + ")";
  try {
    return detail::parse_sts_credentials(post("AssumeRole", std::move(form), &source), "AssumeRole", described);
  } catch (const AuthError& error) {
    throw AuthError(std::string(error.what()) + " to assume " + request.role_arn,
                    "check the role's trust policy and the credentials of " + source.source);
  }
}

Credentials StsClient::assume_role_with_web_identity(const AssumeRoleRequest& request, const std::string& token)
{
  std::vector<std::pair<std::string, std::string>> form{
    {"RoleArn", request.role_arn}, {"RoleSessionName", request.session_name}, {"WebIdentityToken", token}};
  if (request.duration_seconds) {
    form.emplace_back("DurationSeconds", std::to_string(*request.duration_seconds));
  }
  std::string described = "role " + request.role_arn + " (web identity)";
  try {
    return detail::parse_sts_credentials(post("AssumeRoleWithWebIdentity", std::move(form), nullptr),
                                         "AssumeRoleWithWebIdentity", described);
  } catch (const AuthError& error) {
    throw AuthError(std::string(error.what()) + " to assume " + request.role_arn,
                    "check the role's trust policy for the identity provider, and the token file");
  }
}

CallerIdentity StsClient::get_caller_identity(const Credentials& credentials)
{
  auto body = post("GetCallerIdentity", {}, &credentials);
  Document document;
  parse(document, body);
  auto result = document.xml.child("GetCallerIdentityResponse").child("GetCallerIdentityResult");
  CallerIdentity identity{std::string(util::trim(result.child_value("Account"))),
                          std::string(util::trim(result.child_value("Arn")))};
  if (!document.ok || identity.account.empty()) {
    throw RemoteError("STS answered GetCallerIdentity without an account");
  }
  identity.account = sts_text(identity.account);
  identity.arn = sts_text(identity.arn);
  return identity;
}

} // namespace hubcache::aws
