#pragma once

// Fault injection and request statistics behind the /_test/* control routes.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http_util.hpp"

namespace testhub {

struct Fault {
  enum class Action { status, drop_after_bytes, malformed_json, corrupt_body, truncate_body, wrong_size, short_body };
  std::uint64_t id = 0;
  std::string match;        // substring of the request path (decoded) or raw target (path + query)
  std::string method = "*"; // GET|HEAD|POST|PUT|DELETE|*
  int remaining = 1;
  int passes = 0; // "after": matching requests let through before it applies
  Action action = Action::status;
  int status = 500;
  std::optional<int> retry_after;
  std::string message;               // status: the error text (default "Injected fault: HTTP N")
  std::uint64_t bytes = 0;           // drop_after_bytes; truncate_body (default: half the body)
  std::optional<std::uint64_t> size; // wrong_size (default: real size + 1)

  // Actions decided before the handler runs (the operation is then not performed).
  bool before_handler() const { return action == Action::status || action == Action::malformed_json; }
};

// Throws HubError(400) on a bad request body.
Fault parse_fault(const json& body);

class FaultRegistry {
public:
  std::uint64_t add(Fault fault);
  void clear();
  // The first live fault matching the request, without using it up (one still letting
  // requests through, "after", counts this one instead).
  std::optional<Fault> find(const std::string& method, const std::string& path, const std::string& target);
  // Uses up one application; false if another request took the last one meanwhile.
  bool consume(std::uint64_t id);
  json describe() const;

private:
  mutable std::mutex m_mutex;
  std::vector<Fault> m_faults;
  std::uint64_t m_next_id = 1;
};

class RequestStats {
public:
  void record(const std::string& route, const std::string& method, int status);
  void reset();
  json snapshot() const;

private:
  mutable std::mutex m_mutex;
  std::uint64_t m_total = 0;
  std::map<std::string, std::uint64_t> m_by_route;
  std::map<std::string, std::uint64_t> m_by_method;
  std::map<std::string, std::uint64_t> m_by_status;
};

} // namespace testhub
