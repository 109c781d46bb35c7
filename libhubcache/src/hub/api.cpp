#include "hubcache/hub/api.hpp"

#include "detail.hpp"

#include "hubcache/http/listing_bounds.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace hubcache::hub {

using json = nlohmann::json;
using namespace detail;
namespace stdfs = std::filesystem;

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
  request.body_limit = m_config.max_answer_size;
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

void HubApi::check_write_access(std::string_view repo_id)
{
  http::Request request;
  request.method = "DELETE";
  request.url = api_url(repo_id, "branch/this-branch-does-not-exist-" + util::random_suffix());
  request.headers = auth_headers();
  auto response = send(std::move(request));
  auto code = response.headers.get("X-Error-Code").value_or("");
  if (response.status == 404 && code == "RevisionNotFound") {
    return;
  }
  if (response.status == 401 || response.status == 403 || response.status == 404) {
    throw WriteAccessDenied("You do not have write access to " + std::string(repo_id),
                            ErrorFacts{std::string(repo_id), has_token(), true});
  }
  throw_hub_error(response, context("check write access to " + std::string(repo_id), repo_id, true), m_config.token);
}

WhoAmI HubApi::whoami()
{
  require_online();
  if (!m_config.token) {
    throw TokenMissing("this needs a Hugging Face token, and none is set");
  }
  http::Request request;
  request.url = m_config.endpoint + "/api/whoami-v2";
  request.headers = auth_headers();
  auto error_context = context("check your Hugging Face token");
  auto response = send(request);
  if (response.status == 401) {
    throw TokenRejected(
      "the Hub rejected your token (HTTP 401"
        + (response.request_id() ? ", request id: " + sanitize(*response.request_id(), m_config.token) : std::string())
        + ")",
      ErrorFacts{{}, true, false});
  }
  if (!response.ok()) {
    throw_hub_error(response, error_context, m_config.token);
  }
  auto parsed = parse_json_answer(response, "whoami", m_config.token);
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
    throw TokenMissing("cannot create the repo " + std::string(repo_id) + ": no Hugging Face token is set",
                       ErrorFacts{std::string(repo_id), false, true});
  }
  http::Request request;
  request.method = "POST";
  request.url = m_config.endpoint + "/api/repos/create";
  request.headers = auth_headers();
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = json{
    {"name", repo_id.substr(slash + 1)},
    {"organization", repo_id.substr(0, slash)},
    {"type", "model"},
    {"private",
     is_private}}.dump();
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
                            ErrorFacts{std::string(repo_id), true, true});
  }
  if (exist_ok && (response.status == 401 || response.status == 403) && repo_info(repo_id)) {
    return std::string(repo_id);
  }
  if (!response.ok()) {
    throw_hub_error(response, error_context, m_config.token);
  }
  auto parsed = parse_json_answer(response, "create repo", m_config.token);
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
  // Only the fields read here: without `expand` the Hub lists every file of the repo
  // (`siblings`), megabytes for a big cache repo, on every revision check.
  request.url += "?expand=sha&expand=private";
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
  auto parsed = parse_json_answer(response, "repo info", m_config.token);
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

