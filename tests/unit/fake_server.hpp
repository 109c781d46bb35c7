#pragma once

// A loopback HTTP server for one test (cpp-httplib): routes set by the test, a port chosen
// by the kernel, and a bounded lifetime: it stops when the test's object goes, and every
// slow answer checks stopping() so none outlives it.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace test_support {

class FakeServer {
public:
  explicit FakeServer(const std::function<void(httplib::Server&, FakeServer&)>& routes)
  {
    routes(m_server, *this);
    m_port = m_server.bind_to_any_port("127.0.0.1");
    m_thread = std::thread([this] { m_server.listen_after_bind(); });
    // Listening since the bind; running once its loop started (stop() before that would
    // not stop it).
    for (int i = 0; i < 1000 && !m_server.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    url = "http://127.0.0.1:" + std::to_string(m_port);
  }
  ~FakeServer()
  {
    m_stopping = true;
    m_server.stop();
    m_thread.join();
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  bool stopping() const { return m_stopping; }
  // Counts requests, for tests that check how often a client asked.
  std::atomic<int> requests{0};
  std::string url;

  // An answer of `body` sent one byte every `interval`: a server that trickles.
  void trickle(httplib::Response& response, std::string body, std::chrono::milliseconds interval)
  {
    auto size = body.size();
    response.set_content_provider(
      size, "application/octet-stream",
      [this, body = std::move(body), interval](std::size_t offset, std::size_t, httplib::DataSink& sink) {
        if (stopping()) {
          return false;
        }
        std::this_thread::sleep_for(interval);
        return sink.write(body.data() + offset, 1);
      });
  }

private:
  httplib::Server m_server;
  int m_port = 0;
  std::thread m_thread;
  std::atomic<bool> m_stopping{false};
};

} // namespace test_support
