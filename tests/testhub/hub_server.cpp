#include "hub_server.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "hubcache/util/hash.hpp"

namespace testhub {

namespace {

constexpr std::size_t k_io_chunk = 64 * 1024;

bool valid_host(const std::string& host)
{
  if (host.empty() || host.size() > 255)
    return false;
  for (char c : host) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != ':' && c != '-' && c != '[' && c != ']')
      return false;
  }
  return true;
}

// How the body of one response is altered by an injected fault.
struct BodyMutation {
  bool corrupt = false;
  std::optional<std::uint64_t> cut_after; // close the connection after this many bytes
};

// Writes `data` through the mutation; false once the connection must be dropped.
bool write_mutated(httplib::DataSink& sink, const char* data, std::size_t size, std::uint64_t& sent,
                   const BodyMutation& mutation)
{
  std::size_t allowed = size;
  if (mutation.cut_after)
    allowed = static_cast<std::size_t>(
      std::min<std::uint64_t>(size, *mutation.cut_after - std::min(sent, *mutation.cut_after)));
  if (allowed > 0) {
    if (mutation.corrupt) {
      std::string altered(data, allowed);
      for (auto& c : altered)
        c = static_cast<char>(c ^ 0x5A);
      if (!sink.write(altered.data(), altered.size()))
        return false;
    } else if (!sink.write(data, allowed)) {
      return false;
    }
    sent += allowed;
  }
  return allowed == size;
}

} // namespace

// ---- RequestBody ---------------------------------------------------------------------------

bool RequestBody::present() const
{
  // HTTP/1.1: a request without Content-Length or chunked encoding has no body (httplib
  // would otherwise wait for the connection to close, e.g. on a bare DELETE from libcurl).
  const bool framed = m_request.has_header("Content-Length")
                      || m_request.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
  return (m_reader != nullptr && framed) || !m_request.body.empty();
}

void Pacer::account(std::uint64_t bytes)
{
  if (m_rate <= 0)
    return;
  const auto now = std::chrono::steady_clock::now();
  if (!m_start)
    m_start = now;
  m_total += bytes;
  const auto due = *m_start
                   + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(static_cast<double>(m_total) / m_rate));
  if (due > now)
    std::this_thread::sleep_until(due);
}

bool RequestBody::read(const std::function<bool(const char*, std::size_t)>& sink)
{
  if (m_consumed)
    return true;
  m_consumed = true;
  const auto paced = [&](const char* data, std::size_t size) {
    m_pacer.account(size);
    return sink(data, size);
  };
  if (m_reader && present())
    return (*m_reader)([&](const char* data, std::size_t size) { return paced(data, size); });
  if (!m_request.body.empty())
    return paced(m_request.body.data(), m_request.body.size());
  return true;
}

std::string RequestBody::read_all(std::uint64_t limit)
{
  std::string out;
  // Sized once from Content-Length (within the limit): an 8 MiB xorb arrives 4 KiB at a time,
  // and growing the string by doubling copied it about twice over.
  if (m_reader && m_request.has_header("Content-Length")) {
    const auto declared = std::strtoull(m_request.get_header_value("Content-Length").c_str(), nullptr, 10);
    out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(declared, limit)));
  }
  bool too_large = false;
  read([&](const char* data, std::size_t size) {
    if (out.size() + size > limit) {
      too_large = true;
      return false;
    }
    out.append(data, size);
    return true;
  });
  if (too_large)
    throw HubError(413, "Request body too large");
  return out;
}

void RequestBody::drain()
{
  read([](const char*, std::size_t) { return true; });
}

// ---- RequestContext ------------------------------------------------------------------------

std::optional<std::string> RequestContext::param(const std::string& key) const
{
  const auto it = query.find(key);
  if (it == query.end())
    return std::nullopt;
  return it->second;
}

std::vector<std::string> RequestContext::params(const std::string& key) const
{
  std::vector<std::string> values;
  const auto [first, last] = query.equal_range(key);
  for (auto it = first; it != last; ++it)
    values.push_back(it->second);
  return values;
}

bool RequestContext::flag(const std::string& key) const
{
  const auto value = param(key);
  return value && is_truthy(*value);
}

// ---- HubServer -----------------------------------------------------------------------------

