#include "hubcache/hub/api.hpp"

#include "hubcache/util/fs.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace hubcache::hub {

using json = nlohmann::json;
using http::trim;
namespace stdfs = std::filesystem;

namespace {


std::optional<std::string> clean_token(std::string_view text)
{
  std::string token;
  for (char c : text) {
    if (c != '\r' && c != '\n') {
      token.push_back(c);
    }
  }
  auto trimmed = std::string(trim(token));
  if (trimmed.empty()) {
    return std::nullopt;
  }
  return trimmed;
}

std::optional<std::uint64_t> parse_u64(std::string_view text)
{
  text = trim(text);
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

// An etag as the clients normalise it: no W/ prefix, no quotes, lowercase.
std::string normalize_etag(std::string_view etag)
{
  etag = trim(etag);
  if (etag.starts_with("W/")) {
    etag.remove_prefix(2);
  }
  std::string out;
  for (char c : etag) {
    if (c != '"') {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

bool is_hex(std::string_view text)
{
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

// Server text made safe for a one-line message: no control characters, bounded, and
// never the token even if the server echoed it.
std::string sanitize(std::string text, const std::optional<std::string>& token)
{
  if (token && !token->empty()) {
    for (auto at = text.find(*token); at != std::string::npos; at = text.find(*token, at)) {
      text.replace(at, token->size(), "hf_***");
    }
  }
  for (auto& c : text) {
    if (std::iscntrl(static_cast<unsigned char>(c)) != 0) {
      c = ' ';
    }
  }
  auto trimmed = std::string(trim(text));
  if (trimmed.size() > 300) {
    trimmed = trimmed.substr(0, 300) + "...";
  }
  return trimmed;
}

std::string server_message(const http::Response& response)
{
  if (auto header = response.headers.get("x-error-message")) {
    return *header;
  }
  auto parsed = json::parse(response.body, nullptr, false);
  if (parsed.is_object()) {
    for (const char* key : {"error", "message"}) {
      if (!parsed.contains(key)) {
        continue;
      }
      const auto& value = parsed[key];
      if (value.is_string()) {
        return value.get<std::string>();
      }
      if (value.is_array()) {
        std::string joined;
        for (const auto& item : value) {
          joined += (joined.empty() ? "" : "; ") + (item.is_string() ? item.get<std::string>() : item.dump());
        }
        return joined;
      }
    }
    return {};
  }
  auto body = std::string_view(response.body);
  auto newline = body.find('\n');
  return std::string(body.substr(0, std::min<std::size_t>(newline, 200)));
}

void sleep_for(std::chrono::milliseconds delay)
{
  if (delay.count() > 0) {
    std::this_thread::sleep_for(delay);
  }
}

json parse_json_answer(const http::Response& response, std::string_view action)
{
  auto parsed = json::parse(response.body, nullptr, false);
  if (parsed.is_discarded()) {
    auto request_id = response.request_id();
    throw RemoteError("the Hub sent an invalid JSON answer to " + std::string(action) + " (HTTP "
                        + std::to_string(response.status) + ")"
                        + (request_id ? " (request id: " + sanitize(*request_id, std::nullopt) + ")" : ""),
                      "retry later; if it persists, check HF_ENDPOINT points at a Hugging Face Hub");
  }
  return parsed;
}

[[noreturn]] void throw_bad_shape(std::string_view action, const std::exception& error)
{
  throw RemoteError("the Hub sent an unexpected answer to " + std::string(action) + ": " + error.what(),
                    "retry later; if it persists, check HF_ENDPOINT points at a Hugging Face Hub");
}

HubTreeEntry parse_tree_entry(const json& item)
{
  HubTreeEntry entry;
  entry.type = item.at("type").get<std::string>();
  entry.path = item.at("path").get<std::string>();
  entry.size = item.value("size", std::uint64_t{0});
  entry.oid = item.value("oid", std::string());
  if (item.contains("lfs") && item["lfs"].is_object()) {
    entry.lfs_oid = item["lfs"].at("oid").get<std::string>();
  }
  return entry;
}

std::vector<std::pair<std::string, std::string>> lfs_headers()
{
  return {{"Accept", "application/vnd.git-lfs+json"}, {"Content-Type", "application/vnd.git-lfs+json"}};
}

} // namespace

// --- environment -------------------------------------------------------------------

std::string hub_endpoint(const util::Environment& env)
{
  auto endpoint = env.get_non_empty("HF_ENDPOINT").value_or(std::string(k_default_hub_endpoint));
  while (!endpoint.empty() && endpoint.back() == '/') {
    endpoint.pop_back();
  }
  return endpoint;
}

bool hub_offline(const util::Environment& env)
{
  return env.get_flag("HF_HUB_OFFLINE") || env.get_flag("TRANSFORMERS_OFFLINE");
}

std::optional<std::string> resolve_hub_token(const util::Environment& env, const std::optional<std::string>& explicit_token)
{
  if (explicit_token) {
    if (auto token = clean_token(*explicit_token)) {
      return token;
    }
  }
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    if (auto value = env.get(name)) {
      if (auto token = clean_token(*value)) {
        return token;
      }
    }
  }
  stdfs::path token_file = util::hf_home(env) / "token";
  if (auto path = env.get_non_empty("HF_TOKEN_PATH")) {
    token_file = util::expand_user(*path, env);
  }
  try {
    if (auto content = util::read_file_if_exists(token_file)) {
      return clean_token(*content);
    }
  } catch (const Error&) {
    // An unreadable token file means no token, as in huggingface_hub.
  }
  return std::nullopt;
}

HubConfig HubConfig::from_environment(const util::Environment& env, const std::optional<std::string>& explicit_token)
{
  HubConfig config;
  config.endpoint = hub_endpoint(env);
  config.token = resolve_hub_token(env, explicit_token);
  config.offline = hub_offline(env);
  config.retry = http::RetryPolicy::from_environment(env);
  config.conflict_base = config.retry.base;
  if (auto timeout = env.get_non_empty("HF_HUB_DOWNLOAD_TIMEOUT")) {
    if (auto seconds = parse_u64(*timeout)) {
      config.stall_timeout = std::chrono::seconds(std::max<std::uint64_t>(1, *seconds));
    }
  }
  return config;
}

// --- errors ------------------------------------------------------------------------

void throw_hub_error(const http::Response& response, const HubErrorContext& context,
                     const std::optional<std::string>& token)
{
  auto code = response.headers.get("x-error-code").value_or("");
  auto message = sanitize(server_message(response), token);
  std::string detail = "HTTP " + std::to_string(response.status);
  if (!code.empty()) {
    detail += " " + sanitize(code, token);
  }
  if (!message.empty()) {
    detail += ": " + message;
  }
  if (auto request_id = response.request_id()) {
    detail += " (request id: " + sanitize(*request_id, token) + ")";
  }
  const std::string prefix = "cannot " + context.action + ": ";
  const std::string& repo = context.repo_id;
  const std::string login_hint = "set HF_TOKEN or run hf auth login";
  auto not_found_hint = [&] {
    if (context.token_sent) {
      return "check the name and that your token can read it, or create it with: neuron-cache create " + repo;
    }
    return "if it is private, " + login_hint + "; otherwise create it with: neuron-cache create " + repo;
  };

  if (code == "RepoNotFound") {
    throw RepoNotFound(prefix + "repo " + repo + " does not exist or is not accessible (" + detail + ")",
                       not_found_hint());
  }
  if (code == "RevisionNotFound") {
    throw RevisionNotFound(prefix + "revision not found in " + repo + " (" + detail + ")",
                           "check the revision name");
  }
  if (code == "EntryNotFound") {
    throw EntryNotFound(prefix + (context.path.empty() ? std::string("entry") : "'" + context.path + "'")
                          + " not found in " + repo + " (" + detail + ")",
                        "check the path; list the repo's files to see what it holds");
  }
  if (code == "GatedRepo") {
    throw AuthError(prefix + repo + " is gated (" + detail + ")", "request access to it on the Hub website");
  }
  switch (response.status) {
  case 401:
    if (!context.token_sent) {
      throw AuthError(prefix + "the Hub requires a token (" + detail + ")", login_hint);
    }
    if (!repo.empty() && !context.write) {
      throw RepoNotFound(prefix + "repo " + repo + " does not exist or is not accessible with your token (" + detail
                           + ")",
                         not_found_hint());
    }
    throw AuthError(prefix + "the Hub rejected your token (" + detail + ")",
                    "check the token: " + login_hint);
  case 403:
    if (context.write) {
      throw AuthError(prefix + "your token has no write access" + (repo.empty() ? "" : " to " + repo) + " (" + detail
                        + ")",
                      context.token_sent ? "use a token with write access: " + login_hint : login_hint);
    }
    throw AuthError(prefix + "access denied (" + detail + ")",
                    context.token_sent ? "use a token that can read " + repo : login_hint);
  case 404:
    if (!repo.empty()) {
      throw RepoNotFound(prefix + "repo " + repo + " does not exist or is not accessible (" + detail + ")",
                         not_found_hint());
    }
    break;
  case 409:
  case 412:
    throw ConflictError(prefix + "the repo changed meanwhile (" + detail + ")", "re-run the command");
  case 429:
    throw RemoteError(prefix + "the Hub is rate limiting this client (" + detail + ")", "wait a few minutes and retry");
  default:
    if (response.status >= 500) {
      throw RemoteError(prefix + "the Hub failed (" + detail + ")", "retry later");
    }
    break;
  }
  throw RemoteError(prefix + "unexpected answer from the Hub (" + detail + ")",
                    "retry later; if it persists, check HF_ENDPOINT");
}

// --- protocol pieces ---------------------------------------------------------------

std::string base64_encode(std::string_view bytes)
{
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    auto n = (static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16)
             | (static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8)
             | static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 2]));
    out.push_back(alphabet[(n >> 18) & 63]);
    out.push_back(alphabet[(n >> 12) & 63]);
    out.push_back(alphabet[(n >> 6) & 63]);
    out.push_back(alphabet[n & 63]);
  }
  if (auto rest = bytes.size() - i; rest > 0) {
    unsigned n = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) {
      n |= static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    }
    out.push_back(alphabet[(n >> 18) & 63]);
    out.push_back(alphabet[(n >> 12) & 63]);
    out.push_back(rest == 2 ? alphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string lfs_pointer_text(std::string_view sha256, std::uint64_t size)
{
  return "version https://git-lfs.github.com/spec/v1\noid sha256:" + std::string(sha256) + "\nsize "
         + std::to_string(size) + "\n";
}

std::vector<std::pair<std::size_t, std::size_t>> batch_ranges(std::size_t count, std::size_t batch)
{
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t begin = 0; begin < count; begin += batch) {
    ranges.emplace_back(begin, std::min(count, begin + batch));
  }
  return ranges;
}

std::string commit_header_line(std::string_view summary, std::string_view description,
                               const std::optional<std::string>& parent_commit)
{
  json value = {{"summary", summary}, {"description", description}};
  if (parent_commit) {
    value["parentCommit"] = *parent_commit;
  }
  return json{{"key", "header"}, {"value", value}}.dump() + "\n";
}

std::string commit_lfs_file_line(std::string_view path, std::string_view sha256, std::uint64_t size)
{
  return json{{"key", "lfsFile"}, {"value", {{"path", path}, {"algo", "sha256"}, {"oid", sha256}, {"size", size}}}}
           .dump()
         + "\n";
}

std::string commit_deletion_line(std::string_view path, bool is_folder)
{
  if (is_folder) {
    return json{{"key", "deletedFolder"}, {"value", {{"path", std::string(path) + "/"}}}}.dump() + "\n";
  }
  return json{{"key", "deletedFile"}, {"value", {{"path", path}}}}.dump() + "\n";
}

std::string commit_file_line_prefix(std::string_view path)
{
  return R"({"key":"file","value":{"path":)" + json(path).dump() + R"(,"encoding":"base64","content":")";
}

