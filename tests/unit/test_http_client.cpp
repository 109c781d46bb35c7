// The HTTP client's bounds against loopback servers that misbehave: one that trickles a
// byte at a time, one whose answer never ends; and the listing bounds every paginated
// listing goes through.
#include "fake_server.hpp"

#include <hubcache/error.hpp>
#include <hubcache/http/client.hpp>
#include <hubcache/http/listing_bounds.hpp>

#include <doctest/doctest.h>

using namespace hubcache;
using test_support::FakeServer;

TEST_SUITE_BEGIN("hubcache::http");

TEST_CASE("a server trickling a few bytes a second trips the stall limit")
{
  // 10 bytes a second: more than one, so a 1 B/s floor never trips, far below 1 KiB/s.
  FakeServer server([](httplib::Server& routes, FakeServer& self) {
    routes.Get("/slow", [&self](const httplib::Request&, httplib::Response& response) {
      ++self.requests;
      self.trickle(response, std::string(60, 'x'), std::chrono::milliseconds(100));
    });
  });
  http::Client client;
  http::Request request;
  request.url = server.url + "/slow";
  request.stall_timeout = std::chrono::seconds(1);
  try {
    client.perform(request);
    FAIL("a trickling answer was taken");
  } catch (const http::TransportError& error) {
    CHECK(error.retryable());
    CHECK(std::string(error.what()).find("127.0.0.1") != std::string::npos);
  }
}

TEST_CASE("an answer kept in memory is bounded")
{
  FakeServer server([](httplib::Server& routes, FakeServer&) {
    routes.Get("/big", [](const httplib::Request&, httplib::Response& response) {
      response.set_content(std::string(std::size_t{3} << 20, 'x'), "application/json");
    });
  });
  http::Client client;
  http::Request request;
  request.url = server.url + "/big";
  request.body_limit = std::size_t{1} << 20;
  CHECK_THROWS_AS(client.perform(request), RemoteError);
  request.body_limit = std::size_t{4} << 20;
  CHECK(client.perform(request).body.size() == std::size_t{3} << 20);
}

TEST_CASE("listing bounds: a repeated cursor, too many pages, too many entries")
{
  http::ListingBounds repeated("the listing", {});
  repeated.next_page("");
  repeated.next_page("a");
  repeated.next_page("b");
  CHECK_THROWS_WITH_AS(repeated.next_page("a"), doctest::Contains("loops back"), RemoteError);

  http::ListingBounds pages("the listing", {.max_pages = 3, .max_entries = 100});
  pages.next_page("1");
  pages.next_page("2");
  pages.next_page("3");
  CHECK_THROWS_WITH_AS(pages.next_page("4"), doctest::Contains("3 pages"), RemoteError);

  http::ListingBounds entries("the listing", {.max_pages = 3, .max_entries = 100});
  entries.add_entries(60);
  entries.add_entries(40);
  CHECK_THROWS_AS(entries.add_entries(1), RemoteError);
  // A count that would wrap a sum is refused too.
  CHECK_THROWS_AS(entries.add_entries(SIZE_MAX), RemoteError);
}
