// Git-LFS routes: the batch API (basic + HF multipart; xet with --xet when offered), the pre-signed-like
// upload/part/completion URLs, verify, and the CDN-like byte route LFS downloads redirect to.

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <unistd.h>

#include "hub_server.hpp"
#include "hubcache/util/fd.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/stream_writer.hpp"

namespace testhub {

namespace {

constexpr const char* k_lfs_type = "application/vnd.git-lfs+json";

// Deletes a temp file unless released.
struct TempFile {
  stdfs::path path;
  bool keep = false;
  ~TempFile()
  {
    if (keep)
      return;
    std::error_code ec;
    stdfs::remove(path, ec);
  }
};

struct StreamedDigest {
  std::uint64_t size = 0;
  std::string sha256;
  std::string md5;
};

// Streams the request body into `fd` from `offset` on, hashing on the way (the sha256 only
// when asked: a multipart part is checked by its MD5 ETag, the object's sha256 once
// complete). At most `limit` bytes are stored: a part that runs long is counted, and
// refused by its size, without spilling into the next part's bytes.
StreamedDigest receive_into(RequestBody& body, const hubcache::util::Fd& fd, const stdfs::path& what,
                            std::uint64_t offset, std::uint64_t limit, bool with_sha256 = true)
{
  // Like object storage, big uploads do not go through the page cache (see StreamWriter).
  hubcache::util::StreamWriter writer(fd, what, offset, limit);
  hubcache::util::Hasher sha256(hubcache::util::HashAlgorithm::sha256);
  hubcache::util::Hasher md5(hubcache::util::HashAlgorithm::md5);
  StreamedDigest digest;
  // The body arrives in small pieces; it is gathered in blocks so that, for a big object,
  // the MD5 of a block runs on a second core while this one takes its sha256 and writes
  // it (a multi-GB PUT otherwise spends most of its time hashing in one thread).
  constexpr std::size_t k_block = 4u << 20;
  std::string block;
  std::uint64_t stored = 0;
  const auto take_block = [&] {
    if (block.empty())
      return;
    std::future<void> other;
    if (block.size() == k_block)
      other = std::async(std::launch::async, [&] { md5.update(block.data(), block.size()); });
    else
      md5.update(block.data(), block.size());
    if (with_sha256)
      sha256.update(block.data(), block.size());
    const auto room = limit - std::min(limit, stored);
    const auto to_store = static_cast<std::size_t>(std::min<std::uint64_t>(room, block.size()));
    writer.write(std::string_view(block).substr(0, to_store));
    stored += to_store;
    if (other.valid())
      other.get();
    block.clear();
  };
  const bool complete = body.read([&](const char* data, std::size_t size) {
    digest.size += size;
    while (size > 0) {
      const auto n = std::min(size, k_block - block.size());
      block.append(data, n);
      data += n;
      size -= n;
      if (block.size() == k_block)
        take_block();
    }
    return true;
  });
  take_block();
  if (!complete)
    throw HubError(400, "Upload interrupted or unreadable body");
  writer.finish();
  if (with_sha256)
    digest.sha256 = sha256.hex_digest();
  digest.md5 = md5.hex_digest();
  return digest;
}

hubcache::util::Fd open_for_upload(const stdfs::path& path, int flags)
{
  hubcache::util::Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644));
  if (!fd)
    throw HubError(500, "Cannot store the upload: " + path.string() + ": " + std::strerror(errno));
  return fd;
}

std::string strip_quotes(std::string text)
{
  if (text.rfind("W/", 0) == 0)
    text = text.substr(2);
  text.erase(std::remove(text.begin(), text.end(), '"'), text.end());
  return text;
}

// Where a multipart upload's parts land, each at its offset.
constexpr const char* k_object_name = "object";

std::string part_file_name(std::uint64_t number)
{
  auto digits = std::to_string(number);
  return "part-" + std::string(digits.size() < 5 ? 5 - digits.size() : 0, '0') + digits;
}

json lfs_parse(RequestBody& body)
{
  try {
    return json::parse(body.read_all(64 * 1024 * 1024));
  } catch (const json::exception&) {
    throw HubError(400, "Invalid JSON in request body");
  }
}

Reply lfs_reply(int status, const json& body)
{
  auto reply = json_reply(status, body);
  reply.content_type = k_lfs_type;
  return reply;
}

} // namespace

