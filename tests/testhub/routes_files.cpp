// File routes: tree listing (paginated), paths-info, resolve/raw downloads, preupload and
// the NDJSON commit.

#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <shared_mutex>

#include "commit_payload.hpp"
#include "commit_tree.hpp"
#include "hub_server.hpp"
#include "hubcache/util/fs.hpp"

namespace testhub {

namespace {

std::string strip_trailing_slashes(std::string path)
{
  while (!path.empty() && path.back() == '/')
    path.pop_back();
  return path;
}

// Pre-order: a directory comes right before its content.
bool tree_order(const std::string& a, const std::string& b)
{
  const auto n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] == b[i])
      continue;
    const auto x = a[i] == '/' ? 0 : static_cast<unsigned char>(a[i]);
    const auto y = b[i] == '/' ? 0 : static_cast<unsigned char>(b[i]);
    return x < y;
  }
  return a.size() < b.size();
}

// gitattributes/gitignore style: a pattern without '/' matches the file name at any depth.
bool glob_matches(std::string pattern, const std::string& path)
{
  if (pattern.empty())
    return false;
  if (pattern.front() == '/')
    pattern.erase(0, 1);
  const bool anchored = pattern.find('/') != std::string::npos;
  if (!anchored)
    return fnmatch(pattern.c_str(), base_name(path).c_str(), 0) == 0;
  // `**` crosses directories, which plain fnmatch without FNM_PATHNAME allows for `*` too.
  const int flags = pattern.find("**") != std::string::npos ? 0 : FNM_PATHNAME;
  if (fnmatch(pattern.c_str(), path.c_str(), flags) == 0)
    return true;
  // A directory pattern ignores everything below it.
  return fnmatch((pattern + "/*").c_str(), path.c_str(), 0) == 0;
}

std::vector<std::string> lfs_patterns(const std::string& gitattributes)
{
  std::vector<std::string> patterns;
  for (const auto& line : split(gitattributes, '\n')) {
    if (line.empty() || line[0] == '#')
      continue;
    const auto space = line.find_first_of(" \t");
    if (space == std::string::npos)
      continue;
    if (line.find("filter=lfs", space) != std::string::npos)
      patterns.push_back(line.substr(0, space));
  }
  return patterns;
}

std::vector<std::string> ignore_patterns(const std::string& gitignore)
{
  std::vector<std::string> patterns;
  for (auto line : split(gitignore, '\n')) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.pop_back();
    if (line.empty() || line[0] == '#' || line[0] == '!')
      continue;
    if (line.back() == '/')
      line.pop_back();
    patterns.push_back(line);
  }
  return patterns;
}

json parse_json(const std::string& text)
{
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    throw HubError(400, "Invalid JSON in request body");
  }
}

std::string content_disposition(const std::string& name)
{
  return "inline; filename*=UTF-8''" + percent_encode(name, false) + "; filename=\"" + name + "\";";
}

} // namespace

std::shared_ptr<const Commit> HubServer::resolve_commit(const RepoMeta& repo, const std::string& revision, bool)
{
  const auto id = m_storage.resolve_revision(repo, revision);
  if (!id)
    throw HubError(404, "Invalid rev id: " + revision, "RevisionNotFound");
  return m_storage.commit(repo, *id);
}

json HubServer::entry_json(const RepoMeta& repo, const Commit& head, const std::string& path, bool is_directory,
                           bool expand)
{
  json entry;
  if (is_directory) {
    entry = {{"type", "directory"}, {"oid", head.directory_oids.at(path)}, {"size", 0}, {"path", path}};
  } else {
    const auto& file = head.files.at(path);
    entry = {{"type", "file"}, {"oid", file.oid}, {"size", file.size}, {"path", path}};
    if (file.is_lfs())
      entry["lfs"] = {{"oid", file.lfs_sha256}, {"size", file.size}, {"pointerSize", file.pointer_size}};
    if (const auto xet_hash = xet_hash_of(file))
      entry["xetHash"] = *xet_hash;
  }
  if (expand) {
    // The last commit that changed this entry: walk back while the parent has the same oid.
    const auto oid_in = [&](const Commit& c) -> std::string {
      if (is_directory) {
        const auto it = c.directory_oids.find(path);
        return it == c.directory_oids.end() ? std::string{} : it->second;
      }
      const auto it = c.files.find(path);
      return it == c.files.end() ? std::string{} : it->second.oid;
    };
    const auto oid = oid_in(head);
    std::shared_ptr<const Commit> last = m_storage.commit(repo, head.id);
    while (!last->parent.empty()) {
      auto parent = m_storage.commit(repo, last->parent);
      if (oid_in(*parent) != oid)
        break;
      last = parent;
    }
    entry["lastCommit"] = {{"id", last->id}, {"title", last->title}, {"date", iso8601(last->date)}};
    if (!is_directory)
      entry["securityFileStatus"] = {{"status", "unscanned"}};
  }
  return entry;
}

