// credential_process: a helper program prints credentials as JSON on its stdout (the AWS
// CLI's contract: Version 1, AccessKeyId, SecretAccessKey, optional SessionToken and
// Expiration). Run with a time limit; what it prints is read up to a bound.
#include "sources.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/process.hpp"
#include "hubcache/util/text.hpp"

#include <nlohmann/json.hpp>

namespace hubcache::aws::detail {

namespace {

std::optional<std::string> string_field(const nlohmann::json& document, const char* name)
{
  auto it = document.find(name);
  if (it == document.end() || !it->is_string()) {
    return std::nullopt;
  }
  return it->get<std::string>();
}

} // namespace

Credentials parse_process_output(std::string_view output, const std::string& source)
{
  auto document = nlohmann::json::parse(output, nullptr, false);
  if (!document.is_object()) {
    throw AuthError("the " + source + " printed no JSON object", "it must print the AWS CLI's credentials JSON");
  }
  auto version = document.find("Version");
  if (version == document.end() || !version->is_number_integer() || version->get<long long>() != 1) {
    throw AuthError("the " + source + " printed no \"Version\": 1", "it must print the AWS CLI's credentials JSON");
  }
  auto key = string_field(document, "AccessKeyId");
  auto secret = string_field(document, "SecretAccessKey");
  if (!key || !secret || key->empty() || secret->empty()) {
    throw AuthError("the " + source + " printed no AccessKeyId and SecretAccessKey");
  }
  Credentials credentials{*key, *secret, string_field(document, "SessionToken").value_or(""), std::nullopt, source};
  if (auto expiration = string_field(document, "Expiration")) {
    credentials.expiration = parse_iso8601(*expiration);
    if (!credentials.expiration) {
      throw AuthError("the " + source + " printed an unreadable Expiration",
                      "write it in ISO 8601 UTC, e.g. 2026-01-01T00:00:00Z");
    }
  }
  return credentials;
}

Credentials run_credential_process(const std::string& command, const std::string& source,
                                   std::chrono::milliseconds timeout)
{
  util::ProcessSpec spec;
  try {
    spec.argv = util::split_command_line(command);
  } catch (const InvalidArgument& error) {
    throw AuthError("the " + source + " is not a command line: " + error.what());
  }
  if (spec.argv.empty()) {
    throw AuthError("the " + source + " is empty");
  }
  spec.timeout = timeout;
  spec.termination_grace = std::chrono::milliseconds(1000);
  spec.tail_lines = 0;
  std::string output;
  std::string last_error;
  bool too_long = false;
  spec.on_line = [&](util::ProcessStream stream, std::string_view line) {
    if (stream == util::ProcessStream::err) {
      if (!util::trim(line).empty()) {
        last_error = util::escape_control(util::trim(line).substr(0, 300));
      }
      return;
    }
    if (output.size() + line.size() + 1 > k_credentials_document_limit) {
      too_long = true;
      return;
    }
    output.append(line).push_back('\n');
  };
  util::ProcessResult result;
  try {
    result = util::run_process(spec);
  } catch (const IoError& error) {
    throw AuthError("cannot run the " + source + ": " + error.what(), "fix credential_process in the profile");
  }
  if (!result.succeeded()) {
    throw AuthError("the " + source + " " + result.describe() + (last_error.empty() ? "" : ": " + last_error));
  }
  if (too_long) {
    throw AuthError("the " + source + " printed more than " + std::to_string(k_credentials_document_limit / 1024)
                    + " KiB");
  }
  return parse_process_output(output, source);
}

} // namespace hubcache::aws::detail
