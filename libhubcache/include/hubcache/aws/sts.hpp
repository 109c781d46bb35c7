#pragma once

#include "hubcache/aws/config.hpp"
#include "hubcache/aws/credentials.hpp"
#include "hubcache/http/client.hpp"
#include "hubcache/util/environment.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

// The AWS Security Token Service calls neuron-cache makes, over its query API (form POST,
// XML answers): AssumeRole signed with SigV4 (libcurl's), AssumeRoleWithWebIdentity
// (unsigned: the web identity token is the proof), GetCallerIdentity (whose account the
// credentials are, for `config`). The endpoint is AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL
// or the profile's endpoint_url when set, else https://sts.<region>.amazonaws.com.
namespace hubcache::aws {

struct AssumeRoleRequest {
  std::string role_arn;
  std::string session_name;
  std::optional<std::string> external_id;
  std::optional<int> duration_seconds;
};

struct CallerIdentity {
  std::string account;
  std::string arn;
};

class StsClient {
public:
  StsClient(const util::Environment& env, const Overrides& overrides);

  const Endpoint& endpoint() const { return m_endpoint; }
  // Temporary credentials of `request.role_arn`, asked with `source`'s; `source_name`
  // says where they come from in the result's source.
  Credentials assume_role(const Credentials& source, const AssumeRoleRequest& request);
  Credentials assume_role_with_web_identity(const AssumeRoleRequest& request, const std::string& token);
  CallerIdentity get_caller_identity(const Credentials& credentials);

private:
  std::string post(const std::string& action, std::vector<std::pair<std::string, std::string>> form,
                   const Credentials* signer);

  std::string m_region;
  Endpoint m_endpoint;
  http::Client m_client;
};

} // namespace hubcache::aws
