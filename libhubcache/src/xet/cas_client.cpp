#include "hubcache/xet/cas_client.hpp"
#include "cas_answer.hpp"

#include "hubcache/xet/merkle.hpp"
#include "hubcache/xet/xorb.hpp"

#include <nlohmann/json.hpp>

#include <thread>

namespace hubcache::xet {

using json = nlohmann::json;

namespace {

constexpr std::size_t k_max_terms = 1u << 20;
constexpr std::int64_t k_token_margin_s = 60;

MerkleHash hash_field(const json& value)
{
  auto hash = value.is_string() ? MerkleHash::from_hex(value.get<std::string>()) : std::nullopt;
  if (!hash) {
    detail::cas_lied("a reconstruction with a malformed hash");
  }
  return *hash;
}

std::uint64_t number_field(const json& object, const char* key)
{
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_number_unsigned()) {
    detail::cas_lied(std::string("a reconstruction without a valid \"") + key + "\"");
  }
  return object.at(key).get<std::uint64_t>();
}

XorbFetch make_fetch(const std::string& url, const MerkleHash& xorb, const json& chunks, const json& bytes)
{
  XorbFetch fetch{url,
                  xorb,
                  static_cast<std::uint32_t>(number_field(chunks, "start")),
                  static_cast<std::uint32_t>(number_field(chunks, "end")),
                  number_field(bytes, "start"),
                  number_field(bytes, "end")};
  if (fetch.chunk_start >= fetch.chunk_end || fetch.chunk_end > max_xorb_chunks || fetch.byte_start > fetch.byte_end
      || fetch.byte_end - fetch.byte_start >= max_xorb_input_bytes || url.empty()) {
    detail::cas_lied("a reconstruction with an impossible xorb range");
  }
  return fetch;
}

std::vector<XorbFetch> parse_fetches(const json& answer)
{
  std::vector<XorbFetch> fetches;
  const bool v2 = answer.contains("xorbs");
  const auto& table = v2 ? answer.at("xorbs") : answer.value("fetch_info", json::object());
  if (!table.is_object()) {
    detail::cas_lied("a reconstruction without xorb ranges");
  }
  for (const auto& [hash_text, entries] : table.items()) {
    const auto xorb = hash_field(hash_text);
    if (!entries.is_array()) {
      detail::cas_lied("a reconstruction with malformed xorb ranges");
    }
    for (const auto& entry : entries) {
      const auto url = entry.is_object() ? entry.value("url", std::string{}) : std::string{};
      if (!v2) {
        fetches.push_back(make_fetch(url, xorb, entry.value("range", json{}), entry.value("url_range", json{})));
        continue;
      }
      // One URL may sign several ranges; each is fetched on its own.
      for (const auto& range : entry.value("ranges", json::array())) {
        fetches.push_back(make_fetch(url, xorb, range.value("chunks", json{}), range.value("bytes", json{})));
      }
    }
  }
  return fetches;
}

} // namespace

CasToken fetch_cas_token(http::Client& client, const std::string& token_url,
                         const std::optional<std::string>& hub_token)
{
  http::Request request;
  request.url = token_url;
  if (hub_token) {
    request.headers.emplace_back("Authorization", "Bearer " + *hub_token);
  }
  request.body_limit = 64 * 1024;
  auto response = client.perform(request);
  if (!response.ok()) {
    throw RemoteError("the Hub refused a Xet token (HTTP " + std::to_string(response.status) + ")",
                      "check the token's access to the repo, or set HF_HUB_DISABLE_XET=1");
  }
  try {
    const auto body = json::parse(response.body);
    CasToken token{body.at("accessToken").get<std::string>(), body.at("casUrl").get<std::string>(),
                   body.at("exp").get<std::int64_t>()};
    while (!token.cas_url.empty() && token.cas_url.back() == '/') {
      token.cas_url.pop_back();
    }
    return token;
  } catch (const json::exception&) {
    throw RemoteError("the Hub answered a Xet token request with something else than a token",
                      detail::k_cas_retry_hint);
  }
}