std::string preupload_request_body(const std::vector<PreuploadFile>& files, std::size_t begin, std::size_t end)
{
  json list = json::array();
  for (std::size_t i = begin; i < end; ++i) {
    list.push_back({{"path", files[i].path}, {"sample", base64_encode(files[i].sample)}, {"size", files[i].size}});
  }
  return json{{"files", list}}.dump();
}

PreuploadResult parse_preupload_response(std::string_view body)
{
  auto parsed = json::parse(body);
  PreuploadResult result;
  if (parsed.contains("commitOid") && parsed["commitOid"].is_string()) {
    result.commit_oid = parsed["commitOid"].get<std::string>();
  }
  for (const auto& item : parsed.at("files")) {
    PreuploadAnswer answer;
    answer.path = item.at("path").get<std::string>();
    auto mode = item.at("uploadMode").get<std::string>();
    if (mode != "lfs" && mode != "regular") {
      throw RemoteError("the Hub answered the preupload with an unknown upload mode '" + mode + "'",
                        "retry later; if it persists, this client may be too old for the Hub");
    }
    answer.lfs = mode == "lfs";
    answer.should_ignore = item.value("shouldIgnore", false);
    if (item.contains("oid") && item["oid"].is_string()) {
      answer.remote_oid = item["oid"].get<std::string>();
    }
    result.files.push_back(std::move(answer));
  }
  return result;
}