std::shared_ptr<const HubServer::TreeEntries> HubServer::tree_entries(const Commit& head, const std::string& path,
                                                                      bool recursive)
{
  const auto key = head.id + '\n' + path + '\n' + (recursive ? "r" : "-");
  {
    std::lock_guard lock(m_tree_cache_mutex);
    for (const auto& [cached_key, cached] : m_tree_cache)
      if (cached_key == key)
        return cached;
  }
  auto entries = std::make_shared<TreeEntries>(); // path, is_directory
  const auto prefix = path.empty() ? std::string{} : path + "/";
  const auto wanted = [&](const std::string& candidate) {
    if (!path.empty() && candidate.rfind(prefix, 0) != 0)
      return false;
    return recursive || parent_dir(candidate) == path;
  };
  for (const auto& [dir, unused] : head.directory_oids)
    if (!dir.empty() && dir != path && wanted(dir))
      entries->emplace_back(dir, true);
  for (const auto& [file, unused] : head.files)
    if (wanted(file))
      entries->emplace_back(file, false);
  std::sort(entries->begin(), entries->end(),
            [](const auto& a, const auto& b) { return tree_order(a.first, b.first); });
  std::lock_guard lock(m_tree_cache_mutex);
  if (m_tree_cache.size() >= 8)
    m_tree_cache.erase(m_tree_cache.begin());
  m_tree_cache.emplace_back(key, entries);
  return entries;
}

Reply HubServer::list_tree(RequestContext& ctx, const std::string& repo_id, const std::string& revision,
                           const std::string& raw_path)
{
  std::shared_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::read);
  auto head = resolve_commit(repo, revision, true);
  const auto path = strip_trailing_slashes(raw_path);
  const bool recursive = ctx.flag("recursive");
  const bool expand = ctx.flag("expand");

  std::size_t offset = 0;
  if (const auto cursor = ctx.param("cursor")) {
    const auto decoded = base64url_decode(*cursor);
    json state;
    try {
      state = json::parse(decoded.value_or(""));
      offset = state.at("o").get<std::size_t>();
      head = m_storage.commit(repo, state.at("c").get<std::string>());
    } catch (const std::exception&) {
      throw HubError(400, "Invalid cursor");
    }
  }
  if (!path.empty() && !head->directory_oids.count(path))
    throw HubError(404, "Entry not found: " + path, "EntryNotFound");

  const auto listing = tree_entries(*head, path, recursive);
  const auto& entries = *listing;

  const auto page_size = std::max<std::size_t>(1, m_options.page_size);
  json page = json::array();
  for (std::size_t i = offset; i < entries.size() && i < offset + page_size; ++i)
    page.push_back(entry_json(repo, *head, entries[i].first, entries[i].second, expand));
  auto reply = json_reply(200, page);
  if (offset + page_size < entries.size()) {
    const auto cursor = base64url_encode(json{{"o", offset + page_size}, {"c", head->id}}.dump());
    std::string query;
    const auto question = ctx.target.find('?');
    if (question != std::string::npos) {
      for (const auto& pair : split(std::string_view(ctx.target).substr(question + 1), '&')) {
        if (pair.empty() || pair.rfind("cursor=", 0) == 0)
          continue;
        query += pair + "&";
      }
    }
    reply.header("Link", "<" + ctx.base_url + ctx.path + "?" + query + "cursor=" + cursor + ">; rel=\"next\"");
  }
  return reply;
}

Reply HubServer::paths_info(RequestContext& ctx, const std::string& repo_id, const std::string& revision)
{
  const auto text = ctx.body.read_all(16 * 1024 * 1024);
  std::vector<std::string> paths;
  bool expand = false;
  const auto type = ctx.request.get_header_value("Content-Type");
  const bool is_json = type.rfind("application/json", 0) == 0 || (!text.empty() && text.front() == '{');
  if (is_json) {
    const auto body = parse_json(text);
    if (!body.is_object() || !body.contains("paths") || !body.at("paths").is_array())
      throw HubError(400, "\"paths\" must be an array of strings");
    for (const auto& p : body.at("paths")) {
      if (!p.is_string())
        throw HubError(400, "\"paths\" must be an array of strings");
      paths.push_back(p.get<std::string>());
    }
    if (body.contains("expand"))
      expand = body.at("expand").is_boolean() ? body.at("expand").get<bool>() : false;
  } else {
    for (const auto& pair : split(text, '&')) {
      if (pair.empty())
        continue;
      const auto eq = pair.find('=');
      const auto key = percent_decode(pair.substr(0, eq), true);
      const auto value = eq == std::string::npos ? std::string{} : percent_decode(pair.substr(eq + 1), true);
      if (key == "paths" || key == "paths[]")
        paths.push_back(value);
      if (key == "expand")
        expand = is_truthy(value);
    }
  }
  if (paths.size() > 1000)
    throw HubError(413, "Too many paths (at most 1000 per call)");
  std::shared_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::read);
  const auto head = resolve_commit(repo, revision, true);
  json result = json::array();
  for (const auto& requested : paths) {
    const auto path = strip_trailing_slashes(requested);
    if (head->files.count(path))
      result.push_back(entry_json(repo, *head, path, false, expand));
    else if (!path.empty() && head->directory_oids.count(path))
      result.push_back(entry_json(repo, *head, path, true, expand));
  }
  return json_reply(200, result);
}

