// Account and repository routes: whoami, create/delete, repo info, branches, refs,
// settings, and the /_test control routes.

#include <algorithm>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "hub_server.hpp"
#include "hubcache/util/hash.hpp"

namespace testhub {

namespace {

std::string stable_id(const std::string& name)
{
  return hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha1, "id:" + name).substr(0, 24);
}

json parse_json_body(RequestContext& ctx, bool allow_empty = false)
{
  const auto text = ctx.body.read_all(16 * 1024 * 1024);
  if (text.empty() && allow_empty)
    return json::object();
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    throw HubError(400, "Invalid JSON in request body");
  }
}

std::string optional_string(const json& body, const char* key)
{
  if (!body.contains(key) || body.at(key).is_null())
    return {};
  if (!body.at(key).is_string())
    throw HubError(400, std::string("\"") + key + "\" must be a string");
  return body.at(key).get<std::string>();
}

// `private` (bool) and/or `visibility` (public|private); nullopt when neither is given.
std::optional<bool> requested_privacy(const json& body)
{
  std::optional<bool> from_private;
  std::optional<bool> from_visibility;
  if (body.contains("private") && !body.at("private").is_null()) {
    if (!body.at("private").is_boolean())
      throw HubError(400, "\"private\" must be a boolean");
    from_private = body.at("private").get<bool>();
  }
  if (body.contains("visibility") && !body.at("visibility").is_null()) {
    const auto visibility = optional_string(body, "visibility");
    if (visibility != "public" && visibility != "private" && visibility != "protected")
      throw HubError(400, "\"visibility\" must be one of public, private, protected");
    from_visibility = visibility != "public";
  }
  if (from_private && from_visibility && *from_private != *from_visibility)
    throw HubError(400, "\"private\" and \"visibility\" disagree");
  return from_private ? from_private : from_visibility;
}

const std::set<std::string>& known_expand_fields()
{
  static const std::set<std::string> fields = {"author",
                                               "baseModels",
                                               "cardData",
                                               "childrenModelCount",
                                               "config",
                                               "createdAt",
                                               "disabled",
                                               "downloads",
                                               "downloadsAllTime",
                                               "gated",
                                               "gguf",
                                               "inference",
                                               "inferenceProviderMapping",
                                               "lastModified",
                                               "library_name",
                                               "likes",
                                               "mask_token",
                                               "model-index",
                                               "pipeline_tag",
                                               "private",
                                               "resourceGroup",
                                               "safetensors",
                                               "sha",
                                               "siblings",
                                               "spaces",
                                               "tags",
                                               "transformersInfo",
                                               "trendingScore",
                                               "widgetData",
                                               "usedStorage",
                                               "xetEnabled"};
  return fields;
}

} // namespace

Reply HubServer::whoami(RequestContext& ctx)
{
  const auto& user = require_user(ctx);
  json orgs = json::array();
  for (const auto& [org, members] : m_options.orgs) {
    if (std::find(members.begin(), members.end(), user.name) == members.end())
      continue;
    orgs.push_back({{"type", "org"},
                    {"id", stable_id(org)},
                    {"name", org},
                    {"fullname", org},
                    {"avatarUrl", "/avatars/org.svg"},
                    {"roleInOrg", user.role == "write" ? "write" : "read"}});
  }
  return json_reply(200, json{{"type", "user"},
                              {"id", stable_id(user.name)},
                              {"name", user.name},
                              {"fullname", user.name},
                              {"email", user.name + "@example.com"},
                              {"emailVerified", true},
                              {"canPay", false},
                              {"isPro", false},
                              {"periodEnd", nullptr},
                              {"avatarUrl", "/avatars/user.svg"},
                              {"orgs", orgs},
                              {"auth",
                               {{"type", "access_token"},
                                {"accessToken",
                                 {{"displayName", "test-token-" + user.role},
                                  {"role", user.role},
                                  {"createdAt", "2026-01-01T00:00:00.000Z"}}}}}});
}

Reply HubServer::create_repo(RequestContext& ctx)
{
  const auto body = parse_json_body(ctx);
  if (!body.is_object())
    throw HubError(400, "Expected a JSON object");
  const auto& user = require_user(ctx);
  auto name = optional_string(body, "name");
  auto ns = optional_string(body, "organization");
  if (ns.empty() && name.find('/') != std::string::npos) {
    ns = name.substr(0, name.find('/'));
    name = name.substr(name.find('/') + 1);
  }
  if (ns.empty())
    ns = user.name;
  const auto type = optional_string(body, "type");
  if (!type.empty() && type != "model")
    throw HubError(400, "The test Hub only hosts model repos (got type \"" + type + "\")");
  const bool is_private = requested_privacy(body).value_or(false);
  if (!is_valid_repo_name_part(name) || !is_valid_repo_name_part(ns))
    throw HubError(400, "Invalid repo name: \"" + ns + "/" + name
                          + "\". Use letters, digits, '-', '_' and '.', not starting or ending with '-' or '.', "
                            "without '--' or '..', at most 96 characters.");
  if (!is_member(user, ns) || user.role != "write")
    throw HubError(403, "You don't have the rights to create a model under the namespace \"" + ns + "\"");
  const auto repo_id = ns + "/" + name;
  const auto url = ctx.base_url + "/" + repo_id;
  std::unique_lock lock(m_storage.mutex());
  if (m_storage.find_repo(repo_id)) {
    const auto message = "You already created this model repo: " + repo_id;
    auto reply = json_reply(409, json{{"error", message}, {"url", url}});
    reply.header("X-Error-Message", message);
    return reply;
  }
  const auto meta = m_storage.create_repo(ns, name, is_private, user.name);
  return json_reply(200, json{{"url", url}, {"name", repo_id}, {"id", meta.uid}});
}