std::string lfs_batch_request_body(const std::vector<LfsObjectRef>& objects, std::size_t begin, std::size_t end,
                                   std::string_view branch)
{
  json list = json::array();
  for (std::size_t i = begin; i < end; ++i) {
    list.push_back({{"oid", objects[i].oid}, {"size", objects[i].size}});
  }
  return json{{"operation", "upload"},
              {"transfers", {"basic", "multipart"}},
              {"hash_algo", "sha256"},
              {"ref", {{"name", branch}}},
              {"objects", list}}
    .dump();
}

namespace {

LfsAction parse_action(const json& value)
{
  LfsAction action;
  action.href = value.at("href").get<std::string>();
  if (value.contains("header") && value["header"].is_object()) {
    for (const auto& [key, item] : value["header"].items()) {
      action.header.emplace_back(key, item.is_string() ? item.get<std::string>() : item.dump());
    }
  }
  return action;
}

} // namespace

std::vector<LfsBatchObject> parse_lfs_batch_response(std::string_view body)
{
  auto parsed = json::parse(body);
  std::vector<LfsBatchObject> objects;
  for (const auto& item : parsed.at("objects")) {
    LfsBatchObject object;
    object.oid = item.at("oid").get<std::string>();
    object.size = item.at("size").get<std::uint64_t>();
    if (item.contains("error")) {
      const auto& error = item["error"];
      throw RemoteError("the Hub refused LFS object " + object.oid + ": "
                          + std::to_string(error.value("code", 0)) + " " + error.value("message", std::string()),
                        "retry later; if it persists, the file may be too large for the Hub");
    }
    if (item.contains("actions") && item["actions"].is_object()) {
      const auto& actions = item["actions"];
      if (actions.contains("upload")) {
        object.upload = parse_action(actions["upload"]);
      }
      if (actions.contains("verify")) {
        object.verify = parse_action(actions["verify"]);
      }
    }
    objects.push_back(std::move(object));
  }
  return objects;
}

