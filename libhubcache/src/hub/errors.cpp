#include "hubcache/hub/errors.hpp"

#include "detail.hpp"

namespace hubcache::hub {

using json = nlohmann::json;
using namespace detail;

void throw_hub_error(const http::Response& response, const HubErrorContext& context,
                     const std::optional<std::string>& token)
{
  auto code = response.headers.get("x-error-code").value_or("");
  auto message = sanitize(server_message(response), token);
  std::string detail = "HTTP " + std::to_string(response.status);
  if (!code.empty()) {
    detail += " " + sanitize(code, token);
  }
  if (!message.empty()) {
    detail += ": " + message;
  }
  if (auto request_id = response.request_id()) {
    detail += " (request id: " + sanitize(*request_id, token) + ")";
  }
  const std::string prefix = "cannot " + context.action + ": ";
  const std::string& repo = context.repo_id;
  const ErrorFacts facts{repo, context.token_sent, context.write};

  if (code == "RepoNotFound") {
    throw RepoNotFound(prefix + "repo " + repo + " does not exist or is not accessible (" + detail + ")", facts);
  }
  if (code == "RevisionNotFound") {
    throw RevisionNotFound(prefix + "revision not found in " + repo + " (" + detail + ")", facts,
                           "check the revision name");
  }
  if (code == "EntryNotFound") {
    throw EntryNotFound(prefix + (context.path.empty() ? std::string("entry") : "'" + context.path + "'")
                          + " not found in " + repo + " (" + detail + ")",
                        facts, "check the path; list the repo's files to see what it holds");
  }
  if (code == "GatedRepo") {
    throw AuthError(prefix + repo + " is gated (" + detail + ")", facts, "request access to it on the Hub website");
  }
  switch (response.status) {
  case 400:
    // The Hub says per file whether content goes through LFS (preupload); a refusal of the
    // commit means that answer and the commit's own check disagreed, so asking again helps.
    if (message.find("contains binary files") != std::string::npos) {
      throw RemoteError(prefix + "the Hub refused binary content as a regular file (" + detail + ")", facts,
                        "re-run the command; if the Hub refuses again, add an LFS rule for that file type "
                        "(e.g. '*.neff filter=lfs diff=lfs merge=lfs -text') to the repo's .gitattributes");
    }
    if (message.find("larger than 10 MiB") != std::string::npos) {
      throw RemoteError(prefix + "the Hub refused a file over 10 MiB as a regular file (" + detail + ")", facts,
                        "re-run the command; if the Hub refuses again, add an LFS rule for that file type to the "
                        "repo's .gitattributes");
    }
    break;
  case 401:
    if (!context.token_sent) {
      throw TokenMissing(prefix + "the Hub requires a token (" + detail + ")", facts);
    }
    if (!repo.empty() && !context.write) {
      throw RepoNotFound(
        prefix + "repo " + repo + " does not exist or is not accessible with your token (" + detail + ")", facts);
    }
    throw TokenRejected(prefix + "the Hub rejected your token (" + detail + ")", facts);
  case 403:
    if (context.write) {
      throw WriteAccessDenied(
        prefix + "your token has no write access" + (repo.empty() ? "" : " to " + repo) + " (" + detail + ")", facts);
    }
    throw AuthError(prefix + "access denied (" + detail + ")", facts,
                    context.token_sent ? "use a token that can read " + repo : std::string());
  case 404:
    if (!repo.empty()) {
      throw RepoNotFound(prefix + "repo " + repo + " does not exist or is not accessible (" + detail + ")", facts);
    }
    break;
  case 409:
  case 412: throw ConflictError(prefix + "the repo changed meanwhile (" + detail + ")", facts, "re-run the command");
  case 429:
    throw RemoteError(prefix + "the Hub is rate limiting this client (" + detail + ")", facts,
                      "wait a few minutes and retry");
  default:
    if (response.status >= 500) {
      throw RemoteError(prefix + "the Hub failed (" + detail + ")", facts, "retry later");
    }
    break;
  }
  throw RemoteError(prefix + "unexpected answer from the Hub (" + detail + ")", facts,
                    "retry later; if it persists, check HF_ENDPOINT");
}

} // namespace hubcache::hub