std::vector<HubTreeEntry> HubApi::list_tree(std::string_view repo_id, std::string_view revision, std::string_view path,
                                            bool recursive, bool expand)
{
  std::string route = "tree/" + http::url_encode(revision);
  if (!path.empty()) {
    route += "/" + http::url_encode(path, true);
  }
  std::string url = api_url(repo_id, route) + "?recursive=" + (recursive ? "true" : "false")
                    + (expand ? "&expand=true" : "&expand=false");
  auto error_context = context("list the files of " + std::string(repo_id), repo_id);
  error_context.path = std::string(path);
  auto origin = http::url_origin(m_config.endpoint);
  std::vector<HubTreeEntry> entries;
  http::ListingBounds bounds("the Hub's file listing of " + std::string(repo_id), m_config.listing);
  while (!url.empty()) {
    bounds.next_page(url);
    http::Request request;
    request.url = url;
    if (http::url_origin(url) == origin) {
      request.headers = auth_headers();
    }
    auto response = call(request, error_context);
    auto parsed = parse_json_answer(response, "list files", m_config.token);
    if (!parsed.is_array()) {
      throw RemoteError("the Hub's file listing of " + std::string(repo_id) + " is not a JSON array", "retry later");
    }
    bounds.add_entries(parsed.size());
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
    auto parsed = parse_json_answer(response, "paths-info", m_config.token);
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
  // Batches are independent: asked at once, merged in order.
  auto ranges = batch_ranges(files.size(), k_preupload_batch_size);
  std::vector<PreuploadResult> batches(ranges.size());
  preupload(
    repo_id, revision, files.size(), [&](std::size_t i) { return files[i]; },
    [&](std::size_t begin, std::size_t, PreuploadResult& answers) {
      batches[begin / k_preupload_batch_size] = std::move(answers);
    });
  PreuploadResult result;
  for (auto& batch : batches) {
    if (!result.commit_oid) {
      result.commit_oid = batch.commit_oid;
    }
    std::move(batch.files.begin(), batch.files.end(), std::back_inserter(result.files));
  }
  return result;
}

void HubApi::preupload(
  std::string_view repo_id, std::string_view revision, std::size_t count,
  const std::function<PreuploadFile(std::size_t index)>& file_at,
  const std::function<void(std::size_t begin, std::size_t end, PreuploadResult& answers)>& on_batch)
{
  auto error_context = context("prepare the upload to " + std::string(repo_id), repo_id, true);
  auto ranges = batch_ranges(count, k_preupload_batch_size);
  util::parallel_for(ranges.size(), m_config.workers, [&](std::size_t index) {
    auto [begin, end] = ranges[index];
    http::Request request;
    request.method = "POST";
    request.url = api_url(repo_id, "preupload/" + http::url_encode(revision));
    request.headers = auth_headers();
    request.headers.emplace_back("Content-Type", "application/json");
    {
      std::vector<PreuploadFile> files;
      files.reserve(end - begin);
      for (auto i = begin; i < end; ++i) {
        files.push_back(file_at(i));
      }
      request.body = preupload_request_body(files, 0, files.size());
    }
    auto response = call(request, error_context);
    parse_json_answer(response, "preupload", m_config.token);
    PreuploadResult answers;
    try {
      answers = parse_preupload_response(response.body);
    } catch (const json::exception& error) {
      throw_bad_shape("preupload", error);
    }
    on_batch(begin, end, answers);
  });
}

std::vector<LfsBatchObject> HubApi::lfs_batch(std::string_view repo_id, std::string_view branch,
                                              const std::vector<LfsObjectRef>& objects, bool offer_xet)
{
  auto error_context = context("upload large files to " + std::string(repo_id), repo_id, true);
  auto ranges = batch_ranges(objects.size(), k_lfs_batch_size);
  std::vector<std::vector<LfsBatchObject>> batches(ranges.size());
  util::parallel_for(ranges.size(), m_config.workers, [&](std::size_t index) {
    auto [begin, end] = ranges[index];
    http::Request request;
    request.method = "POST";
    request.url = m_config.endpoint + "/" + http::url_encode(repo_id, true) + ".git/info/lfs/objects/batch";
    request.headers = auth_headers();
    for (auto& header : lfs_headers()) {
      request.headers.push_back(std::move(header));
    }
    request.body = lfs_batch_request_body(objects, begin, end, branch, offer_xet);
    auto response = call(request, error_context);
    parse_json_answer(response, "LFS batch", m_config.token);
    try {
      batches[index] = parse_lfs_batch_response(response.body);
    } catch (const json::exception& error) {
      throw_bad_shape("LFS batch", error);
    }
  });
  std::vector<LfsBatchObject> answers;
  for (auto& batch : batches) {
    std::move(batch.begin(), batch.end(), std::back_inserter(answers));
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

namespace {

// One PUT of an LFS upload: a whole object (a basic upload), or one part of a multipart one.
struct LfsTransfer {
  std::size_t object = 0;
  std::string url;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::size_t part = 0; // 1-based for multipart parts, 0 for a basic PUT
};

// What an LFS upload does: its transfers, longest first, and per object the multipart plan
// (nullopt: a basic PUT) and the ETags of its parts as they land.
struct LfsUploadPlan {
  std::vector<LfsTransfer> transfers;
  std::vector<std::optional<MultipartPlan>> multipart;
  std::vector<std::vector<std::string>> part_etags;
};

LfsUploadPlan plan_lfs_upload(const std::vector<LfsBatchObject>& objects)
{
  LfsUploadPlan plan;
  plan.multipart.resize(objects.size());
  plan.part_etags.resize(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const auto& object = objects[i];
    if (!object.upload) {
      continue;
    }
    auto& multipart = plan.multipart[i];
    multipart = multipart_plan(*object.upload, object.size);
    if (!multipart) {
      plan.transfers.push_back({i, object.upload->href, 0, object.size, 0});
      continue;
    }
    plan.part_etags[i].resize(multipart->part_urls.size());
    for (std::size_t part = 0; part < multipart->part_urls.size(); ++part) {
      auto offset = part * multipart->chunk_size;
      plan.transfers.push_back(
        {i, multipart->part_urls[part], offset, std::min(multipart->chunk_size, object.size - offset), part + 1});
    }
  }
  // Longest first, so a big file never starts last and leaves the other workers idle.
  std::stable_sort(plan.transfers.begin(), plan.transfers.end(),
                   [](const LfsTransfer& a, const LfsTransfer& b) { return a.length > b.length; });
  return plan;
}

// The PUT of one transfer to its pre-signed URL (like the official clients, no
// Authorization goes there); `on_sent` (may be empty) hears the bytes sent so far. Returns
// a part's ETag (empty for a basic PUT).
std::string put_lfs_transfer(HubApi& api, const LfsTransfer& transfer, const LfsBatchObject& object,
                             const HubApi::UploadSource& source, const std::function<void(std::uint64_t)>& on_sent)
{
  http::Request request;
  request.method = "PUT";
  request.url = transfer.url;
  request.headers.emplace_back("Content-Type", "application/octet-stream");
  if (source.file) {
    request.body_file = http::FileSlice{*source.file, transfer.offset, transfer.length};
  } else if (source.bytes != nullptr) {
    request.body = source.bytes->substr(transfer.offset, transfer.length);
  }
  request.on_upload_progress = on_sent;
  auto response = api.call(request, api.context("upload the large file " + object.oid.substr(0, 12), {}, true));
  if (transfer.part == 0) {
    return {};
  }
  auto etag = response.headers.get("etag");
  if (!etag) {
    throw RemoteError("the Hub sent no ETag for part " + std::to_string(transfer.part) + " of LFS object " + object.oid,
                      "retry later");
  }
  return *etag;
}

// Once every transfer of `object` landed: completes a multipart upload from its parts'
// ETags, then verifies the object when the batch asked for it (with the token only on the
// Hub's own origin, `endpoint`).
void finish_lfs_object(HubApi& api, const std::string& endpoint, const LfsBatchObject& object,
                       const std::optional<MultipartPlan>& multipart, const std::vector<std::string>& part_etags)
{
  if (multipart) {
    json parts = json::array();
    for (std::size_t part = 0; part < part_etags.size(); ++part) {
      parts.push_back({{"partNumber", part + 1}, {"etag", part_etags[part]}});
    }
    http::Request request;
    request.method = "POST";
    request.url = object.upload->href;
    request.headers = lfs_headers();
    request.body = json{{"oid", object.oid}, {"parts", parts}}.dump();
    api.call(request, api.context("complete the upload of " + object.oid.substr(0, 12), {}, true));
  }
  if (object.verify) {
    http::Request request;
    request.method = "POST";
    request.url = object.verify->href;
    if (http::url_origin(request.url) == http::url_origin(endpoint)) {
      request.headers = api.auth_headers();
    }
    request.headers.emplace_back("Content-Type", "application/json");
    request.body = json{{"oid", object.oid}, {"size", object.size}}.dump();
    api.call(request, api.context("verify the upload of " + object.oid.substr(0, 12), {}, true));
  }
}

} // namespace

void HubApi::lfs_upload(const std::vector<LfsBatchObject>& objects,
                        const std::function<UploadSource(const std::string& oid)>& source_of,
                        const std::function<void(std::uint64_t)>& on_bytes_sent)
{
  auto plan = plan_lfs_upload(objects);
  // Transfers still to land per object: whoever lands the last one completes and verifies
  // the object at once, while the other workers keep uploading.
  auto pending = std::make_unique<std::atomic<std::size_t>[]>(objects.size());
  for (const auto& transfer : plan.transfers) {
    ++pending[transfer.object];
  }
  std::mutex progress_mutex;
  // Completion and verify are small calls to the Hub's API, which on the real Hub is another
  // host than the storage the parts go to: they run on their own lane, so a worker moves on
  // to its next upload instead of waiting a round trip per object.
  util::TaskQueue finishers(m_config.workers);

  util::parallel_for(plan.transfers.size(), m_config.workers, [&](std::size_t index) {
    finishers.rethrow_if_failed();
    const auto& transfer = plan.transfers[index];
    const auto& object = objects[transfer.object];
    // Bytes count as they go out (a retry restarts the body: only new highs count), so a
    // big file moves the progress all along, not once per part.
    std::uint64_t reported = 0;
    auto count_sent = [&](std::uint64_t sent) {
      sent = std::min(sent, transfer.length);
      std::lock_guard lock(progress_mutex);
      if (sent > reported) {
        if (on_bytes_sent) {
          on_bytes_sent(sent - reported);
        }
        reported = sent;
      }
    };
    std::function<void(std::uint64_t)> on_sent;
    if (on_bytes_sent) {
      on_sent = count_sent;
    }
    auto etag = put_lfs_transfer(*this, transfer, object, source_of(object.oid), on_sent);
    if (transfer.part > 0) {
      plan.part_etags[transfer.object][transfer.part - 1] = std::move(etag);
    }
    count_sent(transfer.length);
    // acq_rel: the last one sees every other part's ETag.
    auto landed = transfer.object;
    if (pending[landed].fetch_sub(1, std::memory_order_acq_rel) == 1 && (plan.multipart[landed] || object.verify)) {
      finishers.submit([&, landed] {
        finish_lfs_object(*this, m_config.endpoint, objects[landed], plan.multipart[landed], plan.part_etags[landed]);
      });
    }
  });
  finishers.wait();
}

HubApi::CommitAnswer HubApi::commit(std::string_view repo_id, std::string_view revision, const http::FileSlice& payload)
{
  http::Request request;
  request.method = "POST";
  request.url = api_url(repo_id, "commit/" + http::url_encode(revision));
  request.headers = auth_headers();
  request.headers.emplace_back("Content-Type", "application/x-ndjson");
  request.body_file = payload;
  // The Hub may think a while before answering a large commit.
  request.stall_timeout = std::max(m_config.stall_timeout, std::chrono::seconds(300));
  auto response = send(request, false);
  if (response.status == 409 || response.status == 412 || http::is_retryable_status(response.status)) {
    auto retry_after = response.headers.get("Retry-After");
    return CommitAnswer{response.status,
                        {},
                        sanitize(server_message(response), m_config.token),
                        retry_after ? http::parse_retry_after(*retry_after) : std::nullopt};
  }
  if (!response.ok()) {
    throw_hub_error(response, context("commit to " + std::string(repo_id), repo_id, true), m_config.token);
  }
  auto parsed = parse_json_answer(response, "commit", m_config.token);
  try {
    return CommitAnswer{response.status, parsed.at("commitOid").get<std::string>(), {}, std::nullopt};
  } catch (const json::exception& error) {
    throw_bad_shape("commit", error);
  }
}

} // namespace hubcache::hub