std::optional<MultipartPlan> multipart_plan(const LfsAction& upload, std::uint64_t size)
{
  std::optional<std::uint64_t> chunk_size;
  std::vector<std::pair<std::uint64_t, std::string>> parts;
  for (const auto& [key, value] : upload.header) {
    if (key == "chunk_size") {
      chunk_size = parse_u64(value);
      if (!chunk_size || *chunk_size == 0) {
        throw RemoteError("the Hub sent an invalid multipart chunk_size '" + value + "'", "retry later");
      }
    } else if (!key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) { return std::isdigit(c); })) {
      parts.emplace_back(*parse_u64(key), value);
    }
  }
  if (!chunk_size) {
    return std::nullopt;
  }
  std::sort(parts.begin(), parts.end());
  std::uint64_t expected = (size + *chunk_size - 1) / *chunk_size;
  if (parts.size() != expected) {
    throw RemoteError("the Hub offered " + std::to_string(parts.size()) + " multipart URLs for a " + std::to_string(size)
                        + "-byte object in " + std::to_string(*chunk_size) + "-byte parts (expected "
                        + std::to_string(expected) + ")",
                      "retry later");
  }
  MultipartPlan plan;
  plan.chunk_size = *chunk_size;
  for (auto& [number, url] : parts) {
    plan.part_urls.push_back(std::move(url));
  }
  return plan;
}

util::FileDigests StringDownloadTarget::digests()
{
  util::FileDigests digests;
  digests.size = content.size();
  digests.sha256 = util::hex_digest(util::HashAlgorithm::sha256, content);
  digests.git_blob_sha1 = util::git_blob_sha1(content);
  return digests;
}

// --- parallel work -----------------------------------------------------------------

