// Errors in the program's words: one table, error type -> message and next step (as the
// hf CLI's cli/_errors.py does). Library errors carry facts (which repo, whether a token
// was sent, whether the action wrote); this is the only place that turns them into advice
// naming commands and options.
#include "errors.hpp"

#include <hubcache/error.hpp>

#include <functional>
#include <vector>

namespace neuron_cache {

namespace {

namespace storage = hubcache::storage;

std::string default_namespace()
{
  auto id = std::string(storage::k_default_cache_repo);
  return id.substr(0, id.find('/'));
}

// The repo the run resolved, when the error is about that one.
const storage::ResolvedRepo* resolved_repo_of(const hubcache::Error& error, const RunContext& context)
{
  if (!context.repo) {
    return nullptr;
  }
  const auto& facts = error.facts();
  if (!facts.repo.empty()
      && (facts.repo == context.repo->spec.canonical() || facts.repo == context.repo->spec.hub_id)) {
    return &*context.repo;
  }
  return nullptr;
}

bool is_directory_spec(const std::string& repo)
{
  return repo.starts_with("file://") || repo.starts_with("/");
}

// "repo not found": where the name came from, then a way to pick another; creating is
// offered only for a name the user chose, never in the default repo's namespace.
ErrorReport repo_not_found(const hubcache::RepoNotFound& error, const RunContext& context)
{
  ErrorReport report{error.what(), error.hint(), k_exit_error};
  const auto* resolved = resolved_repo_of(error, context);
  const std::string& repo = error.facts().repo;
  if (repo.empty()) {
    return report; // not about a cache repo (a model, say): the thrower's hint is all there is
  }
  std::vector<std::string> steps;
  if (resolved != nullptr) {
    report.message += " (" + describe_repo_origin(*resolved) + ")";
  }
  bool hub_repo = !is_directory_spec(repo);
  if (hub_repo && !error.facts().token_sent) {
    steps.push_back("if it is private, " + login_hint());
  }
  if (resolved != nullptr && resolved->source == storage::RepoSource::default_value) {
    steps.push_back("no cache repo is set: pick yours with --repo-id REPO or 'neuron-cache set REPO', or make one "
                    "with 'neuron-cache create NAME'");
  } else {
    bool own_namespace = !hub_repo || repo.substr(0, repo.find('/')) != default_namespace();
    if (resolved != nullptr) {
      steps.push_back("check the name, or pick another with --repo-id REPO or 'neuron-cache set REPO'");
    } else {
      steps.push_back("check the name");
    }
    if (own_namespace) {
      steps.push_back("or create it with: neuron-cache create " + repo);
    }
  }
  for (const auto& step : steps) {
    report.hint += (report.hint.empty() ? "" : "; ") + step;
  }
  return report;
}

// One rule of the table: does it handle this error, and in which words.
struct ErrorRule {
  std::function<const hubcache::Error*(const std::exception&)> match;
  std::function<ErrorReport(const hubcache::Error&, const RunContext&)> word;
};

template <typename ErrorType>
ErrorRule rule(std::function<ErrorReport(const ErrorType&, const RunContext&)> word)
{
  return {[](const std::exception& error) -> const hubcache::Error* { return dynamic_cast<const ErrorType*>(&error); },
          [word](const hubcache::Error& error, const RunContext& context) {
            return word(static_cast<const ErrorType&>(error), context);
          }};
}

// The library's message with a hint the program words (the library's own hint, if any, first).
ErrorReport with_hint(const hubcache::Error& error, const std::string& hint)
{
  std::string combined = error.hint();
  if (!hint.empty()) {
    combined += (combined.empty() ? "" : "; ") + hint;
  }
  return {error.what(), combined, k_exit_error};
}

std::string token_phrase(const RunContext& context)
{
  if (context.token_source == hubcache::hub::TokenSource::none) {
    return {};
  }
  return " (token from " + describe_token_origin(context.token_source, context.token_origin) + ")";
}

// Most specific first: the first rule whose type matches words the error.
const std::vector<ErrorRule>& error_table()
{
  static const std::vector<ErrorRule> table = {
    rule<hubcache::NotACacheRepo>([](const hubcache::NotACacheRepo& error, const RunContext&) {
      return with_hint(error, "point --repo-id at a cache repo, or create a new one elsewhere: neuron-cache create "
                              "/path/to/new-repo");
    }),
    rule<hubcache::RepoNotFound>(repo_not_found),
    rule<hubcache::RepoAlreadyExists>([](const hubcache::RepoAlreadyExists& error, const RunContext&) {
      if (!error.hint().empty()) {
        return with_hint(error, "");
      }
      return with_hint(error, "use it with: neuron-cache set " + error.facts().repo + ", or pass --exist-ok to create");
    }),
    rule<hubcache::TokenMissing>(
      [](const hubcache::TokenMissing& error, const RunContext&) { return with_hint(error, login_hint()); }),
    rule<hubcache::TokenRejected>([](const hubcache::TokenRejected& error, const RunContext& context) {
      ErrorReport report = with_hint(error, "check the token, or log in again: " + login_hint());
      report.message += token_phrase(context);
      return report;
    }),
    rule<hubcache::WriteAccessDenied>([](const hubcache::WriteAccessDenied& error, const RunContext& context) {
      const auto& repo = error.facts().repo;
      if (is_directory_spec(repo)) {
        return with_hint(error, "or use a cache repo you can write to: neuron-cache create DIR");
      }
      ErrorReport report =
        with_hint(error, error.facts().token_sent ? "use a token with write access (" + login_hint()
                                                      + "), or a cache repo of your own: neuron-cache create NAME"
                                                  : login_hint());
      report.message += token_phrase(context);
      return report;
    }),
    rule<hubcache::RepoConfigFileError>([](const hubcache::RepoConfigFileError& error, const RunContext&) {
      return with_hint(error, "or name the cache repo again: neuron-cache set NAME");
    }),
    rule<hubcache::Error>([](const hubcache::Error& error, const RunContext&) { return with_hint(error, ""); }),
  };
  return table;
}

} // namespace

std::string login_hint()
{
  return "run hf auth login or set HF_TOKEN";
}

std::string describe_repo_origin(const storage::ResolvedRepo& repo)
{
  switch (repo.source) {
  case storage::RepoSource::option: return repo.origin.empty() ? "named by --repo-id" : "named by " + repo.origin;
  case storage::RepoSource::environment: return "from " + repo.origin;
  case storage::RepoSource::config_file:
  case storage::RepoSource::own_config_file: return "saved in " + repo.origin + " by 'neuron-cache set'";
  case storage::RepoSource::default_value: return "the built-in default";
  }
  return {};
}

std::string describe_token_origin(hubcache::hub::TokenSource source, const std::string& origin)
{
  switch (source) {
  case hubcache::hub::TokenSource::explicit_value: return "--token";
  case hubcache::hub::TokenSource::environment: return origin;
  case hubcache::hub::TokenSource::file: return "the token file " + origin;
  case hubcache::hub::TokenSource::none: return "nowhere";
  }
  return {};
}

ErrorReport describe_error(const std::exception& error, const RunContext& context)
{
  if (const auto* usage = dynamic_cast<const UsageError*>(&error)) {
    return {usage->what(),
            "see 'neuron-cache " + (context.command.empty() ? std::string() : context.command + " ") + "--help'",
            k_exit_usage};
  }
  for (const auto& entry : error_table()) {
    if (const auto* matched = entry.match(error)) {
      return entry.word(*matched, context);
    }
  }
  return {error.what(), {}, k_exit_error};
}

} // namespace neuron_cache