HubServer::HubServer(HubOptions options)
  : m_options(std::move(options)), m_storage(m_options.data), m_buckets(m_options.data / "buckets"),
    m_limits(m_options.limits)
{
  if (m_options.xet) {
    m_xet.emplace(m_options.data / "xet");
    m_storage.set_xet_rebuild([this](const std::string& sha256, const stdfs::path& out) {
      const auto hash = m_xet->file_hash_of_sha256(sha256);
      const auto file = hash ? m_xet->file(*hash) : std::nullopt;
      if (!file)
        return false;
      m_xet->reconstruct(*file, out);
      return true;
    });
  }
  const auto threads = m_options.threads;
  // httplib owns (and deletes) the task queue it gets from this factory.
  m_server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  m_server.set_keep_alive_timeout(5);
  m_server.set_keep_alive_max_count(1000);
  m_server.set_read_timeout(30);
  m_server.set_write_timeout(30);
  // Small answers must not wait ~40 ms for a delayed ACK (Nagle): the real Hub's front
  // ends send them at once.
  m_server.set_tcp_nodelay(true);

  const auto plain = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res, nullptr); };
  const auto streamed = [this](const httplib::Request& req, httplib::Response& res,
                               const httplib::ContentReader& reader) { handle(req, res, &reader); };
  const std::string any = "/.*";
  m_server.Get(any, plain);
  m_server.Post(any, streamed);
  m_server.Post(any, plain);
  m_server.Put(any, streamed);
  m_server.Put(any, plain);
  m_server.Delete(any, streamed);
  m_server.Delete(any, plain);
  m_server.Patch(any, streamed);
  m_server.Patch(any, plain);
  m_server.Options(any, plain);
  // Errors httplib answers by itself (malformed requests...) get the Hub's shape too.
  m_server.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
    if (res.has_header("X-Request-Id"))
      return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("X-Request-Id", "Root=1-" + random_hex(8) + "-" + random_hex(24));
    const auto message = "HTTP error " + std::to_string(res.status);
    res.set_header("X-Error-Message", message);
    res.set_content(json{{"error", message}}.dump(), "application/json; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
  }));
  m_server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    res.status = 500;
    res.set_content(json{{"error", what}}.dump(), "application/json; charset=utf-8");
  });
}

int HubServer::bind()
{
  if (m_options.port == 0) {
    m_port = m_server.bind_to_any_port("127.0.0.1");
  } else {
    m_port = m_server.bind_to_port("127.0.0.1", m_options.port) ? m_options.port : -1;
  }
  return m_port;
}

bool HubServer::listen()
{
  return m_server.listen_after_bind();
}
void HubServer::stop()
{
  m_server.stop();
}

std::string HubServer::sign(const std::string& what) const
{
  return hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha256, m_storage.secret() + ":" + what)
    .substr(0, 32);
}

bool HubServer::signature_ok(const RequestContext& ctx, const std::string& what) const
{
  const auto sig = ctx.param("sig");
  return sig && *sig == sign(what);
}

bool HubServer::is_member(const User& user, const std::string& ns) const
{
  if (user.name == ns)
    return true;
  const auto it = m_options.orgs.find(ns);
  return it != m_options.orgs.end() && std::find(it->second.begin(), it->second.end(), user.name) != it->second.end();
}

const User& HubServer::require_user(RequestContext& ctx)
{
  if (ctx.bad_token)
    throw HubError(401, "Invalid credentials in Authorization header");
  if (!ctx.user)
    throw HubError(401, "Invalid username or password.");
  return *ctx.user;
}

RepoMeta HubServer::require_repo(RequestContext& ctx, const std::string& repo_id, Access access)
{
  const auto repo = m_storage.find_repo(repo_id);
  const bool readable = repo && (!repo->is_private || (ctx.user && is_member(*ctx.user, repo->ns)));
  if (ctx.bad_token && repo && !repo->is_private)
    throw HubError(401, "Invalid credentials in Authorization header");
  if (!readable || ctx.bad_token) {
    // Like the Hub: anonymous callers cannot tell a private repo from a missing one.
    if (!ctx.user)
      throw HubError(401, "Invalid username or password.", "RepoNotFound");
    throw HubError(404, "Repository not found", "RepoNotFound");
  }
  if (access == Access::write) {
    if (!ctx.user)
      throw HubError(401, "Invalid username or password.");
    if (ctx.user->role != "write" || !is_member(*ctx.user, repo->ns))
      throw HubError(403, "You don't have the rights to write to " + repo_id
                            + ". Use a token with the write role from an account with access to this repo.");
  }
  return *repo;
}