Reply HubServer::lfs_batch(RequestContext& ctx, const std::string& repo_id)
{
  const auto body = lfs_parse(ctx.body);
  if (!body.is_object())
    throw HubError(400, "Expected a JSON object");
  const auto operation = body.value("operation", std::string{});
  if (operation != "upload" && operation != "download")
    throw HubError(400, "\"operation\" must be upload or download");
  const auto hash_algo = body.value("hash_algo", std::string{"sha256"});
  if (hash_algo != "sha256" && hash_algo != "sha_256")
    throw HubError(409, "Unsupported hash algorithm: " + hash_algo);
  bool multipart = true;
  bool xet = false;
  if (body.contains("transfers") && body.at("transfers").is_array()) {
    const auto& transfers = body.at("transfers");
    const auto has = [&](const char* name) {
      return std::find(transfers.begin(), transfers.end(), name) != transfers.end();
    };
    multipart = has("multipart");
    xet = m_xet && operation == "upload" && has("xet");
    if (!has("basic") && !multipart && !xet)
      throw HubError(409, "None of the requested transfers is supported (basic, multipart)");
  }
  if (!body.contains("objects") || !body.at("objects").is_array())
    throw HubError(400, "\"objects\" must be an array");
  if (body.at("objects").size() > 1000)
    throw HubError(413, "Too many objects (at most 1000 per batch)");

  std::shared_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, operation == "upload" ? Access::write : Access::read);
  json objects = json::array();
  for (const auto& object : body.at("objects")) {
    const auto oid = object.is_object() ? object.value("oid", std::string{}) : std::string{};
    const bool size_ok = object.is_object() && object.contains("size") && object.at("size").is_number_unsigned();
    if (!is_hex(oid, 64) || !size_ok) {
      objects.push_back(
        {{"oid", oid},
         {"size", 0},
         {"error",
          {{"code", 422},
           {"message", "Invalid object: oid must be a sha256 hex digest and size a non-negative integer"}}}});
      continue;
    }
    const auto size = object.at("size").get<std::uint64_t>();
    json result = {{"oid", oid}, {"size", size}, {"authenticated", true}};
    const bool stored = m_storage.has_lfs_object(repo, oid, size);
    if (operation == "download") {
      if (!stored) {
        result["error"] = {{"code", 404}, {"message", "Object does not exist"}};
      } else {
        const auto href = ctx.base_url + "/_lfs/cdn/" + repo.repo_id + "/" + oid + "/" + oid
                          + "?sig=" + sign("cdn/" + repo.repo_id + "/" + oid);
        result["actions"] = {{"download", {{"href", href}, {"expires_in", 3600}}}};
      }
    } else if (!stored && xet) {
      result["actions"] = {{"upload", *xet_upload_action(ctx, repo)}};
    } else if (!stored) {
      const auto chunk = std::max<std::uint64_t>(1, m_options.multipart_chunk_size);
      if (multipart && size > chunk) {
        const auto upload_id = random_hex(32);
        const auto parts = (size + chunk - 1) / chunk;
        const auto dir = m_storage.uploads_dir() / upload_id;
        stdfs::create_directories(dir);
        write_hub_file(
          dir / "meta.json",
          json{
            {"repo", repo.repo_id}, {"uid", repo.uid}, {"oid", oid}, {"size", size}, {"chunk", chunk}, {"parts", parts}}
            .dump());
        const auto sig = sign("multipart/" + upload_id);
        json header = {{"chunk_size", std::to_string(chunk)}};
        for (std::uint64_t n = 1; n <= parts; ++n) {
          const auto key = part_file_name(n).substr(5);
          header[key] = ctx.base_url + "/_lfs/multipart/" + upload_id + "/" + std::to_string(n) + "?sig=" + sig;
        }
        result["actions"] = {{"upload",
                              {{"href", ctx.base_url + "/_lfs/multipart/" + upload_id + "/complete?sig=" + sig},
                               {"header", header},
                               {"expires_in", 86400}}}};
      } else {
        const auto what = "upload/" + repo.repo_id + "/" + oid + "/" + std::to_string(size);
        result["actions"] = {{"upload",
                              {{"href", ctx.base_url + "/_lfs/upload/" + repo.repo_id + "/" + oid
                                          + "?size=" + std::to_string(size) + "&sig=" + sign(what)},
                               {"expires_in", 86400}}}};
      }
      if (m_options.offer_verify)
        result["actions"]["verify"] = {{"href", ctx.base_url + "/" + repo.repo_id + ".git/info/lfs/objects/verify"},
                                       {"expires_in", 86400}};
    }
    objects.push_back(result);
  }
  return lfs_reply(200, json{{"transfer", xet ? "xet" : "basic"}, {"objects", objects}, {"hash_algo", "sha256"}});
}

