#pragma once

#include <stdexcept>
#include <string>

namespace hubcache {

// What an error is about, as facts rather than advice: the program that shows the error
// words the next step in its own terms (its commands, its options).
struct ErrorFacts {
  std::string repo;        // the cache repo concerned (Hub id or directory spec), if any
  bool token_sent = false; // a token went with the request that failed
  bool write = false;      // the action needed write access
};

// Base of every error the libraries raise. `hint()` is a next step that needs no
// knowledge of any program ("retry later"); program-specific advice is derived from the
// error's type and facts() by the program. Messages never contain tokens.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message, std::string hint = {})
    : std::runtime_error(message), m_hint(std::move(hint))
  {}
  Error(const std::string& message, ErrorFacts facts, std::string hint = {})
    : std::runtime_error(message), m_hint(std::move(hint)), m_facts(std::move(facts))
  {}
  const std::string& hint() const noexcept { return m_hint; }
  const ErrorFacts& facts() const noexcept { return m_facts; }

private:
  std::string m_hint;
  ErrorFacts m_facts;
};

// A repo spec, option value or input file that cannot be understood.
class InvalidArgument : public Error {
  using Error::Error;
};
// A configuration file that exists but cannot be used.
class ConfigError : public Error {
  using Error::Error;
};
// The file naming this host's cache repo exists but is unreadable, empty or invalid.
class RepoConfigFileError : public ConfigError {
  using ConfigError::ConfigError;
};
// Local filesystem failures (permissions, disk full, ...).
class IoError : public Error {
  using Error::Error;
};
// A write the file system refused for want of space (ENOSPC) or quota (EDQUOT): every
// later write to it would fail the same way, so a run stops at the first.
class NoSpace : public IoError {
  using IoError::IoError;
};
// The user asked this run to stop (SIGINT, SIGTERM, SIGHUP) while it transferred.
class Interrupted : public Error {
  using Error::Error;
};
// A feature named by the user that this build does not provide yet.
class NotSupported : public Error {
  using Error::Error;
};
// The repo in facts().repo does not exist or cannot be read with the credentials sent.
class RepoNotFound : public Error {
  using Error::Error;
};
// A directory that exists and holds other things than a cache repo.
class NotACacheRepo : public RepoNotFound {
  using RepoNotFound::RepoNotFound;
};
class RepoAlreadyExists : public Error {
  using Error::Error;
};
class EntryNotFound : public Error {
  using Error::Error;
};
class RevisionNotFound : public Error {
  using Error::Error;
};
// Missing or rejected credentials.
class AuthError : public Error {
  using Error::Error;
};
// The action needs a token and none is configured.
class TokenMissing : public AuthError {
  using AuthError::AuthError;
};
// The Hub refused the token that was sent.
class TokenRejected : public AuthError {
  using AuthError::AuthError;
};
// The repo exists but these credentials (or file permissions) cannot write to it.
class WriteAccessDenied : public AuthError {
  using AuthError::AuthError;
};
// Someone else committed first and the operation could not be re-planned.
class ConflictError : public Error {
  using Error::Error;
};
// Data that does not match what it claims to be (size, hash, format).
class IntegrityError : public Error {
  using Error::Error;
};
// A remote service answered with an unexpected status or could not be reached.
class RemoteError : public Error {
  using Error::Error;
};

} // namespace hubcache