void HubServer::log_request(const std::string& route, int status, std::chrono::steady_clock::time_point handled_from)
{
  using std::chrono::duration;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(m_log_mutex);
  std::fprintf(stderr, "%.1f %s %d %.2f\n", duration<double, std::milli>(handled_from - m_started).count(),
               route.c_str(), status, duration<double, std::milli>(now - handled_from).count());
}

void HubServer::handle(const httplib::Request& request, httplib::Response& response,
                       const httplib::ContentReader* reader)
{
  // Range is answered by the routes themselves (206/416 as the Hub does); httplib would
  // otherwise slice every response again, so hide it from httplib's writer.
  const_cast<httplib::Request&>(request).ranges.clear();

  RequestContext ctx(request, reader, bytes_per_second());
  ctx.method = request.method;
  ctx.target = request.target;
  const auto question = ctx.target.find('?');
  ctx.path = ctx.target.substr(0, question);
  for (const auto& segment : split(ctx.path, '/')) {
    if (!segment.empty())
      ctx.segments.push_back(percent_decode(segment));
  }
  if (question != std::string::npos) {
    for (const auto& pair : split(std::string_view(ctx.target).substr(question + 1), '&')) {
      if (pair.empty())
        continue;
      const auto eq = pair.find('=');
      ctx.query.emplace(percent_decode(pair.substr(0, eq), true),
                        eq == std::string::npos ? std::string{} : percent_decode(pair.substr(eq + 1), true));
    }
  }
  const auto host = request.get_header_value("Host");
  ctx.base_url = valid_host(host) ? "http://" + host : base_url();
  const auto authorization = request.get_header_value("Authorization");
  if (!authorization.empty()) {
    constexpr std::string_view bearer = "Bearer ";
    const auto token = authorization.rfind(bearer, 0) == 0 ? authorization.substr(bearer.size()) : std::string{};
    for (const auto& user : m_options.users) {
      if (!token.empty() && user.token == token)
        ctx.user = &user;
    }
    ctx.bad_token = ctx.user == nullptr;
  }

  const bool is_control = !ctx.segments.empty() && ctx.segments[0] == "_test";
  const auto decoded_path = percent_decode(ctx.path);
  std::optional<Fault> fault;
  if (!is_control)
    fault = m_faults.find(ctx.method, decoded_path, ctx.target);
  const auto handler = route(ctx);

  const auto handled_from = std::chrono::steady_clock::now();
  Reply reply;
  std::optional<Fault> body_fault;
  std::optional<Fault> size_fault;
  // Every counted request draws from its sender's quota; anonymous ones share the IP's.
  Limits::Admission admission;
  if (const auto bucket = is_control ? std::nullopt : quota_bucket(ctx.route)) {
    admission = m_limits.admit(ctx.user ? "user:" + ctx.user->name : "ip:" + request.remote_addr,
                               ctx.user ? ctx.user->quota : *plan_quota("anonymous"), *bucket, *bucket == "api");
  }
  if (admission.refused) {
    ctx.body.drain();
    reply = std::move(*admission.refused);
  } else if (fault && fault->before_handler() && m_faults.consume(fault->id)) {
    ctx.body.drain();
    if (fault->action == Fault::Action::status) {
      reply =
        error_reply(fault->status,
                    fault->message.empty() ? "Injected fault: HTTP " + std::to_string(fault->status) : fault->message);
      if (fault->retry_after)
        reply.header("Retry-After", std::to_string(*fault->retry_after));
      if (fault->status == 429) {
        const auto t = std::to_string(fault->retry_after.value_or(1));
        reply.header("RateLimit", "\"api\";r=0;t=" + t);
        reply.header("RateLimit-Policy", "\"fixed window\";\"api\";q=500;w=300");
      }
    } else {
      reply.content_type = "application/json; charset=utf-8";
      reply.body = "{\"error\": this is not JSON, \"oid\": [1, 2";
    }
  } else if (fault && fault->action == Fault::Action::drop_after_bytes && ctx.body.present()
             && m_faults.consume(fault->id)) {
    // A connection lost mid-upload: take `bytes` of the request body, then hang up.
    std::uint64_t taken = 0;
    ctx.body.read([&](const char*, std::size_t size) {
      taken += size;
      return taken < fault->bytes;
    });
    reply.status = 500;
    reply.content_type = "text/plain";
    reply.body = "connection dropped by injected fault";
    body_fault = fault;
    body_fault->bytes = 0;
  } else {
    try {
      reply = handler();
    } catch (const HubError& e) {
      const bool text = ctx.route == "resolve" || ctx.route == "raw" || ctx.route == "lfs_cdn";
      reply = error_reply(e.status(), e.what(), !text, e.code());
      if (e.status() == 401)
        reply.header("WWW-Authenticate", "Bearer realm=\"Authentication required\", charset=\"UTF-8\"");
    } catch (const std::exception& e) {
      reply = error_reply(500, std::string("Internal error: ") + e.what());
    }
    ctx.body.drain();
    if (fault && !fault->before_handler()) {
      const bool is_redirect = reply.status >= 300 && reply.status < 400;
      if (fault->action == Fault::Action::wrong_size) {
        if (m_faults.consume(fault->id))
          size_fault = fault;
      } else if (ctx.method != "HEAD" && !is_redirect && m_faults.consume(fault->id)) {
        body_fault = fault;
      }
    }
  }
  for (const auto& [name, value] : admission.headers)
    reply.header(name, value);
  if (m_options.log_requests)
    log_request(ctx.route + " " + ctx.method + " " + ctx.target, reply.status, handled_from);
  if (!is_control) {
    m_stats.record(ctx.route, ctx.method, reply.status);
    // The wide-area round trip, once per request, whatever it is.
    if (m_options.latency_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(m_options.latency_ms));
  }
  send(ctx, std::move(reply), response, body_fault, size_fault);
}

