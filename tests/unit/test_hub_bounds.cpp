// HubApi against loopback servers that misbehave: tree listings that never end or grow
// without bound, an answer trickled a byte at a time or of a gigantic size, a request id
// that echoes the token. Each must end in a clear error, not a loop, a hang or a leak.
#include "fake_server.hpp"
#include "test_support.hpp"

#include <hubcache/error.hpp>
#include <hubcache/hub/api.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace hubcache;
using nlohmann::json;
using test_support::FakeServer;
using test_support::message_of;

namespace hub_bounds_test {

namespace {

constexpr const char* k_token = "hf_unit_secret_token_0042";
constexpr const char* k_tree = "/api/models/org/repo/tree/main";

hub::HubConfig config_for(const FakeServer& server)
{
  hub::HubConfig config;
  config.endpoint = server.url;
  config.token = k_token;
  config.retry.base = std::chrono::milliseconds(1);
  config.retry.cap = std::chrono::milliseconds(1);
  return config;
}

json file_entry(const std::string& path)
{
  return {{"type", "file"}, {"path", path}, {"size", 1}, {"oid", std::string(40, 'a')}};
}

// A tree whose every page links to a fresh cursor, `entries_per_page` entries a page, for
// `pages` pages (a bound, so that a client without limits ends too).
void endless_tree(httplib::Server& routes, FakeServer& self, int pages, int entries_per_page)
{
  routes.Get(k_tree, [&self, pages, entries_per_page](const httplib::Request& request, httplib::Response& response) {
    int page = request.has_param("cursor") ? std::stoi(request.get_param_value("cursor")) : 0;
    ++self.requests;
    json body = json::array();
    for (int i = 0; i < entries_per_page; ++i) {
      body.push_back(file_entry("p" + std::to_string(page) + "/f" + std::to_string(i)));
    }
    if (page + 1 < pages) {
      response.set_header("Link", "<" + self.url + k_tree + "?recursive=true&cursor=" + std::to_string(page + 1)
                                    + ">; rel=\"next\"");
    }
    response.set_content(body.dump(), "application/json");
  });
}

} // namespace

TEST_SUITE_BEGIN("hubcache::hub");

TEST_CASE("a tree listing that keeps paginating ends at the page bound")
{
  FakeServer server([](httplib::Server& routes, FakeServer& self) { endless_tree(routes, self, 1000, 1); });
  auto config = config_for(server);
  config.listing.max_pages = 50;
  hub::HubApi api(config);
  auto message = message_of<RemoteError>([&] { api.list_tree("org/repo", "main", ""); });
  CHECK(message.find("50 pages") != std::string::npos);
  CHECK(server.requests == 50);
}

TEST_CASE("a tree listing that lists more entries than allowed ends at the entry bound")
{
  FakeServer server([](httplib::Server& routes, FakeServer& self) { endless_tree(routes, self, 100, 1000); });
  auto config = config_for(server);
  config.listing.max_entries = 2500;
  hub::HubApi api(config);
  auto message = message_of<RemoteError>([&] { api.list_tree("org/repo", "main", ""); });
  CHECK(message.find("more than 2500 entries") != std::string::npos);
  CHECK(server.requests == 3);
}

TEST_CASE("a trickled answer trips the stall limit, is retried, then fails clean")
{
  FakeServer server([](httplib::Server& routes, FakeServer& self) {
    routes.Get(k_tree, [&self](const httplib::Request&, httplib::Response& response) {
      ++self.requests;
      self.trickle(response, "[" + std::string(40, ' ') + "]", std::chrono::milliseconds(100));
    });
  });
  auto config = config_for(server);
  config.stall_timeout = std::chrono::seconds(1);
  config.retry.max_attempts = 2;
  hub::HubApi api(config);
  CHECK_THROWS_AS(api.list_tree("org/repo", "main", ""), RemoteError);
  CHECK(server.requests == 2);
}

TEST_CASE("an API answer larger than the bound is refused, not buffered")
{
  FakeServer server([](httplib::Server& routes, FakeServer&) {
    routes.Get(k_tree, [](const httplib::Request&, httplib::Response& response) {
      auto entry = file_entry("huge");
      entry["oid"] = std::string(std::size_t{40} << 20, 'a');
      response.set_content(json::array({entry}).dump(), "application/json");
    });
  });
  hub::HubApi api(config_for(server)); // the default bound: 32 MiB
  auto message = message_of<RemoteError>([&] { api.list_tree("org/repo", "main", ""); });
  CHECK(message.find("larger than") != std::string::npos);
}

TEST_CASE("a request id that echoes the token is shown without it")
{
  FakeServer server([](httplib::Server& routes, FakeServer&) {
    routes.Get("/api/models/org/repo", [](const httplib::Request&, httplib::Response& response) {
      response.set_header("X-Request-Id", std::string("req-") + k_token);
      response.set_content("<html>not json</html>", "text/html");
    });
  });
  hub::HubApi api(config_for(server));
  auto message = message_of<RemoteError>([&] { api.repo_info("org/repo"); });
  CHECK(message.find("request id") != std::string::npos);
  CHECK(message.find(k_token) == std::string::npos);
}

} // namespace hub_bounds_test