ReconstructionPlan parse_reconstruction(std::string_view body, std::uint64_t expected_size)
{
  json answer;
  try {
    answer = json::parse(body);
  } catch (const json::exception&) {
    detail::cas_lied("a reconstruction that is not JSON");
  }
  if (!answer.is_object() || !answer.contains("terms") || !answer.at("terms").is_array()) {
    detail::cas_lied("a reconstruction without terms");
  }
  if (answer.value("offset_into_first_range", json(0)) != json(0)) {
    detail::cas_lied("a reconstruction that starts inside its first term");
  }
  ReconstructionPlan plan;
  plan.fetches = parse_fetches(answer);
  plan.multi_range = answer.contains("xorbs");
  const auto& terms = answer.at("terms");
  if (terms.size() > k_max_terms) {
    detail::cas_lied("a reconstruction with too many terms");
  }
  std::uint64_t total = 0;
  for (const auto& item : terms) {
    ReconstructionTerm term{hash_field(item.value("hash", json{})), number_field(item, "unpacked_length"), 0, 0, 0};
    const auto& range = item.value("range", json{});
    term.chunk_start = static_cast<std::uint32_t>(number_field(range, "start"));
    term.chunk_end = static_cast<std::uint32_t>(number_field(range, "end"));
    if (term.chunk_start >= term.chunk_end || term.unpacked_length > max_xorb_bytes) {
      detail::cas_lied("a reconstruction term with an impossible chunk range");
    }
    std::size_t found = 0;
    while (found < plan.fetches.size()) {
      const auto& fetch = plan.fetches[found];
      if (fetch.xorb == term.xorb && fetch.chunk_start <= term.chunk_start && fetch.chunk_end >= term.chunk_end) {
        break;
      }
      ++found;
    }
    if (found == plan.fetches.size()) {
      detail::cas_lied("a reconstruction term without a range to fetch it from");
    }
    term.fetch = found;
    total += term.unpacked_length;
    plan.terms.push_back(term);
  }
  if (total != expected_size) {
    detail::cas_lied("a reconstruction whose terms add up to " + std::to_string(total) + " bytes, not the "
                     + std::to_string(expected_size) + " of the file");
  }
  return plan;
}

void decode_term(std::string_view fetched, const XorbFetch& fetch, const ReconstructionTerm& term,
                 const std::function<void(const MerkleHash& hash, Bytes data)>& each)
{
  const Bytes bytes(reinterpret_cast<const std::uint8_t*>(fetched.data()), fetched.size());
  XorbLayout layout;
  try {
    layout = read_xorb_layout(bytes);
  } catch (const FormatError& error) {
    detail::cas_lied(std::string("a xorb range that does not parse: ") + error.what());
  }
  const auto first = term.chunk_start - fetch.chunk_start;
  const auto count = term.chunk_end - term.chunk_start;
  if (layout.chunks.size() < first + count) {
    detail::cas_lied("a xorb range with " + std::to_string(layout.chunks.size()) + " chunks, short of the "
                     + std::to_string(first + count) + " asked for");
  }
  std::uint64_t size = 0;
  std::vector<std::uint8_t> scratch;
  for (std::size_t i = first; i < first + count; ++i) {
    Bytes data;
    try {
      data = xorb_chunk_view(bytes, layout.chunks[i], scratch);
    } catch (const FormatError& error) {
      detail::cas_lied(std::string("a xorb chunk that does not decode: ") + error.what());
    }
    size += data.size();
    if (size > term.unpacked_length) {
      break;
    }
    each(chunk_hash(data), data);
  }
  if (size != term.unpacked_length) {
    detail::cas_lied("a term of " + std::to_string(size) + " bytes where it announced "
                     + std::to_string(term.unpacked_length));
  }
}

std::vector<DecodedChunk> decode_term(std::string_view fetched, const XorbFetch& fetch, const ReconstructionTerm& term)
{
  std::vector<DecodedChunk> chunks;
  decode_term(fetched, fetch, term, [&chunks](const MerkleHash& hash, Bytes data) {
    chunks.push_back({hash, std::vector<std::uint8_t>(data.begin(), data.end())});
  });
  return chunks;
}

// The token to send: refreshed first when it expires within a minute (as the JS client
// does) or when the CAS refused it.
std::string CasClient::current_token(bool force_refresh)
{
  std::lock_guard lock(m_token_mutex);
  const auto now =
    std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (m_refresh && (force_refresh || m_token.expires <= now + k_token_margin_s)) {
    auto fresh = m_refresh();
    if (fresh.cas_url != m_token.cas_url) {
      throw RemoteError("the Hub moved the Xet CAS in the middle of a transfer", detail::k_cas_retry_hint);
    }
    m_token = std::move(fresh);
  }
  return m_token.access_token;
}