void run_parallel(std::size_t count, std::size_t workers, const std::function<void(std::size_t)>& task)
{
  workers = std::max<std::size_t>(1, std::min(workers, count));
  if (workers <= 1) {
    for (std::size_t i = 0; i < count; ++i) {
      task(i);
    }
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (;;) {
      auto index = next.fetch_add(1);
      if (index >= count || failed.load()) {
        return;
      }
      try {
        task(index);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!first_error) {
          first_error = std::current_exception();
        }
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers);
  for (std::size_t i = 0; i < workers; ++i) {
    threads.emplace_back(worker);
  }
  for (auto& thread : threads) {
    thread.join();
  }
  if (first_error) {
    std::rethrow_exception(first_error);
  }
}

// --- HubApi ------------------------------------------------------------------------

HubApi::HubApi(HubConfig config) : m_config(std::move(config)) {}

void HubApi::require_online() const
{
  if (m_config.offline) {
    throw HubOfflineError("HF_HUB_OFFLINE is set, so the Hub (" + m_config.endpoint + ") cannot be reached",
                          "unset HF_HUB_OFFLINE to use a Hub cache repo, or use a directory cache repo");
  }
}

std::vector<std::pair<std::string, std::string>> HubApi::auth_headers() const
{
  if (!m_config.token) {
    return {};
  }
  return {{"Authorization", "Bearer " + *m_config.token}};
}

std::string HubApi::api_url(std::string_view repo_id, std::string_view route) const
{
  return m_config.endpoint + "/api/models/" + http::url_encode(repo_id, true) + "/" + std::string(route);
}

HubErrorContext HubApi::context(std::string action, std::string_view repo_id, bool write) const
{
  return HubErrorContext{std::move(action), std::string(repo_id), {}, write, has_token()};
}

http::Response HubApi::send(http::Request request, bool retry)
{
  require_online();
  if (!request.stall_timeout) {
    request.stall_timeout = m_config.stall_timeout;
  }
  auto client = m_clients.acquire();
  for (int attempt = 1;; ++attempt) {
    try {
      auto response = client->perform(request);
      if (!retry) {
        return response;
      }
      auto delay = m_config.retry.delay_after(attempt, &response);
      if (!delay) {
        return response;
      }
      sleep_for(*delay);
    } catch (const http::TransportError& error) {
      auto delay = retry && error.retryable() ? m_config.retry.delay_after(attempt, nullptr) : std::nullopt;
      if (!delay) {
        throw;
      }
      sleep_for(*delay);
    }
  }
}

http::Response HubApi::call(http::Request request, const HubErrorContext& error_context, bool retry)
{
  auto response = send(std::move(request), retry);
  if (!response.ok()) {
    throw_hub_error(response, error_context, m_config.token);
  }
  return response;
}

WhoAmI HubApi::whoami()
{
  require_online();
  if (!m_config.token) {
    throw AuthError("this needs a Hugging Face token, and none is set", "set HF_TOKEN or run hf auth login");
  }
  http::Request request;
  request.url = m_config.endpoint + "/api/whoami-v2";
  request.headers = auth_headers();
  auto error_context = context("check your Hugging Face token");
  auto response = send(request);
  if (response.status == 401) {
    throw AuthError("the Hub rejected your token (HTTP 401"
                      + (response.request_id() ? ", request id: " + sanitize(*response.request_id(), m_config.token)
                                               : std::string())
                      + ")",
                    "check the token: set HF_TOKEN or run hf auth login");
  }
  if (!response.ok()) {
    throw_hub_error(response, error_context, m_config.token);
  }
  auto parsed = parse_json_answer(response, "whoami");
  try {
    WhoAmI who;
    who.name = parsed.at("name").get<std::string>();
    who.type = parsed.value("type", std::string("user"));
    if (parsed.contains("orgs") && parsed["orgs"].is_array()) {
      for (const auto& org : parsed["orgs"]) {
        who.orgs.push_back(org.at("name").get<std::string>());
      }
    }
    if (parsed.contains("auth") && parsed["auth"].is_object() && parsed["auth"].contains("accessToken")) {
      who.token_role = parsed["auth"]["accessToken"].value("role", std::string());
    }
    return who;
  } catch (const json::exception& error) {
    throw_bad_shape("whoami", error);
  }
}

std::string HubApi::create_repo(std::string_view repo_id, bool is_private, bool exist_ok)
{
  require_online();
  auto slash = repo_id.find('/');
  if (slash == std::string_view::npos) {
    throw InvalidArgument("cannot create Hub repo '" + std::string(repo_id) + "' without a namespace");
  }
  auto error_context = context("create the repo " + std::string(repo_id), repo_id, true);
  if (!m_config.token) {
    throw AuthError("cannot create the repo " + std::string(repo_id) + ": no Hugging Face token is set",
                    "set HF_TOKEN or run hf auth login");
  }
  http::Request request;
  request.method = "POST";
  request.url = m_config.endpoint + "/api/repos/create";
  request.headers = auth_headers();
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = json{{"name", repo_id.substr(slash + 1)},
                      {"organization", repo_id.substr(0, slash)},
                      {"type", "model"},
                      {"private", is_private}}
                   .dump();
  // A lost answer may hide a created repo: only server-side refusals are retried.
  http::Response response;
  for (int attempt = 1;; ++attempt) {
    response = send(request, false);
    auto delay = m_config.retry.delay_after(attempt, &response);
    if (!delay) {
      break;
    }
    sleep_for(*delay);
  }
  if (response.status == 409) {
    if (exist_ok) {
      return std::string(repo_id);
    }
    throw RepoAlreadyExists("the Hub repo " + std::string(repo_id) + " already exists",
                            "use it with: neuron-cache set " + std::string(repo_id)
                              + ", or pass --exist-ok to create");
  }
  if (exist_ok && (response.status == 401 || response.status == 403) && repo_info(repo_id)) {
    return std::string(repo_id);
  }
  if (!response.ok()) {
    throw_hub_error(response, error_context, m_config.token);
  }
  auto parsed = parse_json_answer(response, "create repo");
  if (parsed.is_object() && parsed.contains("name") && parsed["name"].is_string()) {
    auto name = parsed["name"].get<std::string>();
    if (name.find('/') != std::string::npos) {
      return name;
    }
  }
  return std::string(repo_id);
}

std::optional<HubRepoInfo> HubApi::repo_info(std::string_view repo_id)
{
  http::Request request;
  request.url = api_url(repo_id, "");
  request.url.pop_back(); // no trailing '/'
  request.headers = auth_headers();
  auto response = send(request);
  if (response.status == 404 || response.status == 401) {
    auto code = response.headers.get("x-error-code");
    if (!code || *code == "RepoNotFound") {
      return std::nullopt;
    }
  }
  if (!response.ok()) {
    throw_hub_error(response, context("read the repo " + std::string(repo_id), repo_id), m_config.token);
  }
  auto parsed = parse_json_answer(response, "repo info");
  try {
    HubRepoInfo info;
    info.id = parsed.at("id").get<std::string>();
    if (parsed.contains("sha") && parsed["sha"].is_string()) {
      info.sha = parsed["sha"].get<std::string>();
    }
    info.is_private = parsed.value("private", false);
    return info;
  } catch (const json::exception& error) {
    throw_bad_shape("repo info", error);
  }
}

std::vector<HubTreeEntry> HubApi::list_tree(std::string_view repo_id, std::string_view revision,
                                            std::string_view path, bool recursive)
{
  std::string route = "tree/" + http::url_encode(revision);
  if (!path.empty()) {
    route += "/" + http::url_encode(path, true);
  }
  std::string url = api_url(repo_id, route) + "?recursive=" + (recursive ? "true" : "false") + "&expand=false";
  auto error_context = context("list the files of " + std::string(repo_id), repo_id);
  error_context.path = std::string(path);
  auto origin = http::url_origin(m_config.endpoint);
  std::vector<HubTreeEntry> entries;
  std::set<std::string> seen_pages;
  while (!url.empty()) {
    if (!seen_pages.insert(url).second) {
      throw RemoteError("the Hub's file listing of " + std::string(repo_id) + " loops back to a page it already sent",
                        "retry later");
    }
    http::Request request;
    request.url = url;
    if (http::url_origin(url) == origin) {
      request.headers = auth_headers();
    }
    auto response = call(request, error_context);
    auto parsed = parse_json_answer(response, "list files");
    if (!parsed.is_array()) {
      throw RemoteError("the Hub's file listing of " + std::string(repo_id) + " is not a JSON array", "retry later");
    }
    try {
      for (const auto& item : parsed) {
        entries.push_back(parse_tree_entry(item));
      }
    } catch (const json::exception& error) {
      throw_bad_shape("list files", error);
    }
    url.clear();
    if (auto link = response.headers.get("link")) {
      if (auto next = http::parse_link_next(*link)) {
        url = http::resolve_location(response.url, *next);
      }
    }
  }
  return entries;
}

std::vector<HubTreeEntry> HubApi::paths_info(std::string_view repo_id, std::string_view revision,
                                             const std::vector<std::string>& paths)
{
  std::vector<HubTreeEntry> entries;
  auto error_context = context("read file information in " + std::string(repo_id), repo_id);
  for (auto [begin, end] : batch_ranges(paths.size(), 500)) {
    std::string form;
    for (auto i = begin; i < end; ++i) {
      form += "paths=" + http::url_encode(paths[i]) + "&";
    }
    form += "expand=false";
    http::Request request;
    request.method = "POST";
    request.url = api_url(repo_id, "paths-info/" + http::url_encode(revision));
    request.headers = auth_headers();
    request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    request.body = std::move(form);
    auto response = call(request, error_context);
    auto parsed = parse_json_answer(response, "paths-info");
    try {
      for (const auto& item : parsed) {
        entries.push_back(parse_tree_entry(item));
      }
    } catch (const json::exception& error) {
      throw_bad_shape("paths-info", error);
    }
  }
  return entries;
}

PreuploadResult HubApi::preupload(std::string_view repo_id, std::string_view revision,
                                  const std::vector<PreuploadFile>& files)
{
  PreuploadResult result;
  auto error_context = context("prepare the upload to " + std::string(repo_id), repo_id, true);
  for (auto [begin, end] : batch_ranges(files.size(), k_preupload_batch_size)) {
    http::Request request;
    request.method = "POST";
    request.url = api_url(repo_id, "preupload/" + http::url_encode(revision));
    request.headers = auth_headers();
    request.headers.emplace_back("Content-Type", "application/json");
    request.body = preupload_request_body(files, begin, end);
    auto response = call(request, error_context);
    parse_json_answer(response, "preupload");
    try {
      auto batch = parse_preupload_response(response.body);
      if (!result.commit_oid) {
        result.commit_oid = batch.commit_oid;
      }
      std::move(batch.files.begin(), batch.files.end(), std::back_inserter(result.files));
    } catch (const json::exception& error) {
      throw_bad_shape("preupload", error);
    }
  }
  return result;
}

std::vector<LfsBatchObject> HubApi::lfs_batch(std::string_view repo_id, std::string_view branch,
                                              const std::vector<LfsObjectRef>& objects)
{
  std::vector<LfsBatchObject> answers;
  auto error_context = context("upload large files to " + std::string(repo_id), repo_id, true);
  for (auto [begin, end] : batch_ranges(objects.size(), k_lfs_batch_size)) {
    http::Request request;
    request.method = "POST";
    request.url = m_config.endpoint + "/" + http::url_encode(repo_id, true) + ".git/info/lfs/objects/batch";
    request.headers = auth_headers();
    for (auto& header : lfs_headers()) {
      request.headers.push_back(std::move(header));
    }
    request.body = lfs_batch_request_body(objects, begin, end, branch);
    auto response = call(request, error_context);
    parse_json_answer(response, "LFS batch");
    try {
      auto batch = parse_lfs_batch_response(response.body);
      std::move(batch.begin(), batch.end(), std::back_inserter(answers));
    } catch (const json::exception& error) {
      throw_bad_shape("LFS batch", error);
    }
  }
  std::set<std::string> requested;
  for (const auto& object : objects) {
    requested.insert(object.oid);
  }
  for (const auto& answer : answers) {
    if (requested.count(answer.oid) == 0) {
      throw RemoteError("the Hub answered the LFS batch with an object that was not asked for (" + answer.oid + ")",
                        "retry later");
    }
  }
  return answers;
}

void HubApi::lfs_upload(const std::vector<LfsBatchObject>& objects,
                        const std::function<UploadSource(const std::string& oid)>& source_of,
                        const std::function<void(std::uint64_t)>& on_bytes_sent)
{
  struct Transfer {
    std::size_t object = 0;
    std::string url;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::size_t part = 0; // 1-based for multipart parts, 0 for a basic PUT
  };
  std::vector<Transfer> transfers;
  std::vector<std::optional<MultipartPlan>> plans(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const auto& object = objects[i];
    if (!object.upload) {
      continue;
    }
    plans[i] = multipart_plan(*object.upload, object.size);
    if (plans[i]) {
      for (std::size_t part = 0; part < plans[i]->part_urls.size(); ++part) {
        auto offset = part * plans[i]->chunk_size;
        transfers.push_back({i, plans[i]->part_urls[part], offset,
                             std::min(plans[i]->chunk_size, object.size - offset), part + 1});
      }
    } else {
      transfers.push_back({i, object.upload->href, 0, object.size, 0});
    }
  }
  std::vector<std::vector<std::string>> etags(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i) {
    if (plans[i]) {
      etags[i].resize(plans[i]->part_urls.size());
    }
  }
  std::mutex progress_mutex;
  // Upload URLs are pre-signed: like the official clients, no Authorization goes there.
  run_parallel(transfers.size(), m_config.workers, [&](std::size_t index) {
    const auto& transfer = transfers[index];
    const auto& object = objects[transfer.object];
    auto source = source_of(object.oid);
    http::Request request;
    request.method = "PUT";
    request.url = transfer.url;
    request.headers.emplace_back("Content-Type", "application/octet-stream");
    if (source.file) {
      request.body_file = http::FileSlice{*source.file, transfer.offset, transfer.length};
    } else if (source.bytes != nullptr) {
      request.body = source.bytes->substr(transfer.offset, transfer.length);
    }
    auto error_context = context("upload the large file " + object.oid.substr(0, 12), {}, true);
    auto response = call(request, error_context);
    if (transfer.part > 0) {
      auto etag = response.headers.get("etag");
      if (!etag) {
        throw RemoteError("the Hub sent no ETag for part " + std::to_string(transfer.part) + " of LFS object "
                            + object.oid,
                          "retry later");
      }
      etags[transfer.object][transfer.part - 1] = *etag;
    }
    std::lock_guard lock(progress_mutex);
    if (on_bytes_sent) {
      on_bytes_sent(transfer.length);
    }
  });

  std::vector<std::size_t> finishing;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    if (objects[i].upload && (plans[i] || objects[i].verify)) {
      finishing.push_back(i);
    }
  }
  run_parallel(finishing.size(), m_config.workers, [&](std::size_t index) {
    auto i = finishing[index];
    const auto& object = objects[i];
    if (plans[i]) {
      json parts = json::array();
      for (std::size_t part = 0; part < etags[i].size(); ++part) {
        parts.push_back({{"partNumber", part + 1}, {"etag", etags[i][part]}});
      }
      http::Request request;
      request.method = "POST";
      request.url = object.upload->href;
      request.headers = lfs_headers();
      request.body = json{{"oid", object.oid}, {"parts", parts}}.dump();
      call(request, context("complete the upload of " + object.oid.substr(0, 12), {}, true));
    }
    if (object.verify) {
      http::Request request;
      request.method = "POST";
      request.url = object.verify->href;
      if (http::url_origin(request.url) == http::url_origin(m_config.endpoint)) {
        request.headers = auth_headers();
      }
      request.headers.emplace_back("Content-Type", "application/json");
      request.body = json{{"oid", object.oid}, {"size", object.size}}.dump();
      call(request, context("verify the upload of " + object.oid.substr(0, 12), {}, true));
    }
  });
}

