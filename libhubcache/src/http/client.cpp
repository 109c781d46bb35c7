#include "hubcache/http/client.hpp"

#include "hubcache/http/ca_bundle.hpp"
#include "hubcache/http/rate_limit.hpp"

#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <limits>
#include <memory>
#include <unistd.h>

namespace hubcache::http {

using util::trim;

namespace {

std::string to_lower(std::string_view text)
{
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::optional<long> parse_long(std::string_view text)
{
  text = trim(text);
  long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

std::mutex& user_agent_mutex()
{
  static std::mutex mutex;
  return mutex;
}

std::string& user_agent_value()
{
  static std::string value = "neuron-cache";
  return value;
}

void global_init()
{
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

constexpr std::size_t k_unsunk_body_cap = 1 << 20;
constexpr long k_transfer_buffer_size = 512L * 1024;

} // namespace

std::optional<std::string> Headers::get(std::string_view name) const
{
  auto wanted = to_lower(name);
  for (const auto& [key, value] : m_entries) {
    if (to_lower(key) == wanted) {
      return value;
    }
  }
  return std::nullopt;
}

void set_user_agent(std::string agent)
{
  std::lock_guard lock(user_agent_mutex());
  user_agent_value() = std::move(agent);
}

std::string user_agent()
{
  std::lock_guard lock(user_agent_mutex());
  return user_agent_value();
}

// --- Client ------------------------------------------------------------------------

struct Client::Impl {
  CURL* handle = nullptr;

  // Per-request state reached from the callbacks.
  Response* response = nullptr;
  BodySink* sink = nullptr;
  bool sink_started = false;
  bool sink_accepted = false;
  std::size_t body_limit = 0;
  std::exception_ptr callback_error;
  std::optional<std::string_view> body_bytes; // a body in memory
  std::uint64_t body_position = 0;
  util::Fd body_fd;
  std::uint64_t body_remaining = 0;
  const std::function<void(std::uint64_t)>* upload_progress = nullptr;

  void begin(Response& answer, BodySink* body_sink, std::size_t limit)
  {
    response = &answer;
    sink = body_sink;
    sink_started = false;
    sink_accepted = false;
    body_limit = limit;
    callback_error = nullptr;
    body_bytes.reset();
    body_position = 0;
    body_fd.reset();
    body_remaining = 0;
    upload_progress = nullptr;
  }
  void end()
  {
    response = nullptr;
    sink = nullptr;
    upload_progress = nullptr;
  }
};

namespace {

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user)
{
  auto& impl = *static_cast<Client::Impl*>(user);
  std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    // A new status line (after 100 Continue): only the last response's headers count.
    impl.response->headers.clear();
    auto space = line.find(' ');
    if (space != std::string_view::npos) {
      impl.response->status = parse_long(line.substr(space + 1, 3)).value_or(0);
    }
    return size * count;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    impl.response->headers.add(std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
  }
  return size * count;
}

// A body kept in memory is sized once from its Content-Length (never past the request's
// limit): a 16 MiB xorb range arrives 64 KiB at a time, and growing the string by doubling
// copied it about twice over.
void reserve_announced_body(Client::Impl& impl)
{
  const auto length = impl.response->headers.get("content-length");
  if (!length) {
    return;
  }
  const auto announced = parse_long(*length);
  if (announced && *announced > 0) {
    impl.response->body.reserve(std::min(static_cast<std::size_t>(*announced), impl.body_limit));
  }
}

std::size_t on_write(char* data, std::size_t size, std::size_t count, void* user)
{
  auto& impl = *static_cast<Client::Impl*>(user);
  std::string_view chunk(data, size * count);
  try {
    if (!impl.sink_started) {
      impl.sink_started = true;
      impl.sink_accepted = impl.sink != nullptr && impl.sink->start(impl.response->status, impl.response->headers);
    }
    if (impl.sink_accepted) {
      impl.sink->write(chunk);
    } else if (impl.sink == nullptr) {
      if (impl.response->body.size() + chunk.size() > impl.body_limit) {
        throw RemoteError("the answer from " + url_origin(impl.response->url) + " is larger than "
                            + std::to_string(impl.body_limit) + " bytes",
                          "check the endpoint is the service it should be");
      }
      if (impl.response->body.empty()) {
        reserve_announced_body(impl);
      }
      impl.response->body.append(chunk);
    } else if (impl.response->body.size() < k_unsunk_body_cap) {
      impl.response->body.append(chunk); // an error page: its start is enough
    }
  } catch (...) {
    impl.callback_error = std::current_exception();
    return 0; // makes curl fail with CURLE_WRITE_ERROR
  }
  return size * count;
}

std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* user)
{
  auto& impl = *static_cast<Client::Impl*>(user);
  std::size_t capacity = size * count;
  if (impl.body_bytes) {
    std::size_t n = std::min<std::size_t>(capacity, impl.body_bytes->size() - impl.body_position);
    std::memcpy(buffer, impl.body_bytes->data() + impl.body_position, n);
    impl.body_position += n;
    return n;
  }
  if (impl.body_fd) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, impl.body_remaining));
    if (want == 0) {
      return 0;
    }
    for (;;) {
      ssize_t n = ::read(impl.body_fd.get(), buffer, want);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        return CURL_READFUNC_ABORT; // the file shrank or failed under us
      }
      impl.body_remaining -= static_cast<std::uint64_t>(n);
      return static_cast<std::size_t>(n);
    }
  }
  return 0;
}

