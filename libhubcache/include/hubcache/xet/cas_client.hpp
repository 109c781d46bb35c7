#pragma once

// The Xet CAS over HTTP: tokens from the Hub, file reconstruction (v1 and v2 answers) with
// parallel, bounded xorb range fetches checked chunk by chunk against the file hash, and
// xorb and shard uploads.

#include "hubcache/http/client.hpp"
#include "hubcache/xet/hash.hpp"
#include "hubcache/xet/shard.hpp"

#include <cstdint>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hubcache::xet {

struct CasToken {
  std::string access_token;
  std::string cas_url;
  std::int64_t expires = 0; // unix seconds
};

// GET a xet-read-token / xet-write-token URL with the Hub token.
CasToken fetch_cas_token(http::Client& client, const std::string& token_url,
                         const std::optional<std::string>& hub_token);

// One signed xorb byte range of a reconstruction: chunks [chunk_start, chunk_end) at bytes
// [byte_start, byte_end] (inclusive) of the serialized xorb.
struct XorbFetch {
  std::string url;
  MerkleHash xorb;
  std::uint32_t chunk_start = 0;
  std::uint32_t chunk_end = 0;
  std::uint64_t byte_start = 0;
  std::uint64_t byte_end = 0;
};

struct ReconstructionTerm {
  MerkleHash xorb;
  std::uint64_t unpacked_length = 0;
  std::uint32_t chunk_start = 0;
  std::uint32_t chunk_end = 0;
  std::size_t fetch = 0; // index in ReconstructionPlan::fetches
};

struct ReconstructionPlan {
  std::vector<ReconstructionTerm> terms;
  std::vector<XorbFetch> fetches;
  // v2: a URL signs all its ranges together, so the fetches sharing a URL go in one
  // multi-range request (v1 URLs are fetched one range at a time).
  bool multi_range = false;
};

// The parts of a multipart/byteranges answer to a request for `fetches` (in that order);
// IntegrityError unless there is one part per range, each exactly the bytes asked for.
std::vector<std::string> split_byteranges(std::string_view body, std::string_view content_type,
                                          const std::vector<const XorbFetch*>& fetches);

// Parses a v1 (`fetch_info`) or v2 (`xorbs`) reconstruction of a whole file of
// `expected_size` bytes; IntegrityError when its terms do not add up to it or a term has
// no range to fetch it from.
ReconstructionPlan parse_reconstruction(std::string_view body, std::uint64_t expected_size);

// The chunks of `term` from the bytes fetched for it, each hashed; IntegrityError when the
// range is short, malformed, or the term's size does not match.
struct DecodedChunk {
  MerkleHash hash;
  std::vector<std::uint8_t> data;
};
std::vector<DecodedChunk> decode_term(std::string_view fetched, const XorbFetch& fetch, const ReconstructionTerm& term);
// The same one chunk at a time, each a view valid during the call (into `fetched` when
// stored uncompressed: no copy); the size check comes last, so a caller writes into
// staging that the file hash check guards.
void decode_term(std::string_view fetched, const XorbFetch& fetch, const ReconstructionTerm& term,
                 const std::function<void(const MerkleHash& hash, Bytes data)>& each);

struct CasOptions {
  std::size_t parallel_fetches = 8;
  std::optional<std::chrono::seconds> stall_timeout;
  http::RetryPolicy retry;
};

class CasClient {
public:
  CasClient(CasToken token, CasOptions options) : m_token(std::move(token)), m_options(std::move(options)) {}

  // Writes the file's bytes in order; throws IntegrityError unless every chunk is there and
  // they hash to `file_hash` with `size` bytes in all.
  void reconstruct(const MerkleHash& file_hash, std::uint64_t size, const std::function<void(std::string_view)>& write);
  void upload_xorb(const MerkleHash& hash, const std::vector<std::uint8_t>& bytes);
  void upload_shard(const std::vector<std::uint8_t>& bytes);
  // Global dedup: the shard the CAS answers for a chunk it holds; nullopt when it does not
  // (404) or gives no usable answer (the query is optional: a miss only costs an upload).
  std::optional<Shard> query_chunk(const MerkleHash& chunk);

  // Where a fresh token comes from when this one is about to expire, or the CAS answers 401
  // (a token that expired in the middle of a push): the request is then sent again once.
  using TokenRefresh = std::function<CasToken()>;
  void set_token_refresh(TokenRefresh refresh) { m_refresh = std::move(refresh); }

private:
  // With a sink, the body of a successful answer goes to it (http::Client::perform).
  http::Response send(http::Request request, bool with_token, http::BodySink* sink = nullptr);
  http::Response send_once(http::Request& request, const std::string& token, http::BodySink* sink);
  std::string current_token(bool force_refresh);
  // The file's terms and the xorb ranges to fetch them from (v2, or v1 where the CAS has no v2).
  ReconstructionPlan reconstruction_plan(const MerkleHash& file_hash, std::uint64_t size);
  // The range's bytes, received into `buffer` (its capacity reused).
  std::string fetch_range(const XorbFetch& fetch, std::string buffer = {});
  std::vector<std::string> fetch_ranges(const std::vector<const XorbFetch*>& fetches);

  std::mutex m_token_mutex;
  TokenRefresh m_refresh;
  CasToken m_token;
  CasOptions m_options;
  http::ClientPool m_clients;
};

// Uploads xorbs on a second thread while the packer fills the next one: one upload in
// flight, so a push holds at most two xorbs. A failed upload is thrown by the next send()
// or by wait(). send() hands back the buffer of the upload it waited for, for the packer to
// build the next xorb in: two buffers go back and forth, no fresh pages per xorb.
class BackgroundXorbUploads {
public:
  explicit BackgroundXorbUploads(CasClient& cas) : m_cas(cas) {}
  BackgroundXorbUploads(const BackgroundXorbUploads&) = delete;
  BackgroundXorbUploads& operator=(const BackgroundXorbUploads&) = delete;
  ~BackgroundXorbUploads();
  std::vector<std::uint8_t> send(const MerkleHash& hash, std::vector<std::uint8_t> bytes);
  void wait();

private:
  CasClient& m_cas;
  std::future<std::vector<std::uint8_t>> m_pending;
};

} // namespace hubcache::xet