HubApi::CommitAnswer HubApi::commit(std::string_view repo_id, std::string_view revision,
                                    const std::filesystem::path& payload)
{
  http::Request request;
  request.method = "POST";
  request.url = api_url(repo_id, "commit/" + http::url_encode(revision));
  request.headers = auth_headers();
  request.headers.emplace_back("Content-Type", "application/x-ndjson");
  request.body_file = http::FileSlice{payload, 0, stdfs::file_size(payload)};
  // The Hub may think a while before answering a large commit.
  request.stall_timeout = std::max(m_config.stall_timeout, std::chrono::seconds(300));
  auto response = send(request, false);
  if (response.status == 409 || response.status == 412 || http::is_retryable_status(response.status)) {
    return CommitAnswer{response.status, {}};
  }
  if (!response.ok()) {
    throw_hub_error(response, context("commit to " + std::string(repo_id), repo_id, true), m_config.token);
  }
  auto parsed = parse_json_answer(response, "commit");
  try {
    return CommitAnswer{response.status, parsed.at("commitOid").get<std::string>()};
  } catch (const json::exception& error) {
    throw_bad_shape("commit", error);
  }
}

namespace {

// Streams a download into its target while hashing it, and checks every 206 continues
// exactly where the previous attempt stopped.
class DownloadSink final : public http::BodySink {
public:
  DownloadSink(DownloadTarget& target, const util::ProgressCallback& progress) : m_target(target), m_progress(progress) {}

