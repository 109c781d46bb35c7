// A file rebuilt from the CAS (spec `download-protocol.md`): its reconstruction's xorb
// ranges fetched in parallel ahead of the term being decoded, in a window of requests and
// bytes, each range received into a buffer an earlier range handed back.

#include "cas_answer.hpp"
#include "hubcache/xet/cas_client.hpp"
#include "hubcache/xet/merkle.hpp"
#include "hubcache/xet/xorb.hpp"

#include <deque>
#include <future>
#include <map>
#include <stdexcept>

namespace hubcache::xet {

namespace {

// What a reconstruction's fetches may hold at once, in flight or fetched and not yet
// decoded (one group always goes, whatever its size).
constexpr std::uint64_t k_fetch_budget_bytes = 16 * 1024 * 1024;

// Receives a xorb range into a buffer whose capacity is kept from range to range: a fresh
// 8 MiB string per range cost a page fault per 4 KiB, dear where the host reclaims freed
// memory (virtual machines with free page reporting).
class BufferSink final : public http::BodySink {
public:
  BufferSink(std::string& into, std::size_t limit) : m_into(into), m_limit(limit) {}
  bool start(long status, const http::Headers&) override
  {
    m_into.clear(); // a retried request starts again
    return status >= 200 && status < 300;
  }
  void write(std::string_view chunk) override
  {
    if (m_into.size() + chunk.size() > m_limit) {
      detail::cas_lied("a xorb range longer than " + std::to_string(m_limit) + " bytes");
    }
    m_into.append(chunk);
  }

private:
  std::string& m_into;
  std::size_t m_limit;
};

std::uint64_t fetch_bytes(const XorbFetch& fetch)
{
  return fetch.byte_end - fetch.byte_start + 1;
}

// The fetches that go in one request: each alone (v1), or all those sharing a URL (v2).
struct RequestGroups {
  std::vector<std::vector<std::size_t>> members; // fetch indexes, per group
  std::vector<std::size_t> group_of;             // per fetch
  std::vector<std::uint64_t> bytes;              // per group
};

RequestGroups request_groups(const ReconstructionPlan& plan)
{
  RequestGroups groups;
  std::map<std::string, std::size_t> by_url;
  groups.group_of.assign(plan.fetches.size(), 0);
  for (std::size_t i = 0; i < plan.fetches.size(); ++i) {
    const auto [found, added] =
      plan.multi_range ? by_url.emplace(plan.fetches[i].url, groups.members.size()) : std::pair{by_url.end(), true};
    if (added) {
      groups.members.emplace_back();
      groups.bytes.push_back(0);
    }
    const auto group = added ? groups.members.size() - 1 : found->second;
    groups.group_of[i] = group;
    groups.members[group].push_back(i);
    groups.bytes[group] += fetch_bytes(plan.fetches[i]);
  }
  return groups;
}

} // namespace

std::string CasClient::fetch_range(const XorbFetch& fetch, std::string buffer)
{
  const auto wanted = fetch_bytes(fetch);
  buffer.clear();
  buffer.reserve(wanted);
  BufferSink sink(buffer, max_xorb_input_bytes);
  http::Request request;
  request.url = fetch.url;
  request.headers.emplace_back("Range",
                               "bytes=" + std::to_string(fetch.byte_start) + "-" + std::to_string(fetch.byte_end));
  request.expected_body = wanted;
  const auto response = send(std::move(request), false, &sink); // a signed URL: no token
  if (!response.ok()) {
    throw RemoteError("the Xet CAS refused a xorb range (HTTP " + std::to_string(response.status) + ")",
                      detail::k_cas_retry_hint);
  }
  if (response.status != 206 && !(response.status == 200 && fetch.byte_start == 0)) {
    detail::cas_lied("a xorb range request with the whole xorb");
  }
  if (buffer.size() != wanted) {
    detail::cas_lied("a xorb range of " + std::to_string(buffer.size()) + " bytes, not the " + std::to_string(wanted)
                     + " asked for");
  }
  return buffer;
}

ReconstructionPlan CasClient::reconstruction_plan(const MerkleHash& file_hash, std::uint64_t size)
{
  // v2 (one signed URL per xorb, multi-range fetches), v1 where the CAS has no v2.
  http::Response response;
  for (const char* version : {"/v2/reconstructions/", "/v1/reconstructions/"}) {
    http::Request request;
    request.url = m_token.cas_url + version + file_hash.hex();
    response = send(std::move(request), true);
    if (response.status != 404 && response.status != 501) {
      break;
    }
  }
  if (!response.ok()) {
    throw RemoteError("the Xet CAS refused the reconstruction of " + file_hash.hex() + " (HTTP "
                        + std::to_string(response.status) + ")",
                      detail::k_cas_retry_hint);
  }
  return parse_reconstruction(response.body, size);
}

// The ranges of the next terms are asked for as soon as the window has room, not a batch at
// a time: the network keeps busy while the terms fetched are decoded and written, and a
// slow range holds up only the terms that need it.
void CasClient::reconstruct(const MerkleHash& file_hash, std::uint64_t size,
                            const std::function<void(std::string_view)>& write)
{
  const auto plan = reconstruction_plan(file_hash, size);
  // How many later terms still need each range: a range is dropped once none does, and
  // one fetched for an earlier term is reused (a file repeating its own chunks).
  std::vector<std::size_t> uses(plan.fetches.size(), 0);
  for (const auto& term : plan.terms) {
    ++uses[term.fetch];
  }
  const auto groups = request_groups(plan);
  std::vector<bool> asked(groups.members.size(), false);
  std::map<std::size_t, std::string> fetched;
  std::vector<std::string> spare; // buffers of decoded ranges, for the next ones
  std::uint64_t spare_bytes = 0;
  std::uint64_t held = 0; // bytes in flight, or fetched and still needed
  struct InFlight {
    std::size_t group;
    std::future<std::vector<std::string>> parts;
  };
  // Declared last: if a fetch throws, the others are waited for before what they read goes.
  std::deque<InFlight> in_flight;
  const auto window = std::max<std::size_t>(1, m_options.parallel_fetches);
  const auto ask = [&](std::size_t group) {
    asked[group] = true;
    held += groups.bytes[group];
    const auto& members = groups.members[group];
    std::string buffer;
    if (members.size() == 1 && !spare.empty()) {
      buffer = std::move(spare.back());
      spare.pop_back();
      spare_bytes -= buffer.capacity();
    }
    in_flight.push_back(
      {group, std::async(std::launch::async, [this, &plan, &members, buffer = std::move(buffer)]() mutable {
         std::vector<std::string> parts;
         if (members.size() == 1) {
           parts.push_back(fetch_range(plan.fetches[members.front()], std::move(buffer)));
           return parts;
         }
         std::vector<const XorbFetch*> wanted;
         for (const auto member : members) {
           wanted.push_back(&plan.fetches[member]);
         }
         return fetch_ranges(wanted);
       })});
  };
  const auto release = [&](std::size_t fetch) {
    const auto it = fetched.find(fetch);
    auto buffer = std::move(it->second);
    fetched.erase(it);
    held -= fetch_bytes(plan.fetches[fetch]);
    if (spare_bytes + buffer.capacity() <= k_fetch_budget_bytes) {
      spare_bytes += buffer.capacity();
      spare.push_back(std::move(buffer));
    }
  };
  std::vector<HashedNode> nodes;
  std::size_t next = 0; // the first term not yet written
  std::size_t scan = 0; // the first term whose range may still need asking for
  while (next < plan.terms.size()) {
    for (; scan < plan.terms.size() && in_flight.size() < window; ++scan) {
      const auto fetch = plan.terms[scan].fetch;
      const auto group = groups.group_of[fetch];
      if (fetched.count(fetch) || asked[group]) {
        continue;
      }
      if (!in_flight.empty() && held + groups.bytes[group] > k_fetch_budget_bytes) {
        break;
      }
      ask(group);
    }
    // The next term's range was asked for: its group, or one asked before it, is the oldest
    // in flight.
    while (!fetched.count(plan.terms[next].fetch)) {
      if (in_flight.empty()) {
        throw std::logic_error("a reconstruction waits for a range it never asked for");
      }
      auto oldest = std::move(in_flight.front());
      in_flight.pop_front();
      auto parts = oldest.parts.get();
      for (std::size_t m = 0; m < groups.members[oldest.group].size(); ++m) {
        const auto member = groups.members[oldest.group][m];
        fetched[member] = std::move(parts[m]);
        if (uses[member] == 0) {
          release(member); // a range no term needs (a CAS that lists one too many)
        }
      }
    }
    // One term, then the window is topped up again before the next.
    const auto& term = plan.terms[next];
    decode_term(fetched.at(term.fetch), plan.fetches[term.fetch], term, [&](const MerkleHash& hash, Bytes data) {
      nodes.push_back({hash, data.size()});
      write(std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
    });
    if (--uses[term.fetch] == 0) {
      release(term.fetch);
    }
    ++next;
  }
  if (xet::file_hash(nodes) != file_hash) {
    detail::cas_lied("chunks that do not hash to the file " + file_hash.hex());
  }
}

} // namespace hubcache::xet
