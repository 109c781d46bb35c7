#include <hubcache/http/ca_bundle.hpp>

#include <doctest/doctest.h>

#include <map>
#include <set>

using hubcache::http::choose_ca_bundle;

namespace http_ca_bundle_test {

namespace {

struct Host {
  std::map<std::string, std::string> env;
  std::set<std::string> files;
  std::optional<std::string> choice() const
  {
    return choose_ca_bundle(
      [this](const char* name) -> std::optional<std::string> {
        auto found = env.find(name);
        return found == env.end() ? std::nullopt : std::optional(found->second);
      },
      [this](const std::string& path) { return files.contains(path); });
  }
};

} // namespace

TEST_SUITE_BEGIN("hubcache::http::ca_bundle");

TEST_CASE("the CA bundle: a variable names it, else the distribution's own place")
{
  // Amazon Linux 2023: no Debian path, the RHEL one.
  Host al2023{{}, {"/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"}};
  CHECK(al2023.choice() == "/etc/pki/tls/certs/ca-bundle.crt");
  Host ubuntu{{}, {"/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/cert.pem"}};
  CHECK(ubuntu.choice() == "/etc/ssl/certs/ca-certificates.crt");
  Host alpine{{}, {"/etc/ssl/cert.pem"}};
  CHECK(alpine.choice() == "/etc/ssl/cert.pem");
  Host bare{{}, {}};
  CHECK(bare.choice() == std::nullopt);

  // A corporate proxy's bundle, named the way curl, OpenSSL or requests users name it.
  Host proxied{{{"SSL_CERT_FILE", "/opt/corp/ca.pem"}}, {"/etc/ssl/certs/ca-certificates.crt"}};
  CHECK(proxied.choice() == "/opt/corp/ca.pem");
  proxied.env["CURL_CA_BUNDLE"] = "/opt/curl/ca.pem";
  CHECK(proxied.choice() == "/opt/curl/ca.pem");
  Host python{{{"REQUESTS_CA_BUNDLE", "/opt/py/ca.pem"}, {"SSL_CERT_FILE", ""}}, {}};
  CHECK(python.choice() == "/opt/py/ca.pem");
}

TEST_SUITE_END();

} // namespace http_ca_bundle_test