Reply HubServer::serve_file(RequestContext& ctx, Reply reply, const stdfs::path& file, std::uint64_t size)
{
  reply.replace_header("Accept-Ranges", "bytes");
  const auto range_header = ctx.request.get_header_value("Range");
  ByteRange range;
  const auto outcome = range_header.empty() ? RangeOutcome::none : parse_range(range_header, size, range);
  if (outcome == RangeOutcome::unsatisfiable) {
    if (size == 0) { // the JS client asks bytes=0-0 of every file, empty ones included
      reply.status = 200;
      reply.header("Content-Range", "bytes */0");
      return reply;
    }
    reply.status = 416;
    reply.header("Content-Range", "bytes */" + std::to_string(size));
    reply.content_type = "text/plain; charset=utf-8";
    reply.body.clear();
    return reply;
  }
  if (outcome == RangeOutcome::satisfiable) {
    reply.status = 206;
    reply.header("Content-Range", "bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) + "/"
                                    + std::to_string(size));
    reply.file = FileSlice{file, range.first, range.last - range.first + 1};
    return reply;
  }
  reply.status = 200;
  reply.file = FileSlice{file, 0, size};
  return reply;
}

Reply HubServer::resolve(RequestContext& ctx, const std::string& repo_id, const std::string& revision,
                         const std::string& raw_path, bool raw)
{
  std::shared_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::read);
  const auto head = resolve_commit(repo, revision, false);
  const auto it = head->files.find(raw_path);
  if (it == head->files.end()) {
    auto reply = error_reply(404, "Entry not found", false, "EntryNotFound");
    reply.header("X-Repo-Commit", head->id);
    return reply;
  }
  const auto& entry = it->second;
  Reply reply;
  reply.header("X-Repo-Commit", head->id);
  reply.header("Accept-Ranges", "bytes");
  if (entry.is_lfs() && !raw) {
    if (auto info = xet_resolve(ctx, repo, *head, entry, reply))
      return std::move(*info);
    const auto what = "cdn/" + repo.repo_id + "/" + entry.lfs_sha256;
    const auto location = ctx.base_url + "/_lfs/cdn/" + repo.repo_id + "/" + entry.lfs_sha256 + "/"
                          + percent_encode(base_name(raw_path), false) + "?sig=" + sign(what);
    reply.status = 302;
    reply.header("Location", location);
    reply.header("X-Linked-Etag", "\"" + entry.lfs_sha256 + "\"");
    reply.header("X-Linked-Size", std::to_string(entry.size));
    reply.header("Cache-Control", "no-store");
    reply.content_type = "text/plain; charset=utf-8";
    reply.body = "Found. Redirecting to " + location;
    return reply;
  }
  const auto size = entry.is_lfs() ? entry.pointer_size : entry.size;
  reply.header("ETag", "\"" + entry.oid + "\"");
  reply.header("Content-Disposition", content_disposition(base_name(raw_path)));
  reply.content_type = content_type_for(base_name(raw_path));
  return serve_file(ctx, std::move(reply), m_storage.entry_blob(repo, entry), size);
}

