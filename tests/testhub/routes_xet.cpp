// Xet routes of the test Hub (on with --xet): the read/write token endpoints, the CAS under
// /cas (xorb and shard uploads, v1 and v2 reconstructions, signed xorb byte URLs), and the
// Hub-side glue: the LFS batch's "xet" transfer, the resolve headers and tree `xetHash`.

#include <map>
#include <shared_mutex>

#include "hubcache/util/fs.hpp"

#include "hub_server.hpp"
#include "hubcache/xet/shard.hpp"

namespace testhub {

std::string HubServer::xet_token_url(const RequestContext& ctx, const std::string& repo_id, const std::string& scope,
                                     const std::string& revision) const
{
  return ctx.base_url + "/api/models/" + repo_id + "/xet-" + scope + "-token/" + percent_encode(revision, false);
}

json HubServer::xet_token(const RequestContext& ctx, const std::string& repo_id, const std::string& scope) const
{
  const auto exp = unix_now() + m_options.xet_token_lifetime_s;
  const auto body = scope + "." + base64url_encode(repo_id) + "." + std::to_string(exp);
  return json{
    {"accessToken", "xet." + body + "." + sign("xet-token/" + body)}, {"exp", exp}, {"casUrl", ctx.base_url + "/cas"}};
}

Reply HubServer::xet_token_route(RequestContext& ctx, const std::string& repo_id, bool write)
{
  std::shared_lock lock(m_storage.mutex());
  require_repo(ctx, repo_id, write ? Access::write : Access::read);
  return json_reply(200, xet_token(ctx, repo_id, write ? "write" : "read"));
}

// The repo a CAS request's Xet token was issued for; 401 unless it is valid, unexpired and
// of the scope needed (a write token also reads).
std::string HubServer::xet_authorize(const RequestContext& ctx, bool write) const
{
  const auto header = ctx.request.get_header_value("Authorization");
  constexpr std::string_view bearer = "Bearer xet.";
  if (header.rfind(bearer, 0) != 0)
    throw HubError(401, "Missing or invalid Xet access token");
  const auto parts = split(std::string_view(header).substr(bearer.size()), '.');
  if (parts.size() != 4)
    throw HubError(401, "Malformed Xet access token");
  const auto body = parts[0] + "." + parts[1] + "." + parts[2];
  if (sign("xet-token/" + body) != parts[3])
    throw HubError(401, "Invalid Xet access token");
  if (std::stoll(parts[2]) <= unix_now())
    throw HubError(401, "Xet access token expired");
  if (write && parts[0] != "write")
    throw HubError(403, "This Xet token does not allow writes");
  const auto repo_id = base64url_decode(parts[1]);
  if (!repo_id)
    throw HubError(401, "Malformed Xet access token");
  return *repo_id;
}

Reply HubServer::cas_xorb_upload(RequestContext& ctx, const std::string& hash)
{
  xet_authorize(ctx, true);
  const auto body = ctx.body.read_all(hubcache::xet::max_xorb_input_bytes + 1);
  if (body.size() > hubcache::xet::max_xorb_input_bytes)
    throw HubError(400, "Xorb too large");
  const bool inserted = m_xet->put_xorb(hash, body);
  return json_reply(200, json{{"was_inserted", inserted}});
}

Reply HubServer::cas_shard_upload(RequestContext& ctx)
{
  const auto repo_id = xet_authorize(ctx, true);
  const auto body = ctx.body.read_all(hubcache::xet::max_shard_bytes + 1);
  if (body.size() > hubcache::xet::max_shard_bytes)
    throw HubError(400, "Shard too large");
  const bool for_bucket = repo_id.rfind("buckets/", 0) == 0;
  const auto files = m_xet->put_shard(body, for_bucket);
  if (for_bucket)
    return json_reply(200, json{{"result", static_cast<int>(!files.empty())}});
  std::shared_lock lock(m_storage.mutex());
  // The repo's LFS store learns the files (the bridge non-Xet readers download from); their
  // bytes are rebuilt when first read.
  if (const auto repo = m_storage.find_repo(repo_id)) {
    std::vector<std::pair<std::string, std::uint64_t>> objects;
    for (const auto& file : files)
      objects.emplace_back(file.sha256, file.size);
    m_storage.record_xet_objects(*repo, objects);
  }
  return json_reply(200, json{{"result", static_cast<int>(!files.empty())}});
}

namespace {

// The physical bytes [first, last] of chunks [start, end) of a stored xorb.
std::pair<std::uint64_t, std::uint64_t> xorb_bytes(const hubcache::xet::XorbLayout& layout, std::uint32_t start,
                                                   std::uint32_t end)
{
  const auto& last = layout.chunks[end - 1];
  return {layout.chunks[start].header_offset,
          last.header_offset + hubcache::xet::chunk_header_size + last.stored_size - 1};
}

// Chunk ranges of one xorb, sorted, overlapping and touching ones merged: what a v2 answer
// signs into one URL (one multi-range request per xorb).
std::vector<std::pair<std::uint32_t, std::uint32_t>> merged(std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges)
{
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (const auto& range : ranges) {
    if (!out.empty() && range.first <= out.back().second)
      out.back().second = std::max(out.back().second, range.second);
    else
      out.push_back(range);
  }
  return out;
}

} // namespace

// v1 ({terms, fetch_info}: a URL and byte range per term) or v2 ({terms, xorbs}: per xorb
// one URL signing all its ranges, fetched in one multi-range request) reconstruction of a
// file, or of the bytes a `Range: bytes=a-b` asks for.
Reply HubServer::cas_reconstruction(RequestContext& ctx, const std::string& file_id, int version)
{
  xet_authorize(ctx, false);
  const auto file = m_xet->file(file_id);
  if (!file)
    throw HubError(404, "File not found: " + file_id);
  ByteRange wanted{0, file->size == 0 ? 0 : file->size - 1};
  const auto range_header = ctx.request.get_header_value("Range");
  if (!range_header.empty() && parse_range(range_header, file->size, wanted) != RangeOutcome::satisfiable)
    throw HubError(416, "Range not satisfiable");
  json terms = json::array();
  json fetch = json::object();
  std::map<std::string, std::vector<std::pair<std::uint32_t, std::uint32_t>>> needed; // v2: per xorb
  std::uint64_t start = 0;
  std::optional<std::uint64_t> offset_into_first;
  for (const auto& term : file->terms) {
    const auto end = start + term.size;
    const bool overlaps = file->size > 0 && start <= wanted.last && end > wanted.first;
    if (overlaps) {
      if (!offset_into_first)
        offset_into_first = wanted.first - start;
      terms.push_back({{"hash", term.xorb},
                       {"unpacked_length", term.size},
                       {"range", {{"start", term.chunk_start}, {"end", term.chunk_end}}}});
      if (version == 1) {
        const auto [first_byte, last_byte] =
          xorb_bytes(m_xet->xorb_layout(term.xorb), term.chunk_start, term.chunk_end);
        const auto url = ctx.base_url + "/cas/xorb-data/" + term.xorb + "?sig=" + sign("xorb/" + term.xorb);
        auto& entries = fetch[term.xorb];
        if (entries.is_null())
          entries = json::array();
        entries.push_back({{"range", {{"start", term.chunk_start}, {"end", term.chunk_end}}},
                           {"url", url},
                           {"url_range", {{"start", first_byte}, {"end", last_byte}}}});
      } else {
        needed[term.xorb].emplace_back(term.chunk_start, term.chunk_end);
      }
    }
    start = end;
  }
  for (const auto& [xorb, chunk_ranges] : needed) {
    const auto layout = m_xet->xorb_layout(xorb);
    json ranges = json::array();
    std::string signed_set;
    for (const auto& [first, last] : merged(chunk_ranges)) {
      const auto [first_byte, last_byte] = xorb_bytes(layout, first, last);
      ranges.push_back(
        {{"chunks", {{"start", first}, {"end", last}}}, {"bytes", {{"start", first_byte}, {"end", last_byte}}}});
      signed_set += (signed_set.empty() ? "" : ",") + std::to_string(first_byte) + "-" + std::to_string(last_byte);
    }
    const auto url = ctx.base_url + "/cas/xorb-data/" + xorb + "?ranges=" + signed_set
                     + "&sig=" + sign("xorb/" + xorb + "/" + signed_set);
    fetch[xorb] = json::array({{{"url", url}, {"ranges", ranges}}});
  }
  json answer = {{"offset_into_first_range", offset_into_first.value_or(0)}, {"terms", terms}};
  answer[version == 1 ? "fetch_info" : "xorbs"] = fetch;
  return json_reply(200, answer);
}

// Xorb bytes at a signed URL. A v2 URL signs a set of ranges: the request must ask for
// exactly that set (as the real CAS's signed URLs), answered as multipart/byteranges when it
// holds several. A v1 URL signs the whole xorb.
Reply HubServer::cas_xorb_data(RequestContext& ctx, const std::string& hash)
{
  const auto ranges = ctx.param("ranges");
  if (!signature_ok(ctx, ranges ? "xorb/" + hash + "/" + *ranges : "xorb/" + hash) || !m_xet->has_xorb(hash))
    throw HubError(403, "Signature does not match");
  const auto path = m_xet->xorb_path(hash);
  Reply reply;
  reply.content_type = "application/octet-stream";
  if (!ranges)
    return serve_file(ctx, std::move(reply), path, stdfs::file_size(path));
  if (ctx.request.get_header_value("Range") != "bytes=" + *ranges)
    throw HubError(403, "The Range header does not match the signed ranges");
  const auto parts = split(*ranges, ',');
  if (parts.size() == 1)
    return serve_file(ctx, std::move(reply), path, stdfs::file_size(path));
  const auto content = hubcache::util::read_file(path, hubcache::xet::max_xorb_input_bytes);
  const auto boundary = "xet-" + random_hex(16);
  for (const auto& part : parts) {
    const auto dash = part.find('-');
    const auto first = std::stoull(part.substr(0, dash));
    const auto last = std::stoull(part.substr(dash + 1));
    if (last < first || last >= content.size())
      throw HubError(416, "Range not satisfiable");
    reply.body += "--" + boundary + "\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes " + part + "/"
                  + std::to_string(content.size()) + "\r\n\r\n" + content.substr(first, last - first + 1) + "\r\n";
  }
  reply.body += "--" + boundary + "--\r\n";
  reply.status = 206;
  reply.content_type = "multipart/byteranges; boundary=" + boundary;
  return reply;
}

std::function<Reply()> HubServer::route_cas(RequestContext& ctx)
{
  const auto& s = ctx.segments; // s[0] == "cas"
  const auto& m = ctx.method;
  const auto named = [&ctx](std::string name, std::function<Reply()> handler) {
    ctx.route = std::move(name);
    return handler;
  };
  const bool get = m == "GET" || m == "HEAD";
  if (s.size() == 5 && s[1] == "v1" && s[2] == "xorbs" && (s[3] == "default" || s[3] == "default-merkledb")
      && m == "POST")
    return named("cas_xorb", [this, &ctx] { return cas_xorb_upload(ctx, ctx.segments[4]); });
  if (s.size() == 3 && s[1] == "v1" && s[2] == "shards" && m == "POST")
    return named("cas_shard", [this, &ctx] { return cas_shard_upload(ctx); });
  if (s.size() == 4 && (s[1] == "v1" || s[1] == "v2") && s[2] == "reconstructions" && get)
    return named("cas_reconstruction",
                 [this, &ctx] { return cas_reconstruction(ctx, ctx.segments[3], ctx.segments[1] == "v1" ? 1 : 2); });
  if (s.size() == 5 && s[1] == "v1" && s[2] == "chunks" && (s[3] == "default" || s[3] == "default-merkledb") && get)
    return named("cas_chunks", [this, &ctx] {
      xet_authorize(ctx, false);
      auto answer = m_xet->dedup_answer(ctx.segments[4]);
      if (!answer)
        return error_reply(404, "Chunk not found");
      Reply reply;
      reply.content_type = "application/octet-stream";
      reply.body = std::move(*answer);
      return reply;
    });
  if (s.size() == 3 && s[1] == "xorb-data" && get)
    return named("cas_xorb_data", [this, &ctx] { return cas_xorb_data(ctx, ctx.segments[2]); });
  return named("unknown", [] { return error_reply(404, "Not found"); });
}

std::optional<json> HubServer::xet_upload_action(const RequestContext& ctx, const RepoMeta& repo) const
{
  if (!m_xet)
    return std::nullopt;
  const auto token = xet_token(ctx, repo.repo_id, "write");
  return json{{"href", xet_token_url(ctx, repo.repo_id, "write", "main")},
              {"header",
               {{"X-Xet-Cas-Url", token.at("casUrl")},
                {"X-Xet-Access-Token", token.at("accessToken")},
                {"X-Xet-Token-Expiration", std::to_string(token.at("exp").get<std::int64_t>())}}},
              {"expires_in", m_options.xet_token_lifetime_s}};
}

std::optional<std::string> HubServer::xet_hash_of(const FileEntry& entry) const
{
  if (!m_xet || !entry.is_lfs())
    return std::nullopt;
  return m_xet->file_hash_of_sha256(entry.lfs_sha256);
}

// Adds the Xet headers to a resolve answer for a Xet-stored file; answers the JS client's
// `Accept: application/vnd.xet-fileinfo+json` with the file info itself.
std::optional<Reply> HubServer::xet_resolve(const RequestContext& ctx, const RepoMeta& repo, const Commit& head,
                                            const FileEntry& entry, Reply& reply) const
{
  const auto hash = xet_hash_of(entry);
  if (!hash)
    return std::nullopt;
  const auto auth = xet_token_url(ctx, repo.repo_id, "read", head.id);
  const auto reconstruction = ctx.base_url + "/cas/v1/reconstructions/" + *hash;
  reply.header("X-Xet-Hash", *hash);
  reply.header("X-Xet-Refresh-Route", "/api/models/" + repo.repo_id + "/xet-read-token/" + head.id);
  reply.header("Link", "<" + auth + ">; rel=\"xet-auth\", <" + reconstruction + ">; rel=\"xet-reconstruction-info\"");
  const auto accept = ctx.request.get_header_value("Accept");
  if (accept.find("application/vnd.xet-fileinfo+json") == std::string::npos)
    return std::nullopt;
  Reply info;
  info.headers = reply.headers;
  info.header("X-Linked-Size", std::to_string(entry.size));
  info.header("X-Linked-ETag", "\"" + entry.lfs_sha256 + "\"");
  info.header("ETag", "\"" + entry.lfs_sha256 + "\"");
  info.content_type = "application/vnd.xet-fileinfo+json";
  info.body = json{{"casUrl", ctx.base_url + "/cas"},
                   {"hash", *hash},
                   {"refreshUrl", auth},
                   {"size", entry.size},
                   {"etag", entry.lfs_sha256}}
                .dump();
  return info;
}

} // namespace testhub