int on_transfer_info(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t upload_now)
{
  auto& impl = *static_cast<Client::Impl*>(user);
  if (impl.upload_progress == nullptr || upload_now <= 0) {
    return 0;
  }
  try {
    (*impl.upload_progress)(static_cast<std::uint64_t>(upload_now));
  } catch (...) {
    impl.callback_error = std::current_exception();
    return 1; // makes curl fail with CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

// Where to connect and how patiently: TLS roots, timeouts, HTTP version, SigV4, agent.
void set_transport_options(CURL* curl, const Request& request)
{
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (const auto& ca = ca_bundle()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, ca->c_str());
  }
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  if (request.connect_timeout.count() > 0) {
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
  } else {
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
  }
  // HTTP/2 where the server offers it over TLS (one connection per handle, kept alive
  // between requests), HTTP/1.1 keep-alive otherwise.
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  if (request.aws_sigv4) {
    // libcurl computes the signature; the secret never leaves this handle. (libcurl
    // copies string options, so the provider string need not outlive this call.)
    const auto provider = "aws:amz:" + request.aws_sigv4->region + ":" + request.aws_sigv4->service;
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, provider.c_str());
    curl_easy_setopt(curl, CURLOPT_USERNAME, request.aws_sigv4->access_key_id.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, request.aws_sigv4->secret_access_key.c_str());
  }
  auto stall_timeout = request.stall_timeout.value_or(std::chrono::seconds(30));
  if (stall_timeout.count() > 0) {
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, std::max(1L, request.min_rate));
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(stall_timeout.count()));
  }
  if (request.total_timeout.count() > 0) {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, static_cast<long>(request.total_timeout.count()));
  }
  const auto agent = user_agent();
  curl_easy_setopt(curl, CURLOPT_USERAGENT, agent.c_str());
}