void HubServer::send(const RequestContext& ctx, Reply reply, httplib::Response& response,
                     const std::optional<Fault>& body_fault, const std::optional<Fault>& size_fault)
{
  response.status = reply.status;
  response.set_header("X-Request-Id", "Root=1-" + random_hex(8) + "-" + random_hex(24));
  if (body_fault && body_fault->action == Fault::Action::short_body) { // a whole answer, just shorter
    const auto size = reply.body_size();
    const auto cut = body_fault->bytes > 0 ? std::min(body_fault->bytes, size) : size / 2;
    if (reply.file)
      reply.file->length -= cut;
    else
      reply.body.resize(size - cut);
  }
  const auto real_size = reply.body_size();
  std::uint64_t advertised = real_size;
  if (size_fault) {
    const auto wrong = size_fault->size.value_or(real_size + 1);
    if (reply.find_header("X-Linked-Size"))
      reply.replace_header("X-Linked-Size", std::to_string(wrong));
    else
      advertised = wrong;
  }
  for (const auto& [name, value] : reply.headers)
    response.set_header(name, value);
  if (reply.content_type.empty())
    reply.content_type = "text/plain; charset=utf-8";

  BodyMutation mutation;
  if (body_fault) {
    switch (body_fault->action) {
    case Fault::Action::corrupt_body: mutation.corrupt = true; break;
    case Fault::Action::truncate_body:
      mutation.cut_after = body_fault->bytes > 0 ? std::min(body_fault->bytes, real_size) : real_size / 2;
      break;
    case Fault::Action::drop_after_bytes: mutation.cut_after = std::min(body_fault->bytes, real_size); break;
    default: break;
    }
  }
  if (advertised > real_size)
    mutation.cut_after = std::min(mutation.cut_after.value_or(real_size), real_size);

  // With a bandwidth cap every body goes through the paced provider below.
  const bool paced = bytes_per_second() > 0 && ctx.method != "HEAD";
  const bool plain_body = !reply.file && !body_fault && advertised == real_size && !paced;
  if (plain_body) {
    if (!reply.body.empty() || ctx.method == "HEAD")
      response.set_content(std::move(reply.body), reply.content_type);
    else
      response.set_header("Content-Type", reply.content_type);
    return;
  }
  if (advertised == 0 && !mutation.cut_after) {
    response.set_header("Content-Type", reply.content_type);
    return;
  }
  if (advertised == 0) {
    // Nothing to send but the connection must still drop: httplib ignores zero-length
    // providers, so advertise one byte that never comes.
    advertised = 1;
  }
  std::shared_ptr<std::string> text;
  std::shared_ptr<std::FILE> file;
  std::uint64_t file_offset = 0;
  if (reply.file) {
    file.reset(std::fopen(reply.file->path.c_str(), "rb"), [](std::FILE* f) {
      if (f)
        std::fclose(f);
    });
    file_offset = reply.file->offset;
    if (!file) {
      response.status = 500;
      response.set_content(json{{"error", "cannot open stored object"}}.dump(), "application/json; charset=utf-8");
      return;
    }
  } else {
    text = std::make_shared<std::string>(std::move(reply.body));
  }
  auto sent = std::make_shared<std::uint64_t>(0);
  auto pacer = std::make_shared<Pacer>(bytes_per_second());
  response.set_content_provider(static_cast<std::size_t>(advertised), reply.content_type,
                                [text, file, file_offset, real_size, sent, mutation,
                                 pacer](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                                  if (offset >= real_size)
                                    return false; // advertised more than we have: hang up
                                  const auto count = std::min<std::uint64_t>({length, real_size - offset, k_io_chunk});
                                  pacer->account(count);
                                  if (text)
                                    return write_mutated(sink, text->data() + offset, static_cast<std::size_t>(count),
                                                         *sent, mutation);
                                  std::string buffer(static_cast<std::size_t>(count), '\0');
                                  if (std::fseek(file.get(), static_cast<long>(file_offset + offset), SEEK_SET) != 0)
                                    return false;
                                  const auto got = std::fread(buffer.data(), 1, buffer.size(), file.get());
                                  if (got == 0)
                                    return false;
                                  return write_mutated(sink, buffer.data(), got, *sent, mutation);
                                });
}

} // namespace testhub

