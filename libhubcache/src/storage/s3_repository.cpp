#include "hubcache/storage/s3_repository.hpp"

#include "repo_format.hpp"

#include "hubcache/layout/names.hpp"
#include "hubcache/storage/publish_order.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <unistd.h>

namespace hubcache::storage {

namespace {

constexpr std::string_view k_private_dir = ".neuron-cache";
using layout::k_version_prefix;
constexpr std::size_t k_probe_keys = 100;

} // namespace

S3Repository::S3Repository(aws::S3Url url, std::shared_ptr<aws::S3Client> client)
  : m_url(std::move(url)), m_client(std::move(client))
{}

std::string S3Repository::spec() const
{
  return m_url.to_string();
}

std::string S3Repository::describe() const
{
  return "S3 repo " + m_url.to_string();
}

std::string S3Repository::key_of(std::string_view path) const
{
  return m_url.prefix.empty() ? std::string(path) : m_url.prefix + "/" + std::string(path);
}

std::string S3Repository::marker_key() const
{
  return key_of(std::string(k_private_dir) + "/repo.json");
}

std::optional<std::string> S3Repository::foreign_key()
{
  auto base = m_url.prefix.empty() ? std::string() : m_url.prefix + "/";
  for (const auto& object : m_client->list_objects(m_url.bucket, base, k_probe_keys)) {
    auto path = std::string_view(object.key).substr(base.size());
    auto top = path.substr(0, path.find('/'));
    bool ours = (top.starts_with(k_version_prefix) && path.find('/') != std::string_view::npos) || top == k_private_dir
                || path == "lock";
    if (!ours) {
      return object.key;
    }
  }
  return std::nullopt;
}

bool S3Repository::exists()
{
  // A missing bucket is not "no repo": it is worth its own message (RepoNotFound).
  if (auto marker = m_client->get_object(m_url.bucket, marker_key(), 1 << 16)) {
    auto parsed = nlohmann::json::parse(*marker, nullptr, false);
    return parsed.is_object() && parsed.value("format", "") == k_repo_format_name;
  }
  // A compile cache the Neuron SDK wrote (no marker) is a repo as it is.
  auto base = m_url.prefix.empty() ? std::string() : m_url.prefix + "/";
  auto probe = m_client->list_objects(m_url.bucket, base, 1);
  return !probe.empty() && !foreign_key();
}

void S3Repository::require_repo()
{
  if (exists()) {
    return;
  }
  auto state = m_client->head_bucket(m_url.bucket);
  if (state == aws::BucketState::missing) {
    throw RepoNotFound("S3 bucket " + m_url.bucket + " does not exist",
                       "create the repo first, or check the bucket name");
  }
  if (auto foreign = foreign_key()) {
    throw RepoNotFound(spec() + " is not a cache repo: it holds something else than a Neuron compile cache (" + *foreign
                         + ")",
                       "use an empty prefix or a compile cache prefix");
  }
  throw RepoNotFound("cache repo " + spec() + " does not exist", "create it first");
}

std::string S3Repository::create(const RepoCreateOptions& options)
{
  auto state = m_client->head_bucket(m_url.bucket);
  if (state == aws::BucketState::forbidden) {
    throw AuthError("S3 bucket " + m_url.bucket + " exists but the AWS credentials from "
                      + m_client->credential_source() + " may not use it",
                    "use a bucket of your account, or other credentials");
  }
  if (state == aws::BucketState::missing) {
    m_client->create_bucket(m_url.bucket);
  }
  if (auto marker = m_client->head_object(m_url.bucket, marker_key())) {
    if (!options.exist_ok) {
      throw RepoAlreadyExists("cache repo " + spec() + " already exists", ErrorFacts{spec()});
    }
    return spec();
  }
  if (auto foreign = foreign_key()) {
    throw RepoAlreadyExists(spec() + " holds something else than a Neuron compile cache (" + *foreign
                              + "): it is not made a cache repo",
                            "choose an empty prefix, or one that holds a compile cache");
  }
  nlohmann::json marker = {{"format", k_repo_format_name},
                           {"version", 2},
                           {"layout", "neuron compile cache (neuronxcc-<version>/MODULE_<key>+<flags>/...)"}};
  m_client->put_bytes(m_url.bucket, marker_key(), marker.dump(2) + "\n");
  return spec();
}

std::optional<std::string> S3Repository::revision()
{
  require_repo();
  auto base = m_url.prefix.empty() ? std::string() : m_url.prefix + "/";
  util::Hasher hasher(util::HashAlgorithm::sha1);
  for (const auto& object : m_client->list_objects(m_url.bucket, base)) {
    hasher.update(object.key + '\0' + std::to_string(object.size) + '\0' + object.etag + '\n');
  }
  return hasher.hex_digest();
}

std::vector<RepoFile> S3Repository::list_files(std::string_view prefix)
{
  require_repo();
  auto folder = folder_of_prefix(prefix);
  if (!folder.empty()) {
    validate_path_in_repo(folder);
  }
  auto base = m_url.prefix.empty() ? std::string() : m_url.prefix + "/";
  auto listed = m_client->list_objects(m_url.bucket, base + (folder.empty() ? "" : folder + "/"));
  std::vector<RepoFile> files;
  files.reserve(listed.size());
  for (const auto& object : listed) {
    auto path = object.key.substr(base.size());
    // Folder placeholders (keys ending in '/') and names no file system could hold are
    // not files of the cache; our own private keys are not either.
    if (!is_valid_path_in_repo(path) || path.starts_with(std::string(k_private_dir) + "/")) {
      continue;
    }
    files.push_back(RepoFile{std::move(path), object.size, {}, {}, object.etag, object.last_modified});
  }
  return files;
}

std::optional<RepoFile> S3Repository::stat(std::string_view path)
{
  validate_path_in_repo(path);
  auto object = m_client->head_object(m_url.bucket, key_of(path));
  if (!object) {
    return std::nullopt;
  }
  // An encrypted object's ETag says nothing of its bytes: not given as a checksum.
  return RepoFile{std::string(path), object->size, {}, {}, object->etag_is_checksum ? object->etag : std::string()};
}

std::string S3Repository::read_file(std::string_view path)
{
  validate_path_in_repo(path);
  auto content = m_client->get_object(m_url.bucket, key_of(path), util::k_default_read_limit);
  if (!content) {
    throw EntryNotFound(std::string(path) + " does not exist in " + describe());
  }
  return std::move(*content);
}

void S3Repository::download_file(std::string_view path, const std::filesystem::path& destination,
                                 const util::ProgressCallback& progress, bool flush)
{
  validate_path_in_repo(path);
  try {
    m_client->download(m_url.bucket, key_of(path), destination, std::nullopt, progress, flush);
  } catch (const EntryNotFound&) {
    throw EntryNotFound(std::string(path) + " does not exist in " + describe());
  }
}

util::FileDigests S3Repository::download_listed(const RepoFile& listed, const std::filesystem::path& destination,
                                                const util::ProgressCallback& progress, bool flush)
{
  validate_path_in_repo(listed.path);
  auto key = key_of(listed.path);
  try {
    return m_client->download(m_url.bucket, key, destination, aws::S3Object{key, listed.size, listed.etag, true},
                              progress, flush);
  } catch (const EntryNotFound&) {
    throw EntryNotFound(listed.path + " does not exist in " + describe());
  }
}

std::vector<std::uint64_t> S3Repository::etag_part_sizes() const
{
  return m_client->etag_part_sizes();
}

void S3Repository::check_writable()
{
  require_repo();
  // A probe object, removed at once: the one way to know S3 takes our writes.
  auto probe =
    key_of(std::string(k_private_dir) + "/write-probe." + util::host_name() + "." + std::to_string(::getpid()));
  m_client->put_bytes(m_url.bucket, probe, "");
  m_client->delete_object(m_url.bucket, probe);
}

namespace {

// The size of each addition, read before anything goes up: the progress's total, the report's sizes.
std::vector<std::uint64_t> addition_sizes(const CommitRequest& request)
{
  std::vector<std::uint64_t> sizes(request.additions.size());
  for (std::size_t i = 0; i < request.additions.size(); ++i) {
    const auto& source = request.additions[i].source;
    if (!source.is_file()) {
      sizes[i] = source.bytes().size();
      continue;
    }
    std::error_code ec;
    auto file = source.file_for(request.additions[i].path_in_repo);
    sizes[i] = std::filesystem::file_size(file, ec);
    if (ec) {
      throw IoError("cannot read " + file + ": " + ec.message());
    }
  }
  return sizes;
}

// Interrupted while the entry files went up: the markers (`markers`, indexes of additions)
// of the entries whose files did not all land stay unpublished.
void drop_markers_of_unfinished(const CommitRequest& request, const std::vector<std::size_t>& entry_files,
                                const std::vector<char>& uploaded, std::vector<std::size_t>& markers)
{
  std::set<std::string_view> unfinished;
  for (auto i : entry_files) {
    if (uploaded[i] == 0) {
      unfinished.insert(entry_folder(request.additions[i].path_in_repo));
    }
  }
  std::erase_if(markers, [&](std::size_t marker) {
    return unfinished.contains(entry_folder(request.additions[marker].path_in_repo));
  });
}

std::vector<std::string> not_uploaded(const CommitRequest& request, const std::vector<char>& uploaded)
{
  std::vector<std::string> remaining;
  for (std::size_t i = 0; i < request.additions.size(); ++i) {
    if (uploaded[i] == 0) {
      remaining.push_back(request.additions[i].path_in_repo);
    }
  }
  return remaining;
}

// What the repo holds of each addition after the commit: its size, the ETag S3 gave it and
// the digests known of its bytes.
std::vector<RepoFile> committed_files(const CommitRequest& request, const std::vector<std::uint64_t>& sizes,
                                      std::vector<std::string>&& etags)
{
  std::vector<RepoFile> files;
  files.reserve(request.additions.size());
  for (std::size_t i = 0; i < request.additions.size(); ++i) {
    const auto& addition = request.additions[i];
    RepoFile file{addition.path_in_repo, sizes[i], {}, {}, std::move(etags[i])};
    if (!addition.source.is_file()) {
      file.sha256 = util::hex_digest(util::HashAlgorithm::sha256, addition.source.bytes());
    } else if (addition.digests && addition.digests->size == sizes[i]) {
      // S3 verified the payload against this sha256 (x-amz-content-sha256) on a single PUT.
      file.sha256 = addition.digests->sha256;
      file.git_blob_sha1 = addition.digests->git_blob_sha1;
    }
    files.push_back(std::move(file));
  }
  return files;
}

} // namespace

void S3Repository::check_commit(const CommitRequest& request)
{
  if (request.message.empty()) {
    throw InvalidArgument("a commit needs a message");
  }
  for (const auto& addition : request.additions) {
    validate_path_in_repo(addition.path_in_repo);
    if (addition.path_in_repo.starts_with(std::string(k_private_dir) + "/")) {
      throw InvalidArgument("'" + addition.path_in_repo + "' is inside the repo's private folder");
    }
  }
  for (const auto& deletion : request.deletions) {
    validate_path_in_repo(folder_of_prefix(deletion.path_in_repo));
  }
  require_repo();
  if (request.parent_revision && revision() != *request.parent_revision) {
    throw ConflictError("the repo changed since revision " + *request.parent_revision,
                        "run again to apply the change on the current content");
  }
}

std::size_t S3Repository::delete_for_commit(const std::vector<Deletion>& deletions)
{
  std::vector<std::string> doomed;
  for (const auto& deletion : deletions) {
    auto path = folder_of_prefix(deletion.path_in_repo);
    if (deletion.is_folder) {
      for (const auto& file : list_files(path)) {
        doomed.push_back(key_of(file.path));
      }
    } else if (m_client->head_object(m_url.bucket, key_of(path))) {
      doomed.push_back(key_of(path));
    }
  }
  util::parallel_for(doomed.size(), m_client->config().workers,
                     [&](std::size_t i) { m_client->delete_object(m_url.bucket, doomed[i]); });
  return doomed.size();
}

std::vector<std::string> S3Repository::upload_in_phases(const CommitRequest& request,
                                                        const std::vector<std::uint64_t>& sizes,
                                                        const util::ProgressCallback& progress)
{
  auto workers = m_client->config().workers;
  std::uint64_t total = 0;
  std::array<std::vector<std::size_t>, k_publish_phases> phases;
  for (std::size_t i = 0; i < request.additions.size(); ++i) {
    total += sizes[i];
    phases[publish_phase(request.additions[i].path_in_repo)].push_back(i);
  }
  std::atomic<std::uint64_t> done{0};
  std::mutex progress_mutex;
  // The ETag S3 gives each upload: what the next listing shows for it, so a caller that
  // remembers it knows that object without hashing the file again.
  std::vector<std::string> etags(request.additions.size());
  std::vector<char> uploaded(request.additions.size(), 0);
  auto upload = [&](std::size_t index) {
    const auto& addition = request.additions[index];
    auto key = key_of(addition.path_in_repo);
    if (!addition.source.is_file()) {
      etags[index] = m_client->put_bytes(m_url.bucket, key, addition.source.bytes());
    } else {
      auto sha256 = addition.digests ? addition.digests->sha256 : std::string();
      etags[index] = m_client->put_file(m_url.bucket, key, addition.source.file_for(addition.path_in_repo), sha256);
    }
    uploaded[index] = 1;
    auto now = done += sizes[index];
    if (progress) {
      std::lock_guard lock(progress_mutex);
      progress(now, total);
    }
  };
  // Each phase completes before the next starts: an entry's model.done goes only once every
  // entry file of this commit is in, and the registry after the entries.
  // An interrupt stops the entry files' uploads (those in flight finish), publishes the
  // markers of the entries whose files all landed, and ends there: whole entries only, no
  // registry.
  util::parallel_for(phases[0].size(), workers, [&](std::size_t i) {
    if (commit_stop_signal() == 0) {
      upload(phases[0][i]);
    }
  });
  if (commit_stop_signal() != 0) {
    drop_markers_of_unfinished(request, phases[0], uploaded, phases[1]);
  }
  for (std::size_t p = 1; p < phases.size(); ++p) {
    util::parallel_for(phases[p].size(), workers, [&](std::size_t i) { upload(phases[p][i]); });
    if (auto signal = commit_stop_signal(); signal != 0) {
      // A signal after the last upload stops nothing: this commit is whole, and the caller
      // stops before its next. Nothing uploaded is no commit made.
      if (auto left = not_uploaded(request, uploaded); !left.empty()) {
        bool any = std::find(uploaded.begin(), uploaded.end(), 1) != uploaded.end();
        throw CommitInterrupted(signal, any ? 1 : 0, std::move(left));
      }
    }
  }
  return etags;
}

// Deletions, then the additions phase by phase (publish_order.hpp): S3 has no commits, so
// the order is what keeps a reader from meeting half an entry.
CommitResult S3Repository::commit(const CommitRequest& request, const util::ProgressCallback& progress)
{
  check_commit(request);
  CommitResult result;
  // Deletions first, so that a folder deleted and re-added ends with the additions.
  result.files_deleted = delete_for_commit(request.deletions);
  auto sizes = addition_sizes(request);
  result.files = committed_files(request, sizes, upload_in_phases(request, sizes, progress));
  result.files_added = request.additions.size();
  result.created = result.files_added > 0 || result.files_deleted > 0;
  result.revision = revision().value_or("");
  return result;
}

} // namespace hubcache::storage
