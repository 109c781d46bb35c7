#include "hubcache/http/ca_bundle.hpp"

#include <array>
#include <cstdlib>
#include <sys/stat.h>

namespace hubcache::http {

namespace {

// Where distributions keep the bundle (the list Go's crypto/x509 searches).
constexpr std::array<const char*, 6> k_known_files = {
  "/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu
  "/etc/pki/tls/certs/ca-bundle.crt",                  // Amazon Linux 2023, Fedora, RHEL
  "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // RHEL 7 and later
  "/etc/ssl/ca-bundle.pem",                            // openSUSE
  "/etc/pki/tls/cacert.pem",                           // OpenELEC
  "/etc/ssl/cert.pem",                                 // Alpine
};

constexpr std::array<const char*, 3> k_variables = {"CURL_CA_BUNDLE", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"};

} // namespace

std::optional<std::string> choose_ca_bundle(const EnvLookup& env, const FileExists& exists)
{
  for (const char* name : k_variables) {
    if (auto value = env(name); value && !value->empty()) {
      return value; // named by the user: used as given (libcurl reports a bad one)
    }
  }
  for (const char* file : k_known_files) {
    if (exists(file)) {
      return std::string(file);
    }
  }
  return std::nullopt;
}

const std::optional<std::string>& ca_bundle()
{
  static const std::optional<std::string> chosen = choose_ca_bundle(
    [](const char* name) -> std::optional<std::string> {
      const char* value = std::getenv(name);
      return value == nullptr ? std::nullopt : std::optional<std::string>(value);
    },
    [](const std::string& path) {
      struct stat status {};
      return ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
    });
  return chosen;
}

} // namespace hubcache::http
