#pragma once

#include <stdexcept>
#include <string>

namespace hubcache {

// Base of every error the libraries raise. `hint()` is the next step a user can take;
// the CLI prints message and hint on one line. Messages never contain tokens.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message, std::string hint = {})
    : std::runtime_error(message), m_hint(std::move(hint)) {}
  const std::string& hint() const noexcept { return m_hint; }

private:
  std::string m_hint;
};

// A repo spec, option value or input file that cannot be understood.
class InvalidArgument : public Error { using Error::Error; };
// A configuration file that exists but cannot be used.
class ConfigError : public Error { using Error::Error; };
// Local filesystem failures (permissions, disk full, ...).
class IoError : public Error { using Error::Error; };
// A feature named by the user that this build does not provide yet.
class NotSupported : public Error { using Error::Error; };
class RepoNotFound : public Error { using Error::Error; };
class RepoAlreadyExists : public Error { using Error::Error; };
class EntryNotFound : public Error { using Error::Error; };
class RevisionNotFound : public Error { using Error::Error; };
// Missing or rejected credentials.
class AuthError : public Error { using Error::Error; };
// Someone else committed first and the operation could not be re-planned.
class ConflictError : public Error { using Error::Error; };
// Data that does not match what it claims to be (size, hash, format).
class IntegrityError : public Error { using Error::Error; };
// A remote service answered with an unexpected status or could not be reached.
class RemoteError : public Error { using Error::Error; };

} // namespace hubcache
