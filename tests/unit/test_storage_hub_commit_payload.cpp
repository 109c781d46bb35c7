// A Hub commit's NDJSON payload never has a name in TMPDIR, so a commit killed mid-way
// (SIGKILL runs no clean-up) leaves nothing there. A loopback Hub looks into TMPDIR while
// the commit is in flight.
#include "fake_server.hpp"
#include "test_support.hpp"

#include <hubcache/storage/hub_repository.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <mutex>

using namespace hubcache;
using nlohmann::json;
using test_support::FakeServer;
namespace stdfs = std::filesystem;

namespace storage_hub_commit_payload_test {

namespace {

// TMPDIR pointed at a fresh directory while the test runs.
class ScratchTmpdir {
public:
  ScratchTmpdir()
  {
    if (const char* old = std::getenv("TMPDIR")) {
      m_old = old;
    }
    ::setenv("TMPDIR", m_dir.path().c_str(), 1);
  }
  ~ScratchTmpdir()
  {
    if (m_old) {
      ::setenv("TMPDIR", m_old->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }
  ScratchTmpdir(const ScratchTmpdir&) = delete;
  ScratchTmpdir& operator=(const ScratchTmpdir&) = delete;
  const stdfs::path& path() const { return m_dir.path(); }

private:
  test_support::TempDir m_dir;
  std::optional<std::string> m_old;
};

} // namespace

TEST_CASE("a Hub commit's payload has no name in TMPDIR while it is sent")
{
  ScratchTmpdir tmpdir;
  std::mutex mutex;
  std::vector<std::string> seen; // TMPDIR's names while the commit was in flight
  std::string payload;
  FakeServer server([&](httplib::Server& routes, FakeServer&) {
    routes.Get("/api/models/org/repo", [](const httplib::Request&, httplib::Response& response) {
      response.set_content(json{{"id", "org/repo"}, {"sha", std::string(40, 'a')}}.dump(), "application/json");
    });
    routes.Post(R"(/api/models/org/repo/preupload/[^/]+)",
                [](const httplib::Request& request, httplib::Response& response) {
                  json files = json::array();
                  auto asked = json::parse(request.body);
                  for (const auto& file : asked.at("files")) {
                    files.push_back({{"path", file.at("path")}, {"uploadMode", "regular"}, {"shouldIgnore", false}});
                  }
                  response.set_content(json{{"files", files}}.dump(), "application/json");
                });
    routes.Post(R"(/api/models/org/repo/commit/[^/]+)",
                [&](const httplib::Request& request, httplib::Response& response) {
                  std::lock_guard lock(mutex);
                  for (const auto& item : stdfs::directory_iterator(tmpdir.path())) {
                    seen.push_back(item.path().filename().string());
                  }
                  payload = request.body;
                  response.set_content(json{{"commitOid", std::string(40, 'b')}}.dump(), "application/json");
                });
  });
  hub::HubConfig config;
  config.endpoint = server.url;
  config.token = "hf_unit_token";
  storage::HubRepository repo("org/repo", config);
  storage::CommitRequest request;
  request.message = "add";
  request.additions.push_back({"neuronxcc-2.0/MODULE_1/model.done", storage::FileSource::from_bytes("")});
  request.additions.push_back({"neuronxcc-2.0/MODULE_1/flags.json", storage::FileSource::from_bytes("[]")});
  auto result = repo.commit(request);
  CHECK(result.revision == std::string(40, 'b'));
  std::lock_guard lock(mutex);
  CHECK(seen.empty());
  CHECK(payload.find("neuronxcc-2.0/MODULE_1/flags.json") != std::string::npos);
  CHECK(stdfs::is_empty(tmpdir.path()));
}

} // namespace storage_hub_commit_payload_test
