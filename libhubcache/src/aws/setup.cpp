#include "hubcache/aws/setup.hpp"

#include "hubcache/aws/credentials.hpp"
#include "hubcache/aws/sts.hpp"
#include "hubcache/error.hpp"

namespace hubcache::aws {

namespace {

void add_note(Setup& setup, const std::string& note)
{
  setup.note += (setup.note.empty() ? "" : "; ") + note;
}

} // namespace

Setup describe_setup(const util::Environment& env, const Overrides& overrides, bool check_credentials)
{
  Setup setup;
  setup.profile = choose_profile(env, overrides);
  setup.sign = !overrides.no_sign_request;
  try {
    setup.region = resolve_region(env, overrides);
    setup.s3_endpoint = resolve_s3_endpoint(env, setup.region->name, overrides);
  } catch (const Error& error) {
    add_note(setup, error.what());
    return setup;
  }
  if (!setup.sign) {
    add_note(setup, "requests unsigned (--no-sign-request)");
    return setup;
  }
  if (!check_credentials) {
    add_note(setup, "credentials not checked: no S3 repo or compile cache in use; an AWS option checks them");
    return setup;
  }
  setup.checked = true;
  std::optional<Credentials> credentials;
  try {
    credentials = CredentialChain(env, overrides).get();
  } catch (const Error& error) {
    add_note(setup, error.what());
    return setup;
  }
  setup.credentials_source = credentials->source;
  setup.access_key_id = mask_access_key_id(credentials->access_key_id);
  setup.credentials_kind = kind_of(*credentials);
  if (credentials->expiration) {
    setup.expiration = format_iso8601(*credentials->expiration);
  }
  StsClient sts(env, overrides);
  if (setup.s3_endpoint->custom && sts.endpoint().source != "AWS_ENDPOINT_URL_STS") {
    // An S3-compatible store has no AWS account; its endpoint is no STS.
    add_note(setup, "account not checked: the S3 endpoint is not AWS's (set AWS_ENDPOINT_URL_STS to ask an STS)");
    return setup;
  }
  try {
    auto identity = sts.get_caller_identity(*credentials);
    setup.account = identity.account;
    setup.arn = identity.arn;
  } catch (const Error& error) {
    add_note(setup, std::string("account not checked: ") + error.what());
  }
  return setup;
}

} // namespace hubcache::aws