Reply HubServer::lfs_verify(RequestContext& ctx, const std::string& repo_id)
{
  const auto body = lfs_parse(ctx.body);
  std::shared_lock lock(m_storage.mutex());
  const auto repo = require_repo(ctx, repo_id, Access::read);
  const auto oid = body.value("oid", std::string{});
  const auto size = body.value("size", std::uint64_t{0});
  if (!is_hex(oid, 64) || !m_storage.has_lfs_object(repo, oid, size))
    throw HubError(404, "Object " + oid + " of size " + std::to_string(size) + " was not uploaded", "EntryNotFound");
  return lfs_reply(200, json{{"oid", oid}, {"size", size}});
}

Reply HubServer::lfs_upload(RequestContext& ctx, const std::string& repo_id, const std::string& oid)
{
  const auto size_text = ctx.param("size").value_or("");
  if (!signature_ok(ctx, "upload/" + repo_id + "/" + oid + "/" + size_text))
    throw HubError(403, "Signature does not match: request a new upload URL from the batch API");
  const auto expected_size = std::stoull(size_text);
  TempFile temp{m_storage.temp_path("upload")};
  const auto digest = [&] {
    auto fd = open_for_upload(temp.path, O_EXCL);
    auto received = receive_into(ctx.body, fd, temp.path, 0, expected_size);
    if (fd.close_checked() != 0)
      throw HubError(500, "Cannot store the upload");
    return received;
  }();
  if (digest.size != expected_size || digest.sha256 != oid)
    throw HubError(400, "Uploaded content does not match the announced object: expected sha256 " + oid + " and "
                          + std::to_string(expected_size) + " bytes, got sha256 " + digest.sha256 + " and "
                          + std::to_string(digest.size) + " bytes");
  std::shared_lock lock(m_storage.mutex());
  const auto repo = m_storage.find_repo(repo_id);
  if (!repo)
    throw HubError(404, "Repository not found", "RepoNotFound");
  if (!m_storage.has_lfs_object(*repo, oid, expected_size)) {
    m_storage.install_lfs_object(*repo, temp.path, oid);
    temp.keep = true;
  }
  Reply reply;
  reply.header("ETag", "\"" + digest.md5 + "\"");
  return reply;
}

Reply HubServer::lfs_part(RequestContext& ctx, const std::string& upload_id, const std::string& part)
{
  if (!is_hex(upload_id, 32) || !signature_ok(ctx, "multipart/" + upload_id))
    throw HubError(403, "Signature does not match: request a new upload URL from the batch API");
  const auto dir = m_storage.uploads_dir() / upload_id;
  const auto meta_text = hubcache::util::read_file_if_exists(dir / "meta.json");
  if (!meta_text)
    throw HubError(404, "NoSuchUpload: the upload does not exist or was completed", "EntryNotFound");
  const auto meta = json::parse(*meta_text);
  const auto parts = meta.at("parts").get<std::uint64_t>();
  const auto chunk = meta.at("chunk").get<std::uint64_t>();
  const auto size = meta.at("size").get<std::uint64_t>();
  std::uint64_t number = 0;
  try {
    number = std::stoull(part);
  } catch (const std::exception&) {
  }
  if (number < 1 || number > parts)
    throw HubError(400, "Invalid part number " + part);
  const auto expected = number < parts ? chunk : size - chunk * (parts - 1);
  // Like S3, parts land in place: each at its offset in the one object file of the upload,
  // so the completion only checks it, with no copy of the whole object. The part's ETag is
  // written once its bytes are: a failed upload (a client's abandoned attempt included,
  // which may still be running when its retry lands) leaves the ETag of the last complete
  // one. A range rewritten with other bytes and never finished cannot slip through: the
  // completion checks the whole object's sha256.
  const auto etag_path = dir / (part_file_name(number) + ".etag");
  const auto digest = [&] {
    auto object = open_for_upload(dir / k_object_name, 0);
    auto received = receive_into(ctx.body, object, dir / k_object_name, chunk * (number - 1), expected, false);
    if (object.close_checked() != 0)
      throw HubError(500, "Cannot store the upload");
    return received;
  }();
  if (digest.size != expected)
    throw HubError(400, "Part " + std::to_string(number) + " must hold " + std::to_string(expected) + " bytes, got "
                          + std::to_string(digest.size));
  write_hub_file(etag_path, digest.md5);
  Reply reply;
  reply.header("ETag", "\"" + digest.md5 + "\"");
  return reply;
}