http::Response CasClient::send_once(http::Request& request, const std::string& token, http::BodySink* sink)
{
  // The token goes on for this call only, without copying the request: its body may be a
  // 16 MiB xorb.
  struct TokenHeader {
    http::Request& request;
    std::size_t headers = request.headers.size();
    ~TokenHeader() { request.headers.resize(headers); }
  } scope{request};
  if (!token.empty()) {
    request.headers.emplace_back("Authorization", "Bearer " + token);
  }
  request.stall_timeout = m_options.stall_timeout;
  const auto& sent = request;
  for (int attempt = 1;; ++attempt) {
    http::Response response;
    try {
      auto client = m_clients.acquire();
      response = client->perform(sent, sink);
    } catch (const http::TransportError& error) {
      const auto delay = error.retryable() ? m_options.retry.delay_after(attempt, nullptr) : std::nullopt;
      if (!delay) {
        throw;
      }
      std::this_thread::sleep_for(*delay);
      continue;
    }
    if (response.ok()) {
      return response;
    }
    const auto delay = m_options.retry.delay_after(attempt, &response);
    if (!delay) {
      return response;
    }
    std::this_thread::sleep_for(*delay);
  }
}

http::Response CasClient::send(http::Request request, bool with_token, http::BodySink* sink)
{
  if (!with_token) {
    return send_once(request, {}, sink);
  }
  auto response = send_once(request, current_token(false), sink);
  if (response.status == 401 && m_refresh) {
    response = send_once(request, current_token(true), sink);
  }
  return response;
}

void CasClient::upload_xorb(const MerkleHash& hash, const std::vector<std::uint8_t>& bytes)
{
  http::Request request;
  request.method = "POST";
  request.url = m_token.cas_url + "/v1/xorbs/default/" + hash.hex();
  request.body_view = std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const auto response = send(std::move(request), true);
  if (!response.ok()) {
    throw RemoteError("the Xet CAS refused xorb " + hash.hex() + " (HTTP " + std::to_string(response.status) + ")",
                      detail::k_cas_retry_hint);
  }
}

void CasClient::upload_shard(const std::vector<std::uint8_t>& bytes)
{
  http::Request request;
  request.method = "POST";
  request.url = m_token.cas_url + "/v1/shards";
  request.body = std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const auto response = send(std::move(request), true);
  if (!response.ok()) {
    throw RemoteError("the Xet CAS refused the shard (HTTP " + std::to_string(response.status) + ")",
                      detail::k_cas_retry_hint);
  }
}

} // namespace hubcache::xet

namespace hubcache::xet {

std::optional<Shard> CasClient::query_chunk(const MerkleHash& chunk)
{
  http::Request request;
  request.url = m_token.cas_url + "/v1/chunks/default/" + chunk.hex();
  request.body_limit = max_shard_bytes + shard_footer_size;
  const auto response = send(std::move(request), true);
  if (!response.ok()) {
    return std::nullopt;
  }
  try {
    return parse_shard(Bytes(reinterpret_cast<const std::uint8_t*>(response.body.data()), response.body.size()));
  } catch (const FormatError&) {
    return std::nullopt; // a shard that does not parse is no answer: upload the chunks
  }
}

} // namespace hubcache::xet

namespace hubcache::xet {

BackgroundXorbUploads::~BackgroundXorbUploads()
{
  if (m_pending.valid()) {
    m_pending.wait(); // its failure, if any, is not this scope's to report
  }
}

std::vector<std::uint8_t> BackgroundXorbUploads::send(const MerkleHash& hash, std::vector<std::uint8_t> bytes)
{
  auto sent = m_pending.valid() ? m_pending.get() : std::vector<std::uint8_t>{};
  m_pending = std::async(std::launch::async, [this, hash, bytes = std::move(bytes)]() mutable {
    m_cas.upload_xorb(hash, bytes);
    return std::move(bytes);
  });
  return sent;
}

void BackgroundXorbUploads::wait()
{
  if (m_pending.valid()) {
    m_pending.get();
  }
}

} // namespace hubcache::xet
