#pragma once

// The real test Hub (neuron-cache-test-hub) for unit tests: started as a subprocess on
// 127.0.0.1 with a free port, tiny LFS and multipart thresholds so small files exercise
// every upload path, three users, and its control routes (faults, stats).
#include "test_support.hpp"

#include <hubcache/http/client.hpp>
#include <hubcache/hub/config.hpp>
#include <hubcache/storage/hub_repository.hpp>
#include <hubcache/util/environment.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace test_support {

namespace stdfs = std::filesystem;
using nlohmann::json;

constexpr const char* k_alice = "hf_alice_write_token_0001";
constexpr const char* k_carol_read_only = "hf_carol_read_token_0002";
constexpr const char* k_bob = "hf_bob_write_token_0003";

inline stdfs::path test_hub_binary()
{
  if (const char* path = std::getenv("NEURON_CACHE_TEST_HUB")) {
    return path;
  }
  // Unit test binaries live in <build>/tests, programs in <build>/bin.
  return stdfs::canonical("/proc/self/exe").parent_path().parent_path() / "bin" / "neuron-cache-test-hub";
}

// A test Hub on a free port, stopped (SIGTERM) when the test ends.
class TestHub {
public:
  explicit TestHub(std::vector<std::string> extra = {})
  {
    auto binary = test_hub_binary();
    REQUIRE_MESSAGE(stdfs::exists(binary), "build the test Hub first: " << binary.string());
    std::vector<std::string> args = {binary.string(),
                                     "--port",
                                     "0",
                                     "--data",
                                     (m_dir.path() / "data").string(),
                                     "--user",
                                     std::string("alice:") + k_alice + ":write",
                                     "--user",
                                     std::string("carol:") + k_carol_read_only + ":read",
                                     "--user",
                                     std::string("bob:") + k_bob + ":write",
                                     "--lfs-threshold",
                                     "64",
                                     "--multipart-chunk-size",
                                     "100",
                                     "--page-size",
                                     "3"};
    args.insert(args.end(), extra.begin(), extra.end());
    int out[2];
    REQUIRE(::pipe(out) == 0);
    m_pid = ::fork();
    REQUIRE(m_pid >= 0);
    if (m_pid == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 2);
      std::vector<char*> argv;
      for (auto& arg : args) {
        argv.push_back(arg.data());
      }
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    std::string line;
    pollfd poller{out[0], POLLIN, 0};
    while (line.find('\n') == std::string::npos && ::poll(&poller, 1, 10000) > 0) {
      char buffer[256];
      auto n = ::read(out[0], buffer, sizeof buffer);
      if (n <= 0) {
        break;
      }
      line.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    if (!line.starts_with("http://127.0.0.1:")) {
      ::kill(m_pid, SIGTERM);
      ::waitpid(m_pid, nullptr, 0);
      m_pid = -1;
    }
    REQUIRE_MESSAGE(line.starts_with("http://127.0.0.1:"), "the test Hub did not start: " << line);
    url = line.substr(0, line.find('\n'));
  }

  ~TestHub()
  {
    if (m_pid > 0) {
      ::kill(m_pid, SIGTERM);
      int status = 0;
      ::waitpid(m_pid, &status, 0);
    }
  }
  TestHub(const TestHub&) = delete;
  TestHub& operator=(const TestHub&) = delete;

  json control(const std::string& method, const std::string& path, const json& body = nullptr)
  {
    hubcache::http::Client client;
    hubcache::http::Request request;
    request.method = method;
    request.url = url + path;
    if (!body.is_null()) {
      request.body = body.dump();
      request.headers.emplace_back("Content-Type", "application/json");
    }
    auto response = client.perform(request);
    REQUIRE_MESSAGE(response.ok(), method << " " << path << " -> " << response.status << " " << response.body);
    return response.body.empty() ? json(nullptr) : json::parse(response.body);
  }
  void fault(json spec) { control("POST", "/_test/faults", spec); }
  json stats() { return control("GET", "/_test/stats"); }
  long route_count(const std::string& route)
  {
    auto all = stats();
    return all["by_route"].value(route, 0L);
  }
  void reset_stats() { control("POST", "/_test/stats/reset"); }

  hubcache::util::Environment environment(std::optional<std::string> token,
                                          std::map<std::string, std::string> more = {}) const
  {
    more["HF_ENDPOINT"] = url;
    more["HF_HOME"] = (m_dir.path() / "hf-home").string();
    more["NEURON_CACHE_HTTP_BACKOFF_BASE_MS"] = "2";
    if (token) {
      more["HF_TOKEN"] = *token;
    }
    return hubcache::util::Environment::from_map(std::move(more));
  }
  std::unique_ptr<hubcache::storage::HubRepository> repo(const std::string& id,
                                                         std::optional<std::string> token = std::string(k_alice))
  {
    return std::make_unique<hubcache::storage::HubRepository>(
      id, hubcache::hub::HubConfig::from_environment(environment(std::move(token)), std::nullopt));
  }
  int commit_count(const std::string& repo_id)
  {
    hubcache::http::Client client;
    hubcache::http::Request request;
    request.url = url + "/api/models/" + repo_id + "/commits/main";
    request.headers.emplace_back("Authorization", std::string("Bearer ") + k_alice);
    auto response = client.perform(request);
    REQUIRE(response.ok());
    return static_cast<int>(json::parse(response.body).size());
  }

  std::string url;

private:
  test_support::TempDir m_dir;
  pid_t m_pid = -1;
};

} // namespace test_support