Reply HubServer::preupload(RequestContext& ctx, const std::string& repo_id, const std::string& revision)
{
  const auto body = parse_json(ctx.body.read_all(64 * 1024 * 1024));
  if (!body.is_object() || !body.contains("files") || !body.at("files").is_array())
    throw HubError(400, "\"files\" must be an array");
  if (body.at("files").size() > 1000)
    throw HubError(413, "Too many files (at most 1000 per call)");
  std::shared_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::write);
  const auto head = resolve_commit(repo, revision, true);
  const auto repo_text = [&](const std::string& path) -> std::string {
    const auto it = head->files.find(path);
    if (it == head->files.end() || it->second.is_lfs())
      return {};
    return hubcache::util::read_file_if_exists(m_storage.blob_path(repo, it->second.oid)).value_or("");
  };
  const auto attributes = body.contains("gitAttributes") && body.at("gitAttributes").is_string()
                            ? body.at("gitAttributes").get<std::string>()
                            : repo_text(".gitattributes");
  const auto ignore = body.contains("gitIgnore") && body.at("gitIgnore").is_string()
                        ? body.at("gitIgnore").get<std::string>()
                        : repo_text(".gitignore");
  const auto lfs = lfs_patterns(attributes);
  const auto ignored = ignore_patterns(ignore);
  json files = json::array();
  for (const auto& file : body.at("files")) {
    if (!file.is_object() || !file.contains("path") || !file.at("path").is_string())
      throw HubError(400, "Each file needs a \"path\"");
    const auto path = file.at("path").get<std::string>();
    if (!is_valid_repo_path(path))
      throw HubError(400, "Invalid path: '" + path + "'");
    // A float or negative size would be undefined behaviour to convert; the Hub answers 400.
    if (file.contains("size") && !file.at("size").is_number_unsigned())
      throw HubError(400, "Invalid size for '" + path + "': must be a non-negative integer");
    const auto size = file.value("size", std::uint64_t{0});
    const auto sample = base64_decode(file.value("sample", std::string{})).value_or("").substr(0, k_binary_sample_size);
    const bool matches_lfs = std::any_of(lfs.begin(), lfs.end(), [&](const auto& p) { return glob_matches(p, path); });
    const bool is_lfs = size > m_options.lfs_threshold || matches_lfs || sample.find('\0') != std::string::npos;
    const bool should_ignore =
      std::any_of(ignored.begin(), ignored.end(), [&](const auto& p) { return glob_matches(p, path); });
    json result = {{"path", path}, {"uploadMode", is_lfs ? "lfs" : "regular"}, {"shouldIgnore", should_ignore}};
    if (const auto existing = head->files.find(path); existing != head->files.end())
      result["oid"] = existing->second.is_lfs() ? existing->second.lfs_sha256 : existing->second.oid;
    files.push_back(result);
  }
  return json_reply(200, json{{"commitOid", head->id}, {"files", files}});
}

Reply HubServer::commit(RequestContext& ctx, const std::string& repo_id, const std::string& revision)
{
  if (ctx.flag("create_pr")) {
    ctx.body.drain();
    throw HubError(400, "Pull requests are not supported by the test Hub");
  }
  const auto started = std::chrono::steady_clock::now();
  {
    std::shared_lock lock(m_storage.mutex());
    const auto repo = require_repo(ctx, repo_id, Access::write);
    if (auto refusal = m_limits.refuse_commit(repo.uid)) {
      ctx.body.drain();
      return std::move(*refusal);
    }
  }
  // Spool the body to disk: regular files arrive base64-encoded inside it.
  const auto spool = m_storage.temp_path("commit");
  struct Remover {
    stdfs::path path;
    ~Remover()
    {
      std::error_code ec;
      stdfs::remove(path, ec);
    }
  } remover{spool};
  {
    std::ofstream out(spool, std::ios::binary);
    ctx.body.read([&](const char* data, std::size_t size) {
      out.write(data, static_cast<std::streamsize>(size));
      return static_cast<bool>(out);
    });
    if (!out)
      throw HubError(500, "Cannot spool the commit body");
  }
  std::ifstream in(spool, std::ios::binary);
  auto plan = read_commit_payload(in, [&](const std::string& sha256) -> std::uint64_t {
    std::shared_lock lock(m_storage.mutex());
    if (const auto repo = m_storage.find_repo(repo_id))
      return m_storage.lfs_object_size(*repo, sha256).value_or(0);
    return 0;
  });

  m_limits.check_commit_size(plan.operations.size());
  m_limits.simulate_commit_work(plan.operations.size());

  std::unique_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::write);
  plan.author = ctx.user->name;
  auto branch = revision == "HEAD" ? std::string("main") : revision;
  if (branch.rfind("refs/heads/", 0) == 0)
    branch = branch.substr(11);
  const auto commit =
    m_storage.apply_commit(repo, branch, plan, [&](const Commit& next, const Storage::TreeChange& change) {
      m_limits.check_tree(next, change, branch);
    });
  m_limits.record_commit(repo.uid);
  lock.unlock();
  // Past the request's time budget the commit still lands, but the client's answer is
  // the gateway's timeout: it must find out from the repo what happened.
  const auto budget = m_limits.options().commit_timeout;
  if (budget.count() > 0 && std::chrono::steady_clock::now() - started > budget)
    return error_reply(504, "Gateway Time-out: the commit request took longer than " + std::to_string(budget.count())
                              + " ms");
  auto reply = json_reply(200, json{{"success", true},
                                    {"commitOid", commit->id},
                                    {"commitUrl", ctx.base_url + "/" + repo.repo_id + "/commit/" + commit->id},
                                    {"hookOutput", ""}});
  if (const auto warning = m_limits.repo_files_warning(*commit))
    reply.header("Warning", *warning);
  return reply;
}

} // namespace testhub
