#pragma once

#include <functional>
#include <optional>
#include <string>

// The CA certificates libcurl verifies servers with. A libcurl built on Debian looks for
// /etc/ssl/certs/ca-certificates.crt; the release bundle carries that libcurl to Amazon
// Linux 2023, which keeps them in /etc/pki/tls/certs/ca-bundle.crt. So the file is chosen
// here: the one a variable names (CURL_CA_BUNDLE, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, as
// curl, OpenSSL and the Python clients honour them), else the first that exists among the
// places Linux distributions keep it; nullopt leaves libcurl's own default.
namespace hubcache::http {

using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
using FileExists = std::function<bool(const std::string& path)>;

std::optional<std::string> choose_ca_bundle(const EnvLookup& env, const FileExists& exists);
// The same for this process (its environment, the real file system), decided once.
const std::optional<std::string>& ca_bundle();

} // namespace hubcache::http