  bool start(long status, const http::Headers& headers) override
  {
    if (status == 206) {
      auto range = headers.get("content-range").value_or("");
      auto space = range.find(' ');
      auto dash = range.find('-');
      auto first = space != std::string::npos && dash != std::string::npos
                     ? parse_u64(std::string_view(range).substr(space + 1, dash - space - 1))
                     : std::nullopt;
      if (!first || *first != written) {
        throw IntegrityError("the server resumed the download at the wrong offset (" + range + ")",
                             "retry the command");
      }
      return true;
    }
    if (status == 200) {
      if (written > 0) {
        reset();
      }
      if (!expected_size) {
        if (auto length = headers.get("content-length")) {
          expected_size = parse_u64(*length);
        }
      }
      if (!expected_etag) {
        if (auto etag = headers.get("etag")) {
          expected_etag = normalize_etag(*etag);
        }
      }
      if (!commit) {
        commit = headers.get("x-repo-commit");
      }
      return true;
    }
    return false;
  }

  void write(std::string_view chunk) override
  {
    if (expected_size && written + chunk.size() > *expected_size) {
      throw IntegrityError("the download is longer than the " + std::to_string(*expected_size)
                             + " bytes the Hub announced",
                           "retry later; nothing was installed");
    }
    if (!m_sha1 && expected_size) {
      m_sha1.emplace(util::HashAlgorithm::sha1);
      m_sha1->update("blob " + std::to_string(*expected_size) + std::string(1, '\0'));
    }
    m_target.write(chunk);
    m_sha256.update(chunk);
    if (m_sha1) {
      m_sha1->update(chunk);
    }
    written += chunk.size();
    if (m_progress) {
      m_progress(written, expected_size.value_or(0));
    }
  }

