// Storage Bucket routes of the test Hub (hub-buckets-and-limits.md §1.2): create, info,
// delete, tree (paginated with Link), paths-info (<= 1,000 paths), Xet tokens, the NDJSON
// batch (not transactional: 422 with the failed operations), and the plain `resolve`
// download with Range. Writes need --xet (a file is added by its Xet hash). Bucket ids
// and model repo ids are separate namespaces, as on the Hub: a model repo's name is no
// bucket, and the reverse.

#include <algorithm>
#include <set>

#include "hub_server.hpp"
#include "hubcache/storage/repo_spec.hpp"

namespace testhub {

namespace {

constexpr std::size_t k_max_paths_info = 1000;
constexpr std::size_t k_max_batch_operations = 1000;
constexpr std::size_t k_max_tree_limit = 10000;

json parse_body(RequestContext& ctx)
{
  const auto text = ctx.body.read_all(16 * 1024 * 1024);
  try {
    return text.empty() ? json::object() : json::parse(text);
  } catch (const json::exception&) {
    throw HubError(400, "Invalid JSON in request body");
  }
}

json file_json(const std::string& path, const BucketFile& file)
{
  return {{"type", "file"},
          {"path", path},
          {"size", file.size},
          {"xetHash", file.xet_hash},
          {"mtime", iso8601_ms(file.mtime_ms)},
          {"uploadedAt", file.uploaded_at}};
}

// The gateway's and the bucket API's path rules: no leading or trailing '/', no '//', no
// '.' or '..' component, no '\' or control character.
bool is_valid_bucket_path(std::string_view path)
{
  if (path.empty() || path.front() == '/' || path.back() == '/' || path.find("//") != std::string_view::npos)
    return false;
  for (char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\')
      return false;
  }
  for (const auto& part : split(path, '/')) {
    if (part == "." || part == "..")
      return false;
  }
  return true;
}

// The sorted tree under `folder`: every file and folder (recursive) or the direct ones.
std::vector<std::pair<std::string, const BucketFile*>> build_tree(const Bucket& bucket, const std::string& folder,
                                                                  bool recursive)
{
  const auto base = folder.empty() ? std::string() : folder + "/";
  std::map<std::string, const BucketFile*> entries; // folders map to nullptr
  for (const auto& [path, file] : bucket.files) {
    if (!path.starts_with(base))
      continue;
    const auto rest = std::string_view(path).substr(base.size());
    std::size_t slash = rest.find('/');
    while (slash != std::string_view::npos) {
      entries.emplace(base + std::string(rest.substr(0, slash)), nullptr);
      if (!recursive)
        break;
      slash = rest.find('/', slash + 1);
    }
    if (recursive || rest.find('/') == std::string_view::npos)
      entries[path] = &file;
  }
  return {entries.begin(), entries.end()};
}

// The same, built once for the pages of a listing while the bucket does not change.
std::shared_ptr<const Bucket::Tree> tree_of(Bucket& bucket, const std::string& folder, bool recursive)
{
  const auto& cached = bucket.tree;
  if (!cached || cached->generation != bucket.generation || cached->folder != folder
      || cached->recursive != recursive) {
    bucket.tree = std::make_shared<const Bucket::Tree>(
      Bucket::Tree{bucket.generation, folder, recursive, build_tree(bucket, folder, recursive)});
  }
  return bucket.tree;
}

} // namespace

Bucket& HubServer::require_bucket(RequestContext& ctx, const std::string& id, Access access)
{
  auto* bucket = m_buckets.find(id);
  const bool readable = bucket && (!bucket->is_private || (ctx.user && is_member(*ctx.user, bucket->ns)));
  if (ctx.bad_token)
    throw HubError(401, "Invalid credentials in Authorization header");
  if (!readable) {
    // As for repos: anonymous callers cannot tell a private bucket from a missing one.
    if (!ctx.user)
      throw HubError(401, "Invalid username or password.", "RepoNotFound");
    throw HubError(404, "Bucket not found", "RepoNotFound");
  }
  if (access == Access::write && (!ctx.user || ctx.user->role != "write" || !is_member(*ctx.user, bucket->ns)))
    throw HubError(403, "You don't have the rights to write to the bucket " + id
                          + ". Use a token with the write role from an account with access to this bucket.");
  return *bucket;
}

Reply HubServer::bucket_create(RequestContext& ctx, std::string ns, const std::string& name)
{
  const auto body = parse_body(ctx);
  if (!body.is_object())
    throw HubError(400, "Expected a JSON object");
  const auto& user = require_user(ctx);
  if (ns == "me")
    ns = user.name;
  if (!hubcache::storage::is_valid_hub_repo_id(ns + "/" + name))
    throw HubError(400, "Invalid bucket name: \"" + ns + "/" + name
                          + "\". Use letters, digits, '-', '_' and '.', not starting or ending with '-' or '.', "
                            "without '--' or '..', at most 96 characters.");
  if (!is_member(user, ns) || user.role != "write")
    throw HubError(403, "You don't have the rights to create a bucket under the namespace \"" + ns + "\"");
  const bool is_private =
    body.contains("private") && body.at("private").is_boolean() ? body.at("private").get<bool>() : false;
  const auto url = ctx.base_url + "/buckets/" + ns + "/" + name;
  std::lock_guard lock(m_buckets.mutex());
  if (!m_buckets.create(ns, name, is_private)) {
    const auto message = "You already created this bucket: " + ns + "/" + name;
    auto reply = json_reply(409, json{{"error", message}, {"url", url}});
    reply.header("X-Error-Message", message);
    return reply;
  }
  return json_reply(200, json{{"url", url}, {"name", ns + "/" + name}, {"id", ns + "/" + name}});
}

Reply HubServer::bucket_info(RequestContext& ctx, const std::string& id)
{
  std::lock_guard lock(m_buckets.mutex());
  const auto& bucket = require_bucket(ctx, id, Access::read);
  std::uint64_t size = 0;
  for (const auto& [path, file] : bucket.files)
    size += file.size;
  return json_reply(200, json{{"id", id},
                              {"private", bucket.is_private},
                              {"createdAt", bucket.created_at},
                              {"updatedAt", bucket.updated_at},
                              {"size", size},
                              {"totalFiles", bucket.files.size()}});
}

Reply HubServer::bucket_delete(RequestContext& ctx, const std::string& id)
{
  ctx.body.drain();
  std::lock_guard lock(m_buckets.mutex());
  require_bucket(ctx, id, Access::write);
  m_buckets.remove(id);
  return json_reply(200, json::object());
}

Reply HubServer::bucket_tree(RequestContext& ctx, const std::string& id, const std::string& prefix)
{
  std::string folder = prefix;
  while (!folder.empty() && folder.back() == '/')
    folder.pop_back();
  const bool recursive = ctx.flag("recursive");
  std::size_t limit = m_options.page_size;
  if (const auto text = ctx.param("limit")) {
    try {
      limit = std::stoul(*text);
    } catch (const std::exception&) {
      throw HubError(400, "Invalid limit");
    }
  }
  limit = std::clamp<std::size_t>(limit, 1, k_max_tree_limit);
  std::string after; // the cursor names the last path of the previous page: stable while files change
  if (const auto cursor = ctx.param("cursor")) {
    const auto decoded = base64url_decode(*cursor);
    if (!decoded || decoded->empty())
      throw HubError(400, "Invalid cursor");
    after = *decoded;
  }
  std::lock_guard lock(m_buckets.mutex());
  auto& bucket = require_bucket(ctx, id, Access::read);
  const auto tree = tree_of(bucket, folder, recursive);
  const auto& entries = tree->entries;
  auto it = after.empty()
              ? entries.begin()
              : std::upper_bound(entries.begin(), entries.end(), after,
                                 [](const std::string& value, const auto& entry) { return value < entry.first; });
  // Written out directly: a page of 5,000 entries as JSON objects costs more than the page.
  std::string page = "[";
  std::string last_path;
  std::size_t count = 0;
  for (; it != entries.end() && count < limit; ++it, ++count) {
    page += count == 0 ? "" : ",";
    const auto path = json(it->first).dump(); // quoted and escaped
    if (it->second) {
      const auto& file = *it->second;
      page += R"({"type":"file","path":)" + path + R"(,"size":)" + std::to_string(file.size) + R"(,"xetHash":)"
              + json(file.xet_hash).dump() + R"(,"mtime":")" + iso8601_ms(file.mtime_ms) + R"(","uploadedAt":)"
              + json(file.uploaded_at).dump() + "}";
    } else {
      page += R"({"type":"directory","path":)" + path + R"(,"uploadedAt":)" + json(bucket.updated_at).dump() + "}";
    }
    last_path = it->first;
  }
  page += "]";
  Reply reply;
  reply.content_type = "application/json; charset=utf-8";
  reply.body = std::move(page);
  if (it != entries.end()) {
    std::string query;
    const auto question = ctx.target.find('?');
    if (question != std::string::npos) {
      for (const auto& pair : split(std::string_view(ctx.target).substr(question + 1), '&')) {
        if (!pair.empty() && pair.rfind("cursor=", 0) != 0)
          query += pair + "&";
      }
    }
    const auto cursor = base64url_encode(last_path);
    reply.header("Link", "<" + ctx.base_url + ctx.path + "?" + query + "cursor=" + cursor + ">; rel=\"next\"");
  }
  return reply;
}

Reply HubServer::bucket_paths_info(RequestContext& ctx, const std::string& id)
{
  const auto body = parse_body(ctx);
  if (!body.is_object() || !body.contains("paths") || !body.at("paths").is_array())
    throw HubError(400, "Expected {\"paths\": [...]}");
  const auto& paths = body.at("paths");
  if (paths.size() > k_max_paths_info)
    throw HubError(400, "Too many paths: at most " + std::to_string(k_max_paths_info) + " per request");
  std::lock_guard lock(m_buckets.mutex());
  const auto& bucket = require_bucket(ctx, id, Access::read);
  json answer = json::array();
  for (const auto& item : paths) {
    if (!item.is_string())
      throw HubError(400, "Expected {\"paths\": [...]} of strings");
    const auto path = item.get<std::string>();
    if (const auto it = bucket.files.find(path); it != bucket.files.end())
      answer.push_back(file_json(path, it->second));
  }
  return json_reply(200, answer);
}

Reply HubServer::bucket_xet_token(RequestContext& ctx, const std::string& id, bool write)
{
  if (!m_xet)
    throw HubError(404, "Xet storage is not enabled on this Hub");
  std::lock_guard lock(m_buckets.mutex());
  require_bucket(ctx, id, write ? Access::write : Access::read);
  return json_reply(200, xet_token(ctx, "buckets/" + id, write ? "write" : "read"));
}

// One operation of a batch; empty when it succeeded, else why not.
std::string HubServer::bucket_apply(Bucket& bucket, const json& op, bool& lied)
{
  if (!op.is_object() || !op.contains("type") || !op.contains("path") || !op.at("path").is_string())
    return "Malformed operation";
  const auto type = op.at("type").get<std::string>();
  const auto path = op.at("path").get<std::string>();
  if (!is_valid_bucket_path(path))
    return "Invalid path";
  if (type == "deleteFile") {
    bucket.generation += bucket.files.erase(path);
    return {};
  }
  if (type != "addFile" && type != "copyFile")
    return "Unknown operation type \"" + type + "\"";
  const auto hash = op.value("xetHash", std::string());
  const auto known = hash == k_empty_xet_hash ? std::optional<XetFile>(XetFile{hash, {}, 0, {}})
                                              : (m_xet ? m_xet->file(hash) : std::nullopt);
  if (!known)
    return "Xet file " + hash + " not found";
  auto& lie = m_buckets.lie();
  if (type == "addFile" && lie.remaining > 0 && path.find(lie.match) != std::string::npos) {
    lied = true; // reported as added, not applied
    return {};
  }
  BucketFile file{known->size, hash, unix_now() * 1000, iso8601_now()};
  if (op.contains("mtime") && op.at("mtime").is_number_integer())
    file.mtime_ms = op.at("mtime").get<std::int64_t>();
  bucket.files[path] = file;
  ++bucket.generation;
  return {};
}

Reply HubServer::bucket_batch(RequestContext& ctx, const std::string& id)
{
  const auto text = ctx.body.read_all(64 * 1024 * 1024);
  std::vector<json> operations;
  for (const auto& line : split(text, '\n')) {
    if (line.empty())
      continue;
    try {
      operations.push_back(json::parse(line));
    } catch (const json::exception&) {
      throw HubError(400, "Invalid NDJSON line in the batch");
    }
  }
  if (operations.size() > k_max_batch_operations)
    throw HubError(400, "Too many operations: at most " + std::to_string(k_max_batch_operations) + " per batch");
  std::lock_guard lock(m_buckets.mutex());
  auto& bucket = require_bucket(ctx, id, Access::write);
  json failed = json::array();
  std::vector<std::string> touched;
  bool lied = false;
  for (const auto& op : operations) {
    const auto path = op.is_object() && op.contains("path") && op.at("path").is_string()
                        ? op.at("path").get<std::string>()
                        : std::string();
    if (auto error = bucket_apply(bucket, op, lied); !error.empty())
      failed.push_back({{"path", path}, {"error", error}});
    else
      touched.push_back(path);
  }
  if (lied)
    --m_buckets.lie().remaining;
  m_buckets.record(bucket, touched);
  const auto processed = operations.size();
  return json_reply(failed.empty() ? 200 : 422, json{{"success", failed.empty()},
                                                     {"processed", processed},
                                                     {"succeeded", processed - failed.size()},
                                                     {"failed", failed}});
}

Reply HubServer::bucket_resolve(RequestContext& ctx, const std::string& id, const std::string& path)
{
  BucketFile listed;
  {
    std::lock_guard lock(m_buckets.mutex());
    const auto& bucket = require_bucket(ctx, id, Access::read);
    const auto it = bucket.files.find(path);
    if (it == bucket.files.end())
      throw HubError(404, "Entry not found", "EntryNotFound");
    listed = it->second;
  }
  // The bucket's lock is not held while bytes are rebuilt or sent: objects never change.
  const auto& hash = listed.xet_hash;
  const auto file = m_xet ? m_xet->file(hash) : std::nullopt;
  Reply reply;
  reply.content_type = content_type_for(path);
  reply.header("X-Xet-Hash", hash);
  reply.header("ETag", "\"" + hash + "\""); // what the JS client's download info requires
  if (file) {
    // As for a repo's Xet file: where a Xet reader gets a token and the reconstruction, and
    // the JS client's `Accept: application/vnd.xet-fileinfo+json` answered with the info.
    const auto auth = ctx.base_url + "/api/buckets/" + id + "/xet-read-token";
    reply.header("Link", "<" + auth + ">; rel=\"xet-auth\", <" + ctx.base_url + "/cas/v1/reconstructions/" + hash
                           + ">; rel=\"xet-reconstruction-info\"");
    if (ctx.request.get_header_value("Accept").find("application/vnd.xet-fileinfo+json") != std::string::npos) {
      reply.header("X-Linked-Size", std::to_string(file->size));
      reply.content_type = "application/vnd.xet-fileinfo+json";
      reply.body =
        json{{"casUrl", ctx.base_url + "/cas"}, {"hash", hash}, {"refreshUrl", auth}, {"size", file->size}}.dump();
      return reply;
    }
  }
  auto object = m_buckets.object(hash);
  if (!object) {
    // Rebuilt from the CAS when first read (a bucket upload stores chunks, not files).
    if (!file)
      throw HubError(404, "Entry not found", "EntryNotFound");
    m_xet->reconstruct(*file, m_buckets.object_path(hash));
    object = m_buckets.object(hash);
  }
  return serve_file(ctx, std::move(reply), *object, listed.size);
}

// /_test/buckets/lie {"match", "count"}: the next `count` batches report the additions whose
// path contains `match` as done without applying them. /_test/buckets/inject-entry
// {"bucket", "path", "size", "xetHash"}: a raw listing entry, path unchecked.
Reply HubServer::bucket_control(RequestContext& ctx)
{
  const auto body = parse_body(ctx);
  std::lock_guard lock(m_buckets.mutex());
  if (ctx.segments.size() == 3 && ctx.segments[2] == "lie") {
    m_buckets.lie() = BatchLie{body.value("match", std::string()), body.value("count", 1)};
    return json_reply(200, json{{"ok", true}});
  }
  if (ctx.segments.size() == 3 && ctx.segments[2] == "inject-entry") {
    auto* bucket = m_buckets.find(body.value("bucket", std::string()));
    if (!bucket)
      throw HubError(404, "Bucket not found");
    const auto path = body.value("path", std::string());
    bucket->files[path] = BucketFile{body.value("size", std::uint64_t{0}),
                                     body.value("xetHash", std::string(k_empty_xet_hash)), 0, iso8601_now()};
    ++bucket->generation;
    m_buckets.record(*bucket, {path});
    return json_reply(200, json{{"ok", true}});
  }
  throw HubError(404, "Unknown control route");
}

std::function<Reply()> HubServer::route_buckets(RequestContext& ctx)
{
  const auto& s = ctx.segments;
  const auto& m = ctx.method;
  const bool get = m == "GET" || m == "HEAD";
  const auto named = [&ctx](std::string name, std::function<Reply()> handler) {
    ctx.route = std::move(name);
    return handler;
  };
  const auto rest = [&s](std::size_t from) {
    std::string out;
    for (std::size_t i = from; i < s.size(); ++i)
      out += (out.empty() ? "" : "/") + s[i];
    return out;
  };
  if (s[0] == "buckets" && s.size() >= 5 && s[3] == "resolve" && get) // {E}/buckets/{id}/resolve/{path}
    return named("resolve",
                 [this, &ctx, id = s[1] + "/" + s[2], path = rest(4)] { return bucket_resolve(ctx, id, path); });
  if (s[0] != "api" || s.size() < 4)
    return named("unknown", [] { return error_reply(404, "Sorry, we can't find the page you are looking for."); });
  const auto id = s[2] + "/" + s[3];
  const auto verb = s.size() > 4 ? s[4] : std::string();
  if (s.size() == 4 && m == "POST")
    return named("bucket_create", [this, &ctx, ns = s[2], name = s[3]] { return bucket_create(ctx, ns, name); });
  if (s.size() == 4 && get)
    return named("bucket_info", [this, &ctx, id] { return bucket_info(ctx, id); });
  if (s.size() == 4 && m == "DELETE")
    return named("bucket_delete", [this, &ctx, id] { return bucket_delete(ctx, id); });
  if (verb == "tree" && get)
    return named("bucket_tree", [this, &ctx, id, prefix = rest(5)] { return bucket_tree(ctx, id, prefix); });
  if (verb == "paths-info" && s.size() == 5 && m == "POST")
    return named("bucket_paths_info", [this, &ctx, id] { return bucket_paths_info(ctx, id); });
  if (verb == "batch" && s.size() == 5 && m == "POST")
    return named("bucket_batch", [this, &ctx, id] { return bucket_batch(ctx, id); });
  if ((verb == "xet-write-token" || verb == "xet-read-token") && s.size() == 5 && get)
    return named("xet_token",
                 [this, &ctx, id, write = verb == "xet-write-token"] { return bucket_xet_token(ctx, id, write); });
  return named("unknown", [] { return error_reply(404, "Sorry, we can't find the page you are looking for."); });
}

} // namespace testhub