Reply HubServer::delete_repo(RequestContext& ctx)
{
  const auto body = parse_json_body(ctx);
  if (!body.is_object())
    throw HubError(400, "Expected a JSON object");
  const auto type = optional_string(body, "type");
  if (!type.empty() && type != "model")
    throw HubError(404, "Repository not found", "RepoNotFound");
  auto name = optional_string(body, "name");
  auto ns = optional_string(body, "organization");
  if (ns.empty() && name.find('/') != std::string::npos) {
    ns = name.substr(0, name.find('/'));
    name = name.substr(name.find('/') + 1);
  }
  if (ns.empty() && ctx.user)
    ns = ctx.user->name;
  const auto repo_id = ns + "/" + name;
  std::unique_lock lock(m_storage.mutex());
  require_user(ctx);
  require_repo(ctx, repo_id, Access::write);
  m_storage.delete_repo(repo_id);
  Reply reply;
  reply.content_type = "text/plain; charset=utf-8";
  return reply;
}

Reply HubServer::repo_settings(RequestContext& ctx, const std::string& repo_id)
{
  const auto body = parse_json_body(ctx);
  std::unique_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::write);
  if (const auto privacy = requested_privacy(body))
    m_storage.set_private(repo, *privacy);
  return json_reply(200, json::object());
}

Reply HubServer::model_info(RequestContext& ctx, const std::string& repo_id, const std::string& revision)
{
  std::shared_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::read);
  const auto head = resolve_commit(repo, revision, true);
  auto expand = ctx.params("expand");
  for (const auto& value : ctx.params("expand[]"))
    expand.push_back(value);
  for (const auto& field : expand) {
    if (!known_expand_fields().count(field))
      throw HubError(400, "\"expand\" must be one of the model fields (got \"" + field + "\")");
  }
  const auto wanted = [&](const char* field) {
    return expand.empty() || std::find(expand.begin(), expand.end(), field) != expand.end();
  };
  // The file list is built only when asked for: like the Hub, an answer restricted by
  // `expand` costs the same whatever the size of the repo.
  json siblings = json::array();
  std::uint64_t used = 0;
  if (wanted("siblings") || wanted("usedStorage")) {
    const bool blobs = ctx.flag("blobs");
    for (const auto& [path, entry] : head->files) {
      json sibling = {{"rfilename", path}};
      if (blobs) {
        sibling["size"] = entry.size;
        sibling["blobId"] = entry.oid;
        if (entry.is_lfs())
          sibling["lfs"] = {{"sha256", entry.lfs_sha256}, {"size", entry.size}, {"pointerSize", entry.pointer_size}};
      }
      used += entry.size;
      siblings.push_back(std::move(sibling));
    }
  }
  json full = {{"_id", repo.uid},
               {"id", repo.repo_id},
               {"modelId", repo.repo_id},
               {"author", repo.ns},
               {"sha", head->id},
               {"lastModified", iso8601(head->date)},
               {"createdAt", iso8601(repo.created)},
               {"private", repo.is_private},
               {"disabled", false},
               {"gated", false},
               {"downloads", 0},
               {"downloadsAllTime", 0},
               {"likes", 0},
               {"trendingScore", 0},
               {"library_name", nullptr},
               {"pipeline_tag", nullptr},
               {"tags", json::array()},
               {"cardData", json::object()},
               {"siblings", std::move(siblings)},
               {"spaces", json::array()},
               {"usedStorage", used},
               {"xetEnabled", false}};
  if (expand.empty())
    return json_reply(200, full);
  json partial = {{"_id", repo.uid}, {"id", repo.repo_id}};
  for (const auto& field : expand)
    partial[field] = full.contains(field) ? full[field] : json(nullptr);
  return json_reply(200, partial);
}

