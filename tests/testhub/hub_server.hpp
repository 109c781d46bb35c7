#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <httplib.h>

#include "buckets.hpp"
#include "buffered_server.hpp"
#include "faults.hpp"
#include "http_util.hpp"
#include "limits.hpp"
#include "storage.hpp"
#include "xet_cas.hpp"

namespace testhub {

struct User {
  std::string name;
  std::string token;
  std::string role; // read | write
  Quota quota = *plan_quota("free");
};

struct HubOptions {
  int port = 0;
  stdfs::path data;
  std::vector<User> users;
  std::map<std::string, std::vector<std::string>> orgs; // org -> members
  std::size_t page_size = 1000;
  std::uint64_t lfs_threshold = 10 * 1024 * 1024;
  std::uint64_t multipart_chunk_size = 5ull * 1024 * 1024 * 1024;
  bool offer_verify = true;
  std::size_t threads = 32;
  // A wide-area network: `latency_ms` before each response (API calls and file transfers
  // alike), `bandwidth_mbps` megabits per second per connection each way (0: no cap).
  std::uint64_t latency_ms = 0;
  double bandwidth_mbps = 0;
  LimitOptions limits;                      // the real Hub's limits, on by default
  bool xet = false;                         // speak Xet (tokens, CAS, batch "xet" transfer, resolve headers)
  std::int64_t xet_token_lifetime_s = 3600; // short ones make clients refresh in the middle of a push
  bool log_requests = false;                // where a benchmark's time goes: the server's share of each request
};

// Holds a byte stream to a rate: each call waits until `bytes` more fit the budget since
// the first byte. A rate of 0 never waits.
class Pacer {
public:
  explicit Pacer(double bytes_per_second) : m_rate(bytes_per_second) {}
  void account(std::uint64_t bytes);

private:
  double m_rate;
  std::uint64_t m_total = 0;
  std::optional<std::chrono::steady_clock::time_point> m_start;
};

// The request body, read once: buffered by httplib (small/absent bodies) or streamed
// through its content reader (everything registered as a content-reader handler).
class RequestBody {
public:
  RequestBody(const httplib::Request& request, const httplib::ContentReader* reader, double bytes_per_second = 0)
    : m_request(request), m_reader(reader), m_pacer(bytes_per_second)
  {}
  bool present() const;
  // Passes the body in pieces to `sink`; stops (returning false) when sink returns false.
  bool read(const std::function<bool(const char*, std::size_t)>& sink);
  std::string read_all(std::uint64_t limit);
  void drain();

private:
  const httplib::Request& m_request;
  const httplib::ContentReader* m_reader;
  Pacer m_pacer; // uploads arrive no faster than the per-connection bandwidth
  bool m_consumed = false;
};

struct RequestContext {
  RequestContext(const httplib::Request& req, const httplib::ContentReader* reader, double bytes_per_second = 0)
    : request(req), body(req, reader, bytes_per_second)
  {}

  const httplib::Request& request;
  RequestBody body;
  std::string method;
  std::string target;                // raw path + query, as sent
  std::string path;                  // raw path
  std::vector<std::string> segments; // path segments, each percent-decoded once
  std::multimap<std::string, std::string> query;
  std::string base_url; // http://host:port as the client addressed us
  const User* user = nullptr;
  bool bad_token = false;
  std::string route = "unknown";

  std::optional<std::string> param(const std::string& key) const;
  std::vector<std::string> params(const std::string& key) const;
  bool flag(const std::string& key) const;
};

class HubServer {
public:
  explicit HubServer(HubOptions options);
  // Binds 127.0.0.1 (port 0: any free port) and returns the port.
  int bind();
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  bool listen();
  void stop();

private:
  enum class Access { read, write };

  void handle(const httplib::Request& request, httplib::Response& response, const httplib::ContentReader* reader);
  // Names the route (for statistics) and returns the handler that answers it.
  std::function<Reply()> route(RequestContext& ctx);
  double bytes_per_second() const { return m_options.bandwidth_mbps * 1e6 / 8; }
  void send(const RequestContext& ctx, Reply reply, httplib::Response& response, const std::optional<Fault>& body_fault,
            const std::optional<Fault>& size_fault);

  // Auth
  bool is_member(const User& user, const std::string& ns) const;
  RepoMeta require_repo(RequestContext& ctx, const std::string& repo_id, Access access);
  const User& require_user(RequestContext& ctx);
  std::string sign(const std::string& what) const;
  bool signature_ok(const RequestContext& ctx, const std::string& what) const;

  // /api routes (routes_repo.cpp)
  Reply whoami(RequestContext& ctx);
  Reply create_repo(RequestContext& ctx);
  Reply delete_repo(RequestContext& ctx);
  Reply repo_settings(RequestContext& ctx, const std::string& repo_id);
  Reply model_info(RequestContext& ctx, const std::string& repo_id, const std::string& revision);
  Reply create_branch(RequestContext& ctx, const std::string& repo_id, const std::string& branch);
  Reply delete_branch(RequestContext& ctx, const std::string& repo_id, const std::string& branch);
  Reply list_refs(RequestContext& ctx, const std::string& repo_id);
  Reply list_commits(RequestContext& ctx, const std::string& repo_id, const std::string& revision);

