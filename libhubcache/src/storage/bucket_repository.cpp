#include "hubcache/storage/bucket_repository.hpp"

#include "file_download_target.hpp"

#include "hubcache/error.hpp"
#include "hubcache/http/listing_bounds.hpp"
#include "hubcache/storage/download_check.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/xet/file_hasher.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <future>

namespace hubcache::storage {

namespace stdfs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::size_t k_tree_page = 5000; // what hf-mount asks for

bool is_xet_hash(std::string_view text)
{
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// A download target that also computes the Xet file hash of what it receives.
class XetHashingTarget final : public hub::DownloadTarget {
public:
  explicit XetHashingTarget(hub::DownloadTarget& inner) : m_inner(inner) {}
  void expect(std::uint64_t size) override { m_inner.expect(size); }
  void restart() override
  {
    m_inner.restart();
    m_hasher.reset();
  }
  void write(std::string_view chunk) override
  {
    m_inner.write(chunk);
    m_hasher.update(chunk);
  }
  util::FileDigests digests() override { return m_inner.digests(); }
  std::string xet_hash() { return m_hasher.finish().hex(); }

private:
  hub::DownloadTarget& m_inner;
  xet::FileHasher m_hasher;
};

json parse_answer(const std::string& body, std::string_view what)
{
  auto parsed = json::parse(body, nullptr, false);
  if (parsed.is_discarded()) {
    throw RemoteError("the Hub's answer to " + std::string(what) + " is not JSON", "retry later");
  }
  return parsed;
}

BucketRepository::Entry parse_entry(const json& item)
{
  BucketRepository::Entry entry;
  entry.type = item.at("type").get<std::string>();
  entry.path = item.at("path").get<std::string>();
  if (entry.type == "file") {
    entry.size = item.at("size").get<std::uint64_t>();
    entry.xet_hash = item.value("xetHash", std::string());
  }
  return entry;
}

std::vector<BucketRepository::Entry> parse_entries(const json& parsed, std::string_view what)
{
  if (!parsed.is_array()) {
    throw RemoteError("the Hub's answer to " + std::string(what) + " is not a JSON array", "retry later");
  }
  std::vector<BucketRepository::Entry> entries;
  try {
    for (const auto& item : parsed) {
      entries.push_back(parse_entry(item));
    }
  } catch (const json::exception&) {
    throw RemoteError("the Hub's answer to " + std::string(what) + " has entries of an unknown shape", "retry later");
  }
  return entries;
}

} // namespace

BucketRepository::BucketRepository(std::string bucket_id, std::string prefix, hub::HubConfig config)
  : m_bucket_id(std::move(bucket_id)), m_prefix(std::move(prefix)), m_api(std::move(config))
{}

std::string BucketRepository::spec() const
{
  return "hf://buckets/" + m_bucket_id + (m_prefix.empty() ? "" : "/" + m_prefix);
}

std::string BucketRepository::describe() const
{
  std::string text = "bucket " + spec().substr(13);
  if (m_api.config().endpoint != hub::k_default_hub_endpoint) {
    text += " on " + m_api.config().endpoint;
  }
  return text;
}

std::string BucketRepository::key_of(std::string_view path) const
{
  if (m_prefix.empty()) {
    return std::string(path);
  }
  return path.empty() ? m_prefix : m_prefix + "/" + std::string(path);
}

std::string BucketRepository::bucket_url(std::string_view route) const
{
  auto url = m_api.config().endpoint + "/api/buckets/" + http::url_encode(m_bucket_id, true);
  return route.empty() ? url : url + "/" + std::string(route);
}

hub::HubErrorContext BucketRepository::context(std::string action, bool write) const
{
  return hub::HubErrorContext{std::move(action), spec(), {}, write, m_api.has_token()};
}

void BucketRepository::require_token(std::string_view action) const
{
  m_api.require_online();
  if (!m_api.has_token()) {
    throw TokenMissing("cannot " + std::string(action) + " " + describe() + ": no Hugging Face token is set",
                       ErrorFacts{spec(), false, true});
  }
}

// No bucket of that id for this token: says so, and names the model repo of the same name
// when there is one (buckets and model repos are separate namespaces on the Hub).
void BucketRepository::throw_missing(bool write)
{
  std::string message = "there is no Storage Bucket " + m_bucket_id + " readable with your token";
  if (m_api.repo_info(m_bucket_id)) {
    message += "; " + m_bucket_id + " is a model repo (use it as --repo-id " + m_bucket_id + ")";
  }
  throw RepoNotFound(message, ErrorFacts{spec(), m_api.has_token(), write});
}

std::string BucketRepository::read_info()
{
  return m_info.get([this] { return fetch_info(); }, [](const std::string&) { return true; });
}

std::string BucketRepository::fetch_info()
{
  http::Request request;
  request.url = bucket_url({});
  request.headers = m_api.auth_headers();
  auto response = m_api.send(request);
  if (response.ok()) {
    return std::move(response.body);
  }
  if (response.status == 404 || (response.status == 401 && !m_api.has_token())) {
    if (m_api.has_token()) {
      m_api.whoami(); // a rejected token is said as such, not as a missing bucket
    }
    throw_missing(false);
  }
  hub::throw_hub_error(response, context("read " + describe()), m_api.config().token);
}

bool BucketRepository::exists()
{
  read_info();
  return true;
}

std::string BucketRepository::create(const RepoCreateOptions& options)
{
  require_token("create");
  http::Request request;
  request.method = "POST";
  request.url = bucket_url({});
  request.headers = m_api.auth_headers();
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = json{{"private", options.is_private}}.dump();
  auto response = m_api.send(request);
  if (response.status == 409) {
    if (!options.exist_ok) {
      throw RepoAlreadyExists("the Storage Bucket " + m_bucket_id + " already exists", ErrorFacts{spec()});
    }
  } else if (!response.ok()) {
    hub::throw_hub_error(response, context("create " + describe(), true), m_api.config().token);
  }
  return spec();
}

std::optional<std::string> BucketRepository::revision()
{
  // A bucket has no revision. What stands for one is what its info says of its content
  // (updatedAt, size, totalFiles: every batch moves them), and the hour it is read in, so
  // that a listing remembered under it is trusted for an hour at most: the bucket API
  // documents none of these fields as a version (docs/buckets.md says what that costs).
  const auto info = parse_answer(read_info(), "bucket info");
  if (!info.is_object()) {
    throw RemoteError("the Hub's answer to bucket info is not a JSON object", "retry later");
  }
  const auto field = [&info](const char* name) {
    const auto it = info.find(name);
    return it == info.end() ? std::string("-") : it->dump();
  };
  if (field("totalFiles") == "0") {
    return std::nullopt; // nothing in it yet, as a repo without a commit
  }
  const auto hour = std::chrono::duration_cast<std::chrono::hours>(std::chrono::system_clock::now().time_since_epoch());
  util::Hasher hasher(util::HashAlgorithm::sha1);
  hasher.update(field("updatedAt") + '\0' + field("size") + '\0' + field("totalFiles"));
  // "<content digest>.<hour>": a parent-revision check compares the content alone.
  return hasher.hex_digest() + "." + std::to_string(hour.count());
}

std::string_view bucket_content_of(std::string_view revision)
{
  return revision.substr(0, revision.find('.'));
}

std::vector<BucketRepository::Entry> BucketRepository::list_tree(std::string_view folder_key, bool recursive)
{
  std::string url = bucket_url("tree");
  if (!folder_key.empty()) {
    url += "/" + http::url_encode(folder_key, false);
  }
  url += std::string("?recursive=") + (recursive ? "true" : "false") + "&limit=" + std::to_string(k_tree_page);
  auto origin = http::url_origin(m_api.config().endpoint);
  http::ListingBounds bounds("the listing of " + describe(), m_api.config().listing);
  auto fetch = [&](const std::string& page_url) {
    http::Request request;
    request.url = page_url;
    if (http::url_origin(page_url) == origin) {
      request.headers = m_api.auth_headers(); // the token never leaves the Hub's origin
    }
    auto response = m_api.send(request);
    if (response.status == 404) {
      throw_missing(false);
    }
    if (!response.ok()) {
      hub::throw_hub_error(response, context("list the files of " + describe()), m_api.config().token);
    }
    return response;
  };
  std::vector<Entry> entries;
  bounds.next_page(url);
  auto response = fetch(url);
  while (true) {
    // The next page (named by the Link header) is asked for while this one is parsed: a
    // listing of tens of thousands of files is as long as its round trips, not their sum
    // with the parsing.
    std::string next_url;
    if (auto link = response.headers.get("link")) {
      if (auto next = http::parse_link_next(*link)) {
        next_url = http::resolve_location(response.url, *next);
      }
    }
    std::future<http::Response> next_page;
    if (!next_url.empty()) {
      bounds.next_page(next_url);
      next_page = std::async(std::launch::async, fetch, next_url);
    }
    auto page = parse_entries(parse_answer(response.body, "a bucket listing"), "a bucket listing");
    bounds.add_entries(page.size());
    entries.insert(entries.end(), std::make_move_iterator(page.begin()), std::make_move_iterator(page.end()));
    if (!next_page.valid()) {
      break;
    }
    response = next_page.get();
  }
  return entries;
}

// The RepoFile of a listed file below `folder` (a key), or nullopt for what is no file, or
// not one that can be installed safely (noted, see take_skipped).
std::optional<RepoFile> BucketRepository::to_repo_file(const Entry& entry, std::string_view folder)
{
  if (entry.type != "file") {
    return std::nullopt;
  }
  auto base = folder.empty() ? std::string() : std::string(folder) + "/";
  if (!entry.path.starts_with(base)) {
    throw IntegrityError("the Hub listed '" + entry.path + "' under the folder '" + std::string(folder) + "' of "
                           + describe(),
                         "the bucket or the server is corrupt: report it to the bucket's owner");
  }
  auto own_base = m_prefix.empty() ? std::string() : m_prefix + "/";
  auto path = std::string_view(entry.path).substr(own_base.size());
  if (!is_valid_path_in_repo(path)) {
    note_skipped_path(std::string(path));
    return std::nullopt;
  }
  if (!is_xet_hash(entry.xet_hash)) {
    note_skipped_path(std::string(path), "has no valid Xet hash in the listing");
    return std::nullopt;
  }
  return RepoFile{std::string(path), entry.size, {}, {}, std::string(k_etag_prefix) + entry.xet_hash};
}

std::vector<RepoFile> BucketRepository::list_files(std::string_view prefix)
{
  auto folder = folder_of_prefix(prefix);
  if (!folder.empty()) {
    validate_path_in_repo(folder);
  }
  auto folder_key = key_of(folder);
  std::vector<RepoFile> files;
  for (const auto& entry : list_tree(folder_key, true)) {
    if (auto file = to_repo_file(entry, folder_key)) {
      files.push_back(std::move(*file));
    }
  }
  std::sort(files.begin(), files.end(), [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
  return files;
}

std::vector<std::string> BucketRepository::list_folders(std::string_view prefix)
{
  auto folder = folder_of_prefix(prefix);
  if (!folder.empty()) {
    validate_path_in_repo(folder);
  }
  auto folder_key = key_of(folder);
  auto start = folder_key.empty() ? 0 : folder_key.size() + 1;
  std::vector<std::string> names;
  for (const auto& entry : list_tree(folder_key, false)) {
    if (entry.type != "directory") {
      continue;
    }
    if (entry.path.size() <= start || (!folder_key.empty() && !entry.path.starts_with(folder_key + "/"))
        || entry.path.find('/', start) != std::string::npos) {
      throw IntegrityError("the Hub listed '" + entry.path + "' as a direct sub-folder of '" + folder + "' in "
                             + describe(),
                           "the bucket or the server is corrupt: report it to the bucket's owner");
    }
    auto name = entry.path.substr(start);
    if (is_valid_path_in_repo(name)) { // an unsafe folder is never descended into
      names.push_back(std::move(name));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<BucketRepository::Entry> BucketRepository::paths_info(const std::vector<std::string>& keys)
{
  std::vector<Entry> entries;
  for (std::size_t begin = 0; begin < keys.size(); begin += k_paths_info_batch) {
    auto end = std::min(keys.size(), begin + k_paths_info_batch);
    http::Request request;
    request.method = "POST";
    request.url = bucket_url("paths-info");
    request.headers = m_api.auth_headers();
    request.headers.emplace_back("Content-Type", "application/json");
    request.body = json{{"paths", std::vector<std::string>(keys.begin() + static_cast<std::ptrdiff_t>(begin),
                                                           keys.begin() + static_cast<std::ptrdiff_t>(end))}}
                     .dump();
    auto response = m_api.send(request);
    if (response.status == 404) {
      throw_missing(false);
    }
    if (!response.ok()) {
      hub::throw_hub_error(response, context("read file information in " + describe()), m_api.config().token);
    }
    auto page = parse_entries(parse_answer(response.body, "paths-info"), "paths-info");
    entries.insert(entries.end(), std::make_move_iterator(page.begin()), std::make_move_iterator(page.end()));
  }
  return entries;
}

std::optional<RepoFile> BucketRepository::stat(std::string_view path)
{
  validate_path_in_repo(path);
  auto key = key_of(path);
  for (const auto& entry : paths_info({key})) {
    if (entry.path == key) {
      auto folder = key.substr(0, key.rfind('/') == std::string::npos ? 0 : key.rfind('/'));
      return to_repo_file(entry, folder);
    }
  }
  return std::nullopt;
}

std::string BucketRepository::read_file(std::string_view path)
{
  validate_path_in_repo(path);
  auto listed = stat(path);
  if (!listed) {
    throw EntryNotFound("'" + std::string(path) + "' is not in " + describe());
  }
  hub::StringDownloadTarget inner;
  XetHashingTarget target(inner);
  auto error_context = context("download '" + std::string(path) + "' from " + describe());
  error_context.path = std::string(path);
  try {
    m_api.download_from(m_api.config().endpoint + "/buckets/" + http::url_encode(m_bucket_id, true) + "/resolve/"
                          + http::url_encode(key_of(path), true),
                        error_context, target);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(std::string(path) + " in " + describe() + ": " + error.what());
  }
  util::FileDigests got;
  got.size = inner.content.size();
  got.etag = std::string(k_etag_prefix) + target.xet_hash();
  if (reread_through_xet(*listed, got, inner)) {
    got.size = inner.content.size();
  }
  check_download(*listed, got, "'" + std::string(path) + "' from " + describe());
  return std::move(inner.content);
}

void BucketRepository::download_file(std::string_view path, const stdfs::path& destination,
                                     const util::ProgressCallback& progress, bool flush)
{
  validate_path_in_repo(path);
  auto listed = stat(path);
  if (!listed) {
    throw EntryNotFound("'" + std::string(path) + "' is not in " + describe());
  }
  download_listed(*listed, destination, progress, flush);
}

util::FileDigests BucketRepository::download_listed(const RepoFile& listed, const stdfs::path& destination,
                                                    const util::ProgressCallback& progress, bool flush)
{
  validate_path_in_repo(listed.path);
  FileDownloadTarget file(destination);
  XetHashingTarget target(file);
  auto error_context = context("download '" + listed.path + "' from " + describe());
  error_context.path = listed.path;
  hub::ListedContent content{listed.size, {}, {}};
  auto url = m_api.config().endpoint + "/buckets/" + http::url_encode(m_bucket_id, true) + "/resolve/"
             + http::url_encode(key_of(listed.path), true);
  auto result = m_api.download_from(url, error_context, target, progress, &content);
  util::FileDigests digests{.size = result.size,
                            .sha256 = result.sha256,
                            .git_blob_sha1 = result.git_blob_sha1,
                            .etag = std::string(k_etag_prefix) + target.xet_hash()};
  if (reread_through_xet(listed, digests, file)) {
    auto reread = file.digests();
    digests = {
      .size = reread.size, .sha256 = reread.sha256, .git_blob_sha1 = reread.git_blob_sha1, .etag = listed.etag};
  }
  check_download(listed, digests, "'" + listed.path + "' from " + describe());
  file.commit(flush);
  return digests;
}

// The Xet hash of a file is the one its writer's chunks give: a writer that cuts them
// otherwise than the spec's chunker (the JS client does, for some files) lists a hash the
// same bytes, chunked here, do not give. Such a download (the right size, another hash) is
// read again through the CAS, which checks every chunk against the listed hash; true when
// it was (the target then holds the checked bytes, `got.etag` the listed hash).
bool BucketRepository::reread_through_xet(const RepoFile& listed, util::FileDigests& got, hub::DownloadTarget& target)
{
  const auto& reader = m_api.config().xet_reader;
  if (got.size != listed.size || got.etag == listed.etag || !listed.etag.starts_with(k_etag_prefix) || !reader) {
    return false;
  }
  target.restart();
  target.expect(listed.size); // streamed as a download is, not one write per chunk
  reader(hub::XetFileRef{listed.etag.substr(k_etag_prefix.size()), bucket_url("xet-read-token"), listed.size},
         [&target](std::string_view chunk) { target.write(chunk); });
  got.etag = listed.etag;
  return true;
}

void BucketRepository::check_writable()
{
  require_token("push to");
  exists();
  // A write token is what every write starts with: asking for one changes nothing.
  http::Request request;
  request.url = bucket_url("xet-write-token");
  request.headers = m_api.auth_headers();
  auto response = m_api.send(request);
  if (response.status == 401 || response.status == 403) {
    throw WriteAccessDenied("You do not have write access to " + describe(), ErrorFacts{spec(), true, true});
  }
  if (!response.ok()) {
    hub::throw_hub_error(response, context("check write access to " + describe(), true), m_api.config().token);
  }
}

} // namespace hubcache::storage