// The method and the request body, in memory or a slice of a file streamed through on_read.
void set_method_and_body(CURL* curl, Client::Impl& impl, const Request& request)
{
  // A POST or PUT always says how long its body is, even when empty: servers would
  // otherwise wait for a body that never comes.
  bool sends_body_anyway = request.method == "POST" || request.method == "PUT" || request.method == "PATCH";
  bool has_body =
    request.body.has_value() || request.body_view.has_value() || request.body_file.has_value() || sends_body_anyway;
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method != "GET" || has_body) {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (!has_body) {
    return;
  }
  std::uint64_t length = 0;
  if (!request.body_file) {
    impl.body_bytes = request.body ? std::string_view(*request.body) : request.body_view.value_or(std::string_view{});
    length = impl.body_bytes->size();
  } else {
    const auto& slice = *request.body_file;
    if (slice.fd >= 0) {
      impl.body_fd = util::Fd(::fcntl(slice.fd, F_DUPFD_CLOEXEC, 0));
      if (!impl.body_fd) {
        throw IoError("cannot read " + slice.path.string() + ": " + std::strerror(errno));
      }
    } else {
      impl.body_fd = util::open_regular_file(slice.path);
    }
    // Always seek: a descriptor given by the caller may be anywhere (a dup shares the offset).
    if (::lseek(impl.body_fd.get(), static_cast<off_t>(slice.offset), SEEK_SET) < 0) {
      throw IoError("cannot seek in " + slice.path.string() + ": " + std::strerror(errno));
    }
    impl.body_remaining = slice.length;
    length = slice.length;
  }
  // UPLOAD streams through the read callback with a Content-Length, whatever the method.
  curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
  curl_easy_setopt(curl, CURLOPT_READDATA, &impl);
  curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(length));
  if (length >= static_cast<std::uint64_t>(k_transfer_buffer_size)) {
    curl_easy_setopt(curl, CURLOPT_UPLOAD_BUFFERSIZE, k_transfer_buffer_size);
  }
  if (request.on_upload_progress) {
    impl.upload_progress = &request.on_upload_progress;
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_transfer_info);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &impl);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  }
}

using HeaderList = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

HeaderList header_list_for(const Request& request)
{
  HeaderList list(nullptr, &curl_slist_free_all);
  auto append = [&](const std::string& line) {
    auto* next = curl_slist_append(list.get(), line.c_str());
    if (next == nullptr) {
      throw std::bad_alloc();
    }
    static_cast<void>(list.release());
    list.reset(next);
  };
  if (!request.aws_sigv4) {
    append("Expect:"); // no 100-continue round trip
  }
  // (libcurl 7.88 would sign the empty `Expect:` that removes the header, a header never sent.)
  for (const auto& [name, value] : request.headers) {
    append(name + ": " + value);
  }
  return list;
}

[[noreturn]] void throw_transport_error(CURLcode code, const std::string& url)
{
  bool permanent = code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY
                   || code == CURLE_URL_MALFORMAT || code == CURLE_UNSUPPORTED_PROTOCOL
                   || code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE
                   || code == CURLE_SSL_CERTPROBLEM;
  throw TransportError("network error talking to " + url_origin(url) + ": " + curl_easy_strerror(code),
                       "check the network and HF_ENDPOINT, then retry", static_cast<int>(code), !permanent);
}

} // namespace

Client::Client() : m_impl(std::make_unique<Impl>())
{
  global_init();
  m_impl->handle = curl_easy_init();
  if (m_impl->handle == nullptr) {
    throw RemoteError("cannot initialise libcurl");
  }
}

Client::~Client()
{
  if (m_impl && m_impl->handle != nullptr) {
    curl_easy_cleanup(m_impl->handle);
  }
}