  // Files (routes_files.cpp)
  Reply list_tree(RequestContext& ctx, const std::string& repo_id, const std::string& revision,
                  const std::string& path);
  Reply paths_info(RequestContext& ctx, const std::string& repo_id, const std::string& revision);
  Reply resolve(RequestContext& ctx, const std::string& repo_id, const std::string& revision, const std::string& path,
                bool raw);
  Reply preupload(RequestContext& ctx, const std::string& repo_id, const std::string& revision);
  Reply commit(RequestContext& ctx, const std::string& repo_id, const std::string& revision);
  json entry_json(const RepoMeta& repo, const Commit& head, const std::string& path, bool is_directory, bool expand);
  std::shared_ptr<const Commit> resolve_commit(const RepoMeta& repo, const std::string& revision, bool json_errors);

  // LFS (routes_lfs.cpp)
  Reply lfs_batch(RequestContext& ctx, const std::string& repo_id);
  Reply lfs_verify(RequestContext& ctx, const std::string& repo_id);
  Reply lfs_upload(RequestContext& ctx, const std::string& repo_id, const std::string& oid);
  Reply lfs_part(RequestContext& ctx, const std::string& upload_id, const std::string& part);
  Reply lfs_complete(RequestContext& ctx, const std::string& upload_id);
  Reply lfs_cdn(RequestContext& ctx, const std::string& repo_id, const std::string& oid);
  Reply serve_file(RequestContext& ctx, Reply reply, const stdfs::path& file, std::uint64_t size);
  // --log-requests: "<ms since start> <route> <method> <target> <status> <handler ms>" on stderr.
  void log_request(const std::string& route, int status, std::chrono::steady_clock::time_point handled_from);

  // Xet (routes_xet.cpp), with --xet only
  std::string xet_token_url(const RequestContext& ctx, const std::string& repo_id, const std::string& scope,
                            const std::string& revision) const;
  json xet_token(const RequestContext& ctx, const std::string& repo_id, const std::string& scope) const;
  Reply xet_token_route(RequestContext& ctx, const std::string& repo_id, bool write);
  std::string xet_authorize(const RequestContext& ctx, bool write) const;
  std::function<Reply()> route_cas(RequestContext& ctx);
  Reply cas_xorb_upload(RequestContext& ctx, const std::string& hash);
  Reply cas_shard_upload(RequestContext& ctx);
  Reply cas_reconstruction(RequestContext& ctx, const std::string& file_id, int version);
  Reply cas_xorb_data(RequestContext& ctx, const std::string& hash);
  std::optional<json> xet_upload_action(const RequestContext& ctx, const RepoMeta& repo) const;
  std::optional<std::string> xet_hash_of(const FileEntry& entry) const;
  std::optional<Reply> xet_resolve(const RequestContext& ctx, const RepoMeta& repo, const Commit& head,
                                   const FileEntry& entry, Reply& reply) const;

  // Storage Buckets (routes_buckets.cpp)
  std::function<Reply()> route_buckets(RequestContext& ctx);
  Bucket& require_bucket(RequestContext& ctx, const std::string& id, Access access);
  Reply bucket_create(RequestContext& ctx, std::string ns, const std::string& name);
  Reply bucket_info(RequestContext& ctx, const std::string& id);
  Reply bucket_delete(RequestContext& ctx, const std::string& id);
  Reply bucket_tree(RequestContext& ctx, const std::string& id, const std::string& prefix);
  Reply bucket_paths_info(RequestContext& ctx, const std::string& id);
  Reply bucket_xet_token(RequestContext& ctx, const std::string& id, bool write);
  std::string bucket_apply(Bucket& bucket, const json& op, bool& lied);
  Reply bucket_batch(RequestContext& ctx, const std::string& id);
  Reply bucket_resolve(RequestContext& ctx, const std::string& id, const std::string& path);
  Reply bucket_control(RequestContext& ctx);

  // /_test control routes (main file documents them)
  Reply control(RequestContext& ctx);
  Reply inject_tree_entry(RequestContext& ctx);

  // The sorted (path, is_directory) list a tree request pages through. A commit never
  // changes, so the list of the last few (commit, path, recursive) is kept: a client paging
  // through 40,000 files asks 40 times, and sorting them each time made the server, not
  // the client, the slowest part of a benchmark.
  using TreeEntries = std::vector<std::pair<std::string, bool>>;
  std::shared_ptr<const TreeEntries> tree_entries(const Commit& head, const std::string& path, bool recursive);
  std::mutex m_tree_cache_mutex;
  std::vector<std::pair<std::string, std::shared_ptr<const TreeEntries>>> m_tree_cache; // newest last

  HubOptions m_options;
  Storage m_storage;
  std::optional<XetCas> m_xet; // with --xet
  const std::chrono::steady_clock::time_point m_started = std::chrono::steady_clock::now();
  std::mutex m_log_mutex;
  BucketStore m_buckets;
  FaultRegistry m_faults;
  Limits m_limits;
  RequestStats m_stats;
  BufferedServer m_server;
  int m_port = 0;
};

} // namespace testhub