  void reset()
  {
    m_target.restart();
    m_sha256 = util::Hasher(util::HashAlgorithm::sha256);
    m_sha1.reset();
    written = 0;
  }

  util::FileDigests digests()
  {
    if (!m_sha1) {
      return m_target.digests();
    }
    return util::FileDigests{written, m_sha256.hex_digest(), m_sha1->hex_digest()};
  }

  std::uint64_t written = 0;
  std::optional<std::uint64_t> expected_size;
  std::optional<std::string> expected_etag;
  std::optional<std::string> commit;

private:
  DownloadTarget& m_target;
  const util::ProgressCallback& m_progress;
  util::Hasher m_sha256{util::HashAlgorithm::sha256};
  std::optional<util::Hasher> m_sha1;
};

constexpr int k_max_redirects = 5;
constexpr int k_max_stalled_resumes = 5;

} // namespace

DownloadResult HubApi::download(std::string_view repo_id, std::string_view revision, std::string_view path,
                                DownloadTarget& target, const util::ProgressCallback& progress)
{
  require_online();
  auto error_context = context("download '" + std::string(path) + "' from " + std::string(repo_id), repo_id);
  error_context.path = std::string(path);
  std::string url = m_config.endpoint + "/" + http::url_encode(repo_id, true) + "/resolve/"
                    + http::url_encode(revision) + "/" + http::url_encode(path, true);
  auto hub_origin = http::url_origin(m_config.endpoint);
  DownloadSink sink(target, progress);
  auto client = m_clients.acquire();
  int redirects = 0;
  int stalled = 0;
  int status_attempt = 0;
  for (;;) {
    http::Request request;
    request.url = url;
    if (http::url_origin(url) == hub_origin) {
      request.headers = auth_headers(); // never sent to another host (the LFS CDN)
    }
    request.headers.emplace_back("Accept-Encoding", "identity");
    if (sink.written > 0) {
      request.headers.emplace_back("Range", "bytes=" + std::to_string(sink.written) + "-");
    }
    request.stall_timeout = m_config.stall_timeout;
    auto before = sink.written;
    http::Response response;
    try {
      require_online();
      response = client->perform(request, &sink);
    } catch (const http::TransportError& error) {
      stalled = sink.written > before ? 0 : stalled + 1;
      if (stalled >= k_max_stalled_resumes || !error.retryable()) {
        throw;
      }
      sleep_for(std::min(m_config.retry.base * stalled, m_config.retry.cap));
      continue; // resume with Range from what we have
    }
    if (response.status >= 300 && response.status < 400) {
      auto location = response.headers.get("location");
      if (!location || ++redirects > k_max_redirects) {
        throw RemoteError("cannot " + error_context.action + ": bad redirect from the Hub (HTTP "
                            + std::to_string(response.status) + ")",
                          "retry later");
      }
      if (auto etag = response.headers.get("x-linked-etag")) {
        sink.expected_etag = normalize_etag(*etag);
      }
      if (auto size = response.headers.get("x-linked-size")) {
        sink.expected_size = parse_u64(*size);
      }
      if (auto commit = response.headers.get("x-repo-commit")) {
        sink.commit = *commit;
      }
      url = http::resolve_location(url, *location);
      continue;
    }
    if (response.ok()) {
      break;
    }
    if (auto delay = m_config.retry.delay_after(++status_attempt, &response)) {
      sleep_for(*delay);
      continue;
    }
    throw_hub_error(response, error_context, m_config.token);
  }

  auto digests = sink.digests();
  const std::string where = "'" + std::string(path) + "' from " + std::string(repo_id);
  if (sink.expected_size && digests.size != *sink.expected_size) {
    throw IntegrityError("the download of " + where + " has " + std::to_string(digests.size) + " bytes, not the "
                           + std::to_string(*sink.expected_size) + " the Hub announced; nothing was installed",
                         "retry later");
  }
  if (sink.expected_etag) {
    const auto& etag = *sink.expected_etag;
    bool matches = true;
    if (etag.size() == 64 && is_hex(etag)) {
      matches = etag == digests.sha256;
    } else if (etag.size() == 40 && is_hex(etag)) {
      matches = etag == digests.git_blob_sha1;
    }
    if (!matches) {
      throw IntegrityError("the download of " + where + " does not match the hash the Hub announced (" + etag
                             + "); nothing was installed",
                           "retry later");
    }
  }
  return DownloadResult{digests.size, digests.sha256, sink.commit.value_or("")};
}

std::string download_hub_file_text(const util::Environment& env, std::optional<std::string> token, std::string_view repo_id,
                                   std::string_view path, std::string_view revision)
{
  HubApi api(HubConfig::from_environment(env, token));
  StringDownloadTarget target;
  api.download(repo_id, revision, path, target);
  return std::move(target.content);
}

} // namespace hubcache::hub