Reply HubServer::lfs_complete(RequestContext& ctx, const std::string& upload_id)
{
  if (!is_hex(upload_id, 32) || !signature_ok(ctx, "multipart/" + upload_id))
    throw HubError(403, "Signature does not match: request a new upload URL from the batch API");
  const auto body = lfs_parse(ctx.body);
  const auto dir = m_storage.uploads_dir() / upload_id;
  const auto meta_text = hubcache::util::read_file_if_exists(dir / "meta.json");
  if (!meta_text)
    throw HubError(404, "NoSuchUpload: the upload does not exist or was completed", "EntryNotFound");
  const auto meta = json::parse(*meta_text);
  const auto oid = meta.at("oid").get<std::string>();
  const auto size = meta.at("size").get<std::uint64_t>();
  const auto parts = meta.at("parts").get<std::uint64_t>();
  if (body.value("oid", std::string{}) != oid)
    throw HubError(400, "Completion oid does not match the upload");
  if (!body.contains("parts") || !body.at("parts").is_array() || body.at("parts").size() != parts)
    throw HubError(400, "Completion must list all " + std::to_string(parts) + " parts");
  std::uint64_t expected_number = 1;
  for (const auto& item : body.at("parts")) {
    const auto number = item.value("partNumber", std::uint64_t{0});
    if (number != expected_number++)
      throw HubError(400, "Parts must be listed in order, starting at 1");
    const auto etag = hubcache::util::read_file_if_exists(dir / (part_file_name(number) + ".etag"));
    if (!etag)
      throw HubError(400, "Part " + std::to_string(number) + " was never uploaded");
    if (strip_quotes(item.value("etag", std::string{})) != *etag)
      throw HubError(400, "ETag of part " + std::to_string(number) + " does not match the uploaded part");
  }
  // The object must be what the batch announced.
  const auto object_path = dir / k_object_name;
  hubcache::util::Hasher sha256(hubcache::util::HashAlgorithm::sha256);
  const auto total = hubcache::util::read_file_chunks(
    object_path, [&](const char* data, std::size_t count) { sha256.update(data, count); });
  if (total != size || sha256.hex_digest() != oid)
    throw HubError(400, "Assembled object does not match: expected sha256 " + oid + " and " + std::to_string(size)
                          + " bytes");
  // Moved out of the upload folder first, so that folder can go whatever happens next.
  TempFile temp{m_storage.temp_path("complete")};
  stdfs::rename(object_path, temp.path);
  {
    std::shared_lock lock(m_storage.mutex());
    const auto repo = m_storage.find_repo(meta.at("repo").get<std::string>());
    if (!repo || repo->uid != meta.at("uid").get<std::string>())
      throw HubError(404, "Repository not found", "RepoNotFound");
    if (!m_storage.has_lfs_object(*repo, oid, size)) {
      m_storage.install_lfs_object(*repo, temp.path, oid);
      temp.keep = true;
    }
  }
  std::error_code ec;
  stdfs::remove_all(dir, ec);
  return lfs_reply(200, json{{"oid", oid}, {"size", size}});
}

Reply HubServer::lfs_cdn(RequestContext& ctx, const std::string& repo_id, const std::string& oid)
{
  if (!signature_ok(ctx, "cdn/" + repo_id + "/" + oid))
    throw HubError(403, "AccessDenied: the signature of this URL does not match");
  std::shared_lock lock(m_storage.mutex());
  const auto repo = m_storage.find_repo(repo_id);
  if (!repo)
    throw HubError(404, "Repository not found", "RepoNotFound");
  const auto path = m_storage.lfs_object_file(*repo, oid);
  if (!path)
    throw HubError(404, "Entry not found", "EntryNotFound");
  std::error_code ec;
  const auto size = stdfs::file_size(*path, ec);
  if (ec)
    throw HubError(404, "Entry not found", "EntryNotFound");
  Reply reply;
  reply.header("ETag", "\"" + oid + "\"");
  reply.content_type = "application/octet-stream";
  const auto name = ctx.segments.size() > 5 ? ctx.segments.back() : oid;
  reply.header("Content-Disposition",
               "inline; filename*=UTF-8''" + percent_encode(name, false) + "; filename=\"" + name + "\";");
  return serve_file(ctx, std::move(reply), *path, size);
}

} // namespace testhub