Response Client::perform(const Request& request, BodySink* sink)
{
  auto& impl = *m_impl;
  CURL* curl = impl.handle;
  // Held while the Hub says this request's quota window is spent (rate_limit.hpp).
  RateLimitTicket quota(request.url);
  // reset() keeps the connection cache, so the next request reuses the connection.
  curl_easy_reset(curl);

  Response response;
  response.url = request.url;
  impl.begin(response, sink, request.body_limit);
  // The file is closed when the request ends, however it ends.
  struct CloseBody {
    util::Fd& fd;
    ~CloseBody() { fd.reset(); }
  } close_body{impl.body_fd};

  set_transport_options(curl, request);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &impl);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &impl);
  set_method_and_body(curl, impl, request);
  // Bigger buffers than libcurl's 16 KiB / 64 KiB for what may be large (a body of that
  // size, a download streamed to a sink or announced as large): fewer callbacks and
  // syscalls on multi-GB transfers. libcurl allocates them for every request, and the many
  // small ones (API calls, a small LFS object) keep its defaults.
  if (sink != nullptr || request.expected_body >= static_cast<std::size_t>(k_transfer_buffer_size)) {
    curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, k_transfer_buffer_size);
  }
  const auto headers = header_list_for(request);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());

  CURLcode code = curl_easy_perform(curl);
  quota.settle(response.headers);
  impl.end();
  if (impl.callback_error) {
    std::rethrow_exception(impl.callback_error);
  }
  if (code != CURLE_OK) {
    throw_transport_error(code, request.url);
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status != 0) {
    response.status = status;
  }
  // An empty 2xx body never reached the write callback: the sink must still be started.
  if (sink != nullptr && !impl.sink_started && request.method != "HEAD") {
    impl.sink_started = true;
    if (sink->start(response.status, response.headers)) {
      sink->write({});
    }
  }
  return response;
}

ClientPool::Lease::~Lease()
{
  if (m_client) {
    std::lock_guard lock(m_pool->m_mutex);
    m_pool->m_idle.push_back(std::move(m_client));
  }
}

ClientPool::Lease ClientPool::acquire()
{
  {
    std::lock_guard lock(m_mutex);
    if (!m_idle.empty()) {
      auto client = std::move(m_idle.back());
      m_idle.pop_back();
      return Lease(*this, std::move(client));
    }
  }
  return Lease(*this, std::make_unique<Client>());
}

// --- retry policy ------------------------------------------------------------------

