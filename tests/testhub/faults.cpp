#include "faults.hpp"

#include <algorithm>

#include "storage.hpp"

namespace testhub {

namespace {

const std::map<std::string, Fault::Action>& action_names()
{
  static const std::map<std::string, Fault::Action> names = {
    {"status", Fault::Action::status},
    {"drop_after_bytes", Fault::Action::drop_after_bytes},
    {"malformed_json", Fault::Action::malformed_json},
    {"corrupt_body", Fault::Action::corrupt_body},
    {"truncate_body", Fault::Action::truncate_body},
    {"wrong_size", Fault::Action::wrong_size},
    {"short_body", Fault::Action::short_body},
  };
  return names;
}

std::string action_name(Fault::Action action)
{
  for (const auto& [name, value] : action_names())
    if (value == action)
      return name;
  return "?";
}

} // namespace

Fault parse_fault(const json& body)
{
  if (!body.is_object())
    throw HubError(400, "fault: expected a JSON object");
  Fault fault;
  try {
    fault.match = body.value("match", std::string{});
    fault.method = body.value("method", std::string{"*"});
    std::transform(fault.method.begin(), fault.method.end(), fault.method.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    fault.remaining = body.value("count", 1);
    fault.passes = body.value("after", 0);
    const auto action = body.value("action", std::string{"status"});
    const auto it = action_names().find(action);
    if (it == action_names().end())
      throw HubError(400, "fault: unknown action '" + action + "'");
    fault.action = it->second;
    fault.status = body.value("status", 500);
    fault.message = body.value("message", std::string{});
    if (body.contains("retry_after"))
      fault.retry_after = body.at("retry_after").get<int>();
    fault.bytes = body.value("bytes", std::uint64_t{0});
    if (body.contains("size"))
      fault.size = body.at("size").get<std::uint64_t>();
  } catch (const json::exception& e) {
    throw HubError(400, std::string("fault: ") + e.what());
  }
  if (fault.remaining < 1)
    throw HubError(400, "fault: count must be at least 1");
  if (fault.passes < 0)
    throw HubError(400, "fault: after must not be negative");
  if (fault.status < 100 || fault.status > 599)
    throw HubError(400, "fault: status must be an HTTP status");
  return fault;
}

std::uint64_t FaultRegistry::add(Fault fault)
{
  std::lock_guard lock(m_mutex);
  fault.id = m_next_id++;
  m_faults.push_back(fault);
  return fault.id;
}

void FaultRegistry::clear()
{
  std::lock_guard lock(m_mutex);
  m_faults.clear();
}

std::optional<Fault> FaultRegistry::find(const std::string& method, const std::string& path, const std::string& target)
{
  std::lock_guard lock(m_mutex);
  for (auto& fault : m_faults) {
    if (fault.method != "*" && fault.method != method)
      continue;
    if (path.find(fault.match) == std::string::npos && target.find(fault.match) == std::string::npos)
      continue;
    if (fault.passes > 0) {
      --fault.passes; // this request goes through: the fault waits for a later one
      continue;
    }
    return fault;
  }
  return std::nullopt;
}

bool FaultRegistry::consume(std::uint64_t id)
{
  std::lock_guard lock(m_mutex);
  const auto it = std::find_if(m_faults.begin(), m_faults.end(), [&](const Fault& f) { return f.id == id; });
  if (it == m_faults.end())
    return false;
  if (--it->remaining == 0)
    m_faults.erase(it);
  return true;
}

json FaultRegistry::describe() const
{
  std::lock_guard lock(m_mutex);
  json list = json::array();
  for (const auto& fault : m_faults) {
    list.push_back({{"id", fault.id},
                    {"match", fault.match},
                    {"method", fault.method},
                    {"remaining", fault.remaining},
                    {"after", fault.passes},
                    {"action", action_name(fault.action)}});
  }
  return list;
}

void RequestStats::record(const std::string& route, const std::string& method, int status)
{
  std::lock_guard lock(m_mutex);
  ++m_total;
  ++m_by_route[route];
  ++m_by_method[method];
  ++m_by_status[std::to_string(status)];
}

void RequestStats::reset()
{
  std::lock_guard lock(m_mutex);
  m_total = 0;
  m_by_route.clear();
  m_by_method.clear();
  m_by_status.clear();
}

json RequestStats::snapshot() const
{
  std::lock_guard lock(m_mutex);
  json by_route = json::object();
  for (const auto& [route, count] : m_by_route)
    by_route[route] = count;
  json by_method = json::object();
  for (const auto& [method, count] : m_by_method)
    by_method[method] = count;
  json by_status = json::object();
  for (const auto& [status, count] : m_by_status)
    by_status[status] = count;
  return {{"total", m_total}, {"by_route", by_route}, {"by_method", by_method}, {"by_status", by_status}};
}

} // namespace testhub