Reply HubServer::create_branch(RequestContext& ctx, const std::string& repo_id, const std::string& branch)
{
  const auto body = parse_json_body(ctx, true);
  std::unique_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::write);
  if (branch.empty() || branch.find("..") != std::string::npos || branch.find(' ') != std::string::npos
      || branch == "HEAD" || branch.rfind("refs/", 0) == 0 || is_hex(branch, 40))
    throw HubError(400, "Invalid branch name: " + branch);
  if (body.value("emptyBranch", false))
    throw HubError(400, "emptyBranch is not supported by the test Hub");
  const auto refs = m_storage.branches(repo);
  if (refs.count(branch) && !body.value("overwrite", false))
    throw HubError(409, "Reference already exists: refs/heads/" + branch);
  const auto start = body.contains("startingPoint") && body.at("startingPoint").is_string()
                       ? body.at("startingPoint").get<std::string>()
                       : std::string("main");
  const auto target = resolve_commit(repo, start, true);
  m_storage.create_branch(repo, branch, target->id);
  return json_reply(200, json::object());
}

Reply HubServer::delete_branch(RequestContext& ctx, const std::string& repo_id, const std::string& branch)
{
  ctx.body.drain();
  std::unique_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::write);
  const auto refs = m_storage.branches(repo);
  if (!refs.count(branch))
    throw HubError(404, "Invalid rev id: " + branch, "RevisionNotFound");
  if (branch == "main")
    throw HubError(403, "You cannot delete the default branch (main)");
  m_storage.delete_branch(repo, branch);
  return json_reply(200, json::object());
}

Reply HubServer::list_refs(RequestContext& ctx, const std::string& repo_id)
{
  std::shared_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::read);
  json branches = json::array();
  for (const auto& [name, target] : m_storage.branches(repo))
    branches.push_back({{"name", name}, {"ref", "refs/heads/" + name}, {"targetCommit", target}});
  json body = {{"branches", branches}, {"converts", json::array()}, {"tags", json::array()}};
  if (ctx.flag("include_prs"))
    body["pullRequests"] = json::array();
  return json_reply(200, body);
}

Reply HubServer::list_commits(RequestContext& ctx, const std::string& repo_id, const std::string& revision)
{
  std::shared_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::read);
  const auto head = resolve_commit(repo, revision, true);
  json commits = json::array();
  for (const auto& c : m_storage.history(repo, head->id, 1000)) {
    commits.push_back({{"id", c->id},
                       {"title", c->title},
                       {"message", c->message},
                       {"authors", json::array({json{{"user", c->author}}})},
                       {"date", iso8601(c->date)}});
  }
  return json_reply(200, commits);
}

// ---- /_test control routes -----------------------------------------------------------------

Reply HubServer::control(RequestContext& ctx)
{
  const auto& s = ctx.segments;
  const auto& m = ctx.method;
  if (s.size() == 2 && s[1] == "faults") {
    if (m == "POST") {
      auto fault = parse_fault(parse_json_body(ctx));
      const auto id = m_faults.add(fault);
      return json_reply(200, json{{"id", id}, {"faults", m_faults.describe()}});
    }
    if (m == "DELETE") {
      ctx.body.drain();
      m_faults.clear();
      return json_reply(200, json{{"faults", json::array()}});
    }
    if (m == "GET")
      return json_reply(200, json{{"faults", m_faults.describe()}});
  }
  if (s.size() == 2 && s[1] == "stats" && (m == "GET" || m == "HEAD"))
    return json_reply(200, m_stats.snapshot());
  if (s.size() == 3 && s[1] == "stats" && s[2] == "reset" && m == "POST") {
    ctx.body.drain();
    m_stats.reset();
    return json_reply(200, m_stats.snapshot());
  }
  if (s.size() == 2 && s[1] == "clock" && m == "POST") {
    const auto body = parse_json_body(ctx);
    if (!body.contains("offset_seconds") || !body.at("offset_seconds").is_number_integer())
      throw HubError(400, "clock needs an integer \"offset_seconds\"");
    set_commit_clock_offset(body.at("offset_seconds").get<std::int64_t>());
    return json_reply(200, json{{"offset_seconds", commit_clock_offset()}});
  }
  if (s.size() == 2 && s[1] == "inject-tree-entry" && m == "POST")
    return inject_tree_entry(ctx);
  if (s.size() == 3 && s[1] == "buckets" && m == "POST")
    return bucket_control(ctx);
  if (s.size() == 2 && s[1] == "health")
    return json_reply(200, json{{"ok", true}});
  throw HubError(404, "Unknown control route");
}

Reply HubServer::inject_tree_entry(RequestContext& ctx)
{
  const auto body = parse_json_body(ctx);
  const auto repo_id = body.value("repo", std::string{});
  const auto path = body.value("path", std::string{});
  const auto branch = body.value("branch", std::string{"main"});
  if (path.empty())
    throw HubError(400, "inject-tree-entry needs \"path\"");
  std::unique_lock lock(m_storage.mutex());
  const auto repo = m_storage.find_repo(repo_id);
  if (!repo)
    throw HubError(404, "Repository not found", "RepoNotFound");
  CommitPlan plan;
  plan.summary = "Inject raw tree entry";
  plan.author = repo->author;
  plan.operations.push_back({CommitOperation::Kind::add_regular, path, body.value("content", std::string{}), {}, 0});
  const auto commit = m_storage.apply_commit(*repo, branch, plan);
  return json_reply(200, json{{"commitOid", commit->id}, {"path", path}});
}

} // namespace testhub