namespace testhub {

namespace {

std::string join(const std::vector<std::string>& parts, std::size_t from, std::size_t to = std::string::npos)
{
  std::string out;
  for (std::size_t i = from; i < parts.size() && i < to; ++i) {
    if (!out.empty())
      out += '/';
    out += parts[i];
  }
  return out;
}

// A revision is one segment, except raw `refs/<kind>/<name>` which takes three.
std::size_t revision_length(const std::vector<std::string>& parts, std::size_t at)
{
  if (at < parts.size() && parts[at] == "refs" && at + 2 < parts.size())
    return 3;
  return 1;
}

Reply not_found_route()
{
  return error_reply(404, "Sorry, we can't find the page you are looking for.");
}

} // namespace

std::function<Reply()> HubServer::route(RequestContext& ctx)
{
  const auto& s = ctx.segments;
  const auto& m = ctx.method;
  const bool get = m == "GET" || m == "HEAD";
  const auto named = [&ctx](std::string name, std::function<Reply()> handler) {
    ctx.route = std::move(name);
    return handler;
  };
  if (s.empty())
    return named("unknown", [] { return not_found_route(); });

  if (s[0] == "_test")
    return named("control", [this, &ctx] { return control(ctx); });
  if (s[0] == "cas" && m_xet)
    return route_cas(ctx);
  if (s[0] == "buckets" || (s[0] == "api" && s.size() >= 2 && s[1] == "buckets"))
    return route_buckets(ctx);

  if (s[0] == "api") {
    if (s.size() == 2 && s[1] == "whoami-v2" && get)
      return named("whoami", [this, &ctx] { return whoami(ctx); });
    if (s.size() == 3 && s[1] == "repos" && s[2] == "create" && m == "POST")
      return named("repo_create", [this, &ctx] { return create_repo(ctx); });
    if (s.size() == 3 && s[1] == "repos" && s[2] == "delete" && m == "DELETE")
      return named("repo_delete", [this, &ctx] { return delete_repo(ctx); });
    if (s.size() == 2 && s[1] == "validate-yaml" && m == "POST")
      return named("validate_yaml", [&ctx] {
        ctx.body.drain();
        return json_reply(200, json::object());
      });
    if (s.size() >= 4 && (s[1] == "datasets" || s[1] == "spaces"))
      return named("unsupported_repo_type", [] {
        return error_reply(404, "Repository not found (the test Hub only hosts model repos)", true, "RepoNotFound");
      });
    if (s.size() >= 4 && s[1] == "models") {
      const auto repo_id = s[2] + "/" + s[3];
      const std::vector<std::string> rest(s.begin() + 4, s.end());
      if (rest.empty() && get)
        return named("model_info", [this, &ctx, repo_id] { return model_info(ctx, repo_id, "HEAD"); });
      if (rest.empty())
        return named("unknown", [] { return not_found_route(); });
      const auto& verb = rest[0];
      const auto rev_len = revision_length(rest, 1);
      const auto revision = join(rest, 1, 1 + rev_len);
      if (verb == "revision" && rest.size() >= 2 && get)
        return named("model_info", [this, &ctx, repo_id, rest] { return model_info(ctx, repo_id, join(rest, 1)); });
      if (verb == "tree" && rest.size() >= 2 && get) {
        const auto path = join(rest, 1 + rev_len);
        return named("tree", [this, &ctx, repo_id, revision, path] { return list_tree(ctx, repo_id, revision, path); });
      }
      if (verb == "paths-info" && rest.size() >= 2 && m == "POST")
        return named("paths_info", [this, &ctx, repo_id, rest] { return paths_info(ctx, repo_id, join(rest, 1)); });
      if (verb == "preupload" && rest.size() >= 2 && m == "POST")
        return named("preupload", [this, &ctx, repo_id, rest] { return preupload(ctx, repo_id, join(rest, 1)); });
      if (verb == "commit" && rest.size() >= 2 && m == "POST")
        return named("commit", [this, &ctx, repo_id, rest] { return commit(ctx, repo_id, join(rest, 1)); });
      if (verb == "branch" && rest.size() >= 2 && m == "POST")
        return named("branch_create",
                     [this, &ctx, repo_id, rest] { return create_branch(ctx, repo_id, join(rest, 1)); });
      if (verb == "branch" && rest.size() >= 2 && m == "DELETE")
        return named("branch_delete",
                     [this, &ctx, repo_id, rest] { return delete_branch(ctx, repo_id, join(rest, 1)); });
      if (verb == "refs" && rest.size() == 1 && get)
        return named("refs", [this, &ctx, repo_id] { return list_refs(ctx, repo_id); });
      if (verb == "commits" && get)
        return named("commits", [this, &ctx, repo_id, rest] {
          return list_commits(ctx, repo_id, rest.size() >= 2 ? join(rest, 1) : "main");
        });
      if ((verb == "xet-write-token" || verb == "xet-read-token") && rest.size() >= 2 && get && m_xet)
        return named("xet_token",
                     [this, &ctx, repo_id, verb] { return xet_token_route(ctx, repo_id, verb == "xet-write-token"); });
      if (verb == "settings" && rest.size() == 1 && m == "PUT")
        return named("repo_settings", [this, &ctx, repo_id] { return repo_settings(ctx, repo_id); });
    }
    return named("unknown", [] { return not_found_route(); });
  }

  if (s[0] == "_lfs") {
    if (s.size() == 5 && s[1] == "upload" && m == "PUT")
      return named("lfs_upload",
                   [this, &ctx] { return lfs_upload(ctx, ctx.segments[2] + "/" + ctx.segments[3], ctx.segments[4]); });
    if (s.size() == 4 && s[1] == "multipart" && s[3] == "complete" && m == "POST")
      return named("lfs_complete", [this, &ctx] { return lfs_complete(ctx, ctx.segments[2]); });
    if (s.size() == 4 && s[1] == "multipart" && m == "PUT")
      return named("lfs_part", [this, &ctx] { return lfs_part(ctx, ctx.segments[2], ctx.segments[3]); });
    if (s.size() >= 5 && s[1] == "cdn" && get)
      return named("lfs_cdn",
                   [this, &ctx] { return lfs_cdn(ctx, ctx.segments[2] + "/" + ctx.segments[3], ctx.segments[4]); });
    return named("unknown", [] { return not_found_route(); });
  }

  if (s.size() == 6 && s[1].size() > 4 && s[1].ends_with(".git") && s[2] == "info" && s[3] == "lfs" && s[4] == "objects"
      && m == "POST") {
    const auto repo_id = s[0] + "/" + s[1].substr(0, s[1].size() - 4);
    if (s[5] == "batch")
      return named("lfs_batch", [this, &ctx, repo_id] { return lfs_batch(ctx, repo_id); });
    if (s[5] == "verify")
      return named("lfs_verify", [this, &ctx, repo_id] { return lfs_verify(ctx, repo_id); });
  }
  if (s.size() >= 5 && (s[2] == "resolve" || s[2] == "raw") && get) {
    const auto repo_id = s[0] + "/" + s[1];
    const auto rev_len = revision_length(s, 3);
    const auto revision = join(s, 3, 3 + rev_len);
    const auto path = join(s, 3 + rev_len);
    const bool raw = s[2] == "raw";
    return named(raw ? "raw" : "resolve",
                 [this, &ctx, repo_id, revision, path, raw] { return resolve(ctx, repo_id, revision, path, raw); });
  }
  return named("unknown", [] { return not_found_route(); });
}

} // namespace testhub