bool is_retryable_status(long status) noexcept
{
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

std::optional<long> parse_retry_after(std::string_view value)
{
  return parse_long(value);
}

std::optional<long> parse_ratelimit_reset(std::string_view value)
{
  std::optional<long> remaining;
  std::optional<long> reset;
  std::size_t start = 0;
  while (start <= value.size()) {
    auto end = value.find_first_of(";,", start);
    if (end == std::string_view::npos) {
      end = value.size();
    }
    auto item = trim(value.substr(start, end - start));
    if (item.starts_with("r=")) {
      remaining = parse_long(item.substr(2));
    } else if (item.starts_with("t=")) {
      reset = parse_long(item.substr(2));
    }
    start = end + 1;
  }
  if (remaining && *remaining == 0 && reset) {
    return reset;
  }
  return std::nullopt;
}

RetryPolicy RetryPolicy::from_environment(const util::Environment& env)
{
  RetryPolicy policy;
  if (auto text = env.get_non_empty("NEURON_CACHE_HTTP_BACKOFF_BASE_MS")) {
    if (auto ms = parse_long(*text)) {
      // A test knob: bounded so that no value can overflow a delay or make it negative.
      constexpr long k_max_base_ms = 60'000;
      double scale = static_cast<double>(std::clamp(*ms, 0L, k_max_base_ms)) / 1000.0;
      auto scaled = [scale](std::chrono::milliseconds value) {
        return std::chrono::milliseconds(static_cast<long long>(static_cast<double>(value.count()) * scale));
      };
      policy.base = scaled(policy.base);
      policy.cap = scaled(policy.cap);
      policy.server_wait_cap = scaled(policy.server_wait_cap);
    }
  }
  return policy;
}

std::optional<std::chrono::milliseconds> RetryPolicy::delay_after(int attempt, const Response* response) const
{
  if (attempt >= max_attempts) {
    return std::nullopt;
  }
  if (response != nullptr && !is_retryable_status(response->status)) {
    return std::nullopt;
  }
  // One "second" of the server's wishes lasts `base` (1 s unless tests shorten it). The
  // server's number can be anything up to LONG_MAX: compare before multiplying.
  auto seconds = [this](long n) -> std::chrono::milliseconds {
    if (base.count() <= 0) {
      return std::chrono::milliseconds(0);
    }
    if (n > server_wait_cap / base) {
      return server_wait_cap;
    }
    return base * n;
  };
  if (response != nullptr && response->status == 429) {
    if (auto limit = response->headers.get("ratelimit")) {
      if (auto reset = parse_ratelimit_reset(*limit)) {
        return seconds(*reset < std::numeric_limits<long>::max() ? *reset + 1 : *reset);
      }
    }
  }
  if (response != nullptr) {
    if (auto after = response->headers.get("retry-after")) {
      if (auto value = parse_retry_after(*after)) {
        return seconds(*value);
      }
    }
  }
  auto delay = base;
  for (int i = 1; i < attempt && delay < cap; ++i) {
    delay *= 2;
  }
  return std::min(delay, cap);
}

// --- URLs and headers --------------------------------------------------------------

std::optional<std::string> parse_link_next(std::string_view value)
{
  return parse_link(value, "next");
}

std::optional<std::string> parse_link(std::string_view value, std::string_view relation)
{
  std::size_t position = 0;
  while (position < value.size()) {
    auto open = value.find('<', position);
    if (open == std::string_view::npos) {
      return std::nullopt;
    }
    auto close = value.find('>', open);
    if (close == std::string_view::npos) {
      return std::nullopt;
    }
    auto target = value.substr(open + 1, close - open - 1);
    // Parameters run until the next link value, which starts with '<'.
    auto next_open = value.find('<', close);
    auto params = value.substr(close + 1, (next_open == std::string_view::npos ? value.size() : next_open) - close - 1);
    std::size_t start = 0;
    while (start < params.size()) {
      auto end = params.find_first_of(";,", start);
      if (end == std::string_view::npos) {
        end = params.size();
      }
      auto param = trim(params.substr(start, end - start));
      if (to_lower(param.substr(0, 4)) == "rel=") {
        auto rel = trim(param.substr(4));
        if (rel.size() >= 2 && rel.front() == '"' && rel.back() == '"') {
          rel = rel.substr(1, rel.size() - 2);
        }
        // rel may hold several space-separated relation types.
        std::size_t word = 0;
        while (word < rel.size()) {
          auto space = rel.find(' ', word);
          if (space == std::string_view::npos) {
            space = rel.size();
          }
          if (to_lower(rel.substr(word, space - word)) == relation) {
            return std::string(target);
          }
          word = space + 1;
        }
      }
      start = end + 1;
    }
    if (next_open == std::string_view::npos) {
      break;
    }
    position = next_open;
  }
  return std::nullopt;
}

std::string url_encode(std::string_view text, bool keep_slash)
{
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(hex[u >> 4]);
      out.push_back(hex[u & 0xF]);
    }
  }
  return out;
}

std::string url_origin(std::string_view url)
{
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return {};
  }
  auto path_start = url.find_first_of("/?#", scheme_end + 3);
  auto origin = to_lower(url.substr(0, path_start == std::string_view::npos ? url.size() : path_start));
  // Credentials in a URL are never part of an origin we print or compare.
  auto at = origin.find('@', scheme_end + 3);
  if (at != std::string::npos) {
    origin.erase(scheme_end + 3, at - scheme_end - 2);
  }
  return origin;
}

std::string resolve_location(std::string_view base, std::string_view location)
{
  if (location.find("://") != std::string_view::npos) {
    return std::string(location);
  }
  if (location.starts_with("//")) {
    auto scheme_end = base.find("://");
    return std::string(base.substr(0, scheme_end + 1)) + std::string(location);
  }
  auto origin = url_origin(base);
  if (location.starts_with("/")) {
    return origin + std::string(location);
  }
  // Relative to the directory of the base path.
  auto path_start = base.find('/', base.find("://") + 3);
  std::string_view path = path_start == std::string_view::npos ? "/" : base.substr(path_start);
  path = path.substr(0, path.find_first_of("?#"));
  auto slash = path.rfind('/');
  return origin + std::string(path.substr(0, slash + 1)) + std::string(location);
}

} // namespace hubcache::http
