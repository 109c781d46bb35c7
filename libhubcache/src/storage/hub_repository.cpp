#include "hubcache/storage/hub_repository.hpp"

#include "hubcache/error.hpp"
#include "hubcache/storage/download_check.hpp"
#include "hubcache/util/anonymous_file.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/process.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace hubcache::storage {

namespace stdfs = std::filesystem;

namespace {

// Downloads into a temp file next to the destination, renamed into place only once
// verified.
class FileDownloadTarget final : public hub::DownloadTarget {
public:
  explicit FileDownloadTarget(stdfs::path destination) : m_destination(std::move(destination))
  {
    m_file.emplace(m_destination);
  }
  void expect(std::uint64_t size) override { m_file->stream(size); }
  void restart() override
  {
    m_file.reset();
    m_file.emplace(m_destination);
  }
  void write(std::string_view chunk) override { m_file->write(chunk); }
  util::FileDigests digests() override
  {
    m_file->complete_writes();
    return util::digest_file(m_file->temp_path());
  }
  void commit(bool flush) { m_file->commit(flush); }

private:
  stdfs::path m_destination;
  std::optional<util::AtomicFile> m_file;
};

std::string normalize_prefix(std::string_view prefix)
{
  std::string folder(prefix);
  while (!folder.empty() && folder.back() == '/') {
    folder.pop_back();
  }
  if (!folder.empty()) {
    validate_path_in_repo(folder);
  }
  return folder;
}

// What we know of one addition before talking to the Hub, digests as bytes (one per file
// of the commit, tens of thousands). The preupload sample is read again when its batch is
// asked (512 bytes a file: not kept).
struct LocalFile {
  const Addition* addition = nullptr;
  std::uint64_t size = 0;
  util::Sha256Bytes sha256;
  util::Sha1Bytes git_blob_sha1;
};

LocalFile describe_addition(const Addition& addition)
{
  LocalFile local;
  local.addition = &addition;
  util::FileDigests digests;
  if (!addition.source.is_file()) {
    const auto& bytes = addition.source.bytes();
    digests = {bytes.size(), util::hex_digest(util::HashAlgorithm::sha256, bytes), util::git_blob_sha1(bytes)};
  } else if (addition.digests && util::Sha256Bytes::from_hex(addition.digests->sha256)
             && util::Sha1Bytes::from_hex(addition.digests->git_blob_sha1)) {
    digests = *addition.digests;
  } else {
    digests = util::digest_file(addition.source.file_for(addition.path_in_repo));
  }
  local.size = digests.size;
  local.sha256 = util::Sha256Bytes::from_hex(digests.sha256).value();
  local.git_blob_sha1 = util::Sha1Bytes::from_hex(digests.git_blob_sha1).value();
  return local;
}

// Whether the Hub's oid for a file (hex, from the network) is `digest`.
template <std::size_t N>
bool is_oid(const std::optional<std::string>& oid, const util::DigestBytes<N>& digest)
{
  auto parsed = oid ? util::DigestBytes<N>::from_hex(*oid) : std::nullopt;
  return parsed && *parsed == digest;
}

// The preupload sample: the first bytes of the content.
std::string sample_of(const LocalFile& local)
{
  const auto& source = local.addition->source;
  auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(local.size, hub::k_preupload_sample_size));
  if (!source.is_file()) {
    return source.bytes().substr(0, wanted);
  }
  std::string sample(wanted, '\0');
  if (wanted > 0) {
    stdfs::path path(source.file_for(local.addition->path_in_repo));
    sample.resize(util::read_up_to(util::open_regular_file(path), path, sample.data(), sample.size()));
  }
  return sample;
}

std::vector<RepoFile> files_of(const std::vector<LocalFile>& locals)
{
  std::vector<RepoFile> files;
  files.reserve(locals.size());
  for (const auto& local : locals) {
    files.push_back({local.addition->path_in_repo, local.size, local.sha256.hex(), local.git_blob_sha1.hex()});
  }
  return files;
}

// The NDJSON commit payload, written to a scratch file so that many regular files never
// sit in memory together. The file has no name: a commit killed mid-way leaves nothing in
// TMPDIR.
class CommitPayload {
public:
  CommitPayload() : m_file(stdfs::temp_directory_path()) {}

  void append(std::string_view data) { m_file.write(data); }

  void append_regular_file(const std::string& path_in_repo, const FileSource& source)
  {
    append(hub::commit_file_line_prefix(path_in_repo));
    if (!source.is_file()) {
      append(hub::base64_encode(source.bytes()));
    } else {
      // Whole chunks of a multiple of 3 bytes encode without padding in the middle.
      stdfs::path file(source.file_for(path_in_repo));
      util::read_chunks(
        util::open_regular_file(file), file,
        [&](const char* data, std::size_t size) { append(hub::base64_encode(std::string_view(data, size))); },
        3 * 65536);
    }
    append(hub::k_commit_file_line_suffix);
  }

  http::FileSlice finish() const
  {
    return http::FileSlice{m_file.directory() / "(commit payload)", 0, m_file.size(), m_file.fd().get()};
  }

private:
  util::AnonymousFile m_file;
};

} // namespace

HubRepository::HubRepository(std::string repo_id, hub::HubConfig config)
  : m_repo_id(std::move(repo_id)), m_api(std::move(config))
{}

std::string HubRepository::qualified_id()
{
  // A bare NAME means NAME under the token's user, for every operation as for create.
  std::lock_guard lock(m_id_mutex);
  if (m_repo_id.find('/') == std::string::npos && m_api.has_token()) {
    m_repo_id = m_api.whoami().name + "/" + m_repo_id;
  }
  return m_repo_id;
}

std::string HubRepository::describe() const
{
  std::string text = "Hub repo " + m_repo_id;
  if (m_api.config().endpoint != hub::k_default_hub_endpoint) {
    text += " on " + m_api.config().endpoint;
  }
  return text;
}

bool HubRepository::exists()
{
  if (m_api.repo_info(qualified_id())) {
    return true;
  }
  // The Hub answers "not found" to a bad token too: tell that case apart, since the fix
  // is different.
  if (m_api.has_token()) {
    m_api.whoami();
  }
  return false;
}

std::string HubRepository::create(const RepoCreateOptions& options)
{
  m_api.require_online();
  if (!m_api.has_token()) {
    throw TokenMissing("cannot create the Hub repo " + m_repo_id + ": no Hugging Face token is set",
                       ErrorFacts{m_repo_id, false, true});
  }
  auto repo_id = qualified_id();
  auto created = m_api.create_repo(repo_id, options.is_private, options.exist_ok);
  std::lock_guard lock(m_id_mutex);
  m_repo_id = created;
  return created;
}

std::optional<std::string> HubRepository::revision()
{
  auto info = m_api.repo_info(qualified_id());
  if (!info) {
    throw RepoNotFound("the " + describe() + " does not exist or is not accessible with your token",
                       ErrorFacts{m_repo_id, m_api.has_token(), false});
  }
  return info->sha;
}

RepoFile HubRepository::to_repo_file(const hub::HubTreeEntry& entry) const
{
  RepoFile file;
  file.path = entry.path;
  file.size = entry.size;
  if (entry.lfs_oid) {
    file.sha256 = *entry.lfs_oid;
  } else {
    file.git_blob_sha1 = entry.oid; // for LFS files the oid is the pointer's, not the content's
  }
  return file;
}

std::vector<RepoFile> HubRepository::list_files(std::string_view prefix)
{
  auto folder = normalize_prefix(prefix);
  std::vector<hub::HubTreeEntry> entries;
  try {
    entries = m_api.list_tree(qualified_id(), k_branch, folder, true);
  } catch (const EntryNotFound&) {
    return {};
  } catch (const RevisionNotFound&) {
    return {}; // a repo without any commit has no main branch yet
  }
  std::vector<RepoFile> files;
  for (const auto& entry : entries) {
    // Nothing outside the repo's own tree is ever used; an odd name is skipped, not fatal.
    if (!is_valid_path_in_repo(entry.path)) {
      if (entry.type == "file") {
        note_skipped_path(entry.path);
      }
      continue;
    }
    if (entry.type != "file") {
      continue;
    }
    if (!folder.empty() && !entry.path.starts_with(folder + "/")) {
      throw IntegrityError("the Hub listed '" + entry.path + "' under the folder '" + folder + "' of " + m_repo_id,
                           "the repo or the server is corrupt: report it to the repo owner");
    }
    files.push_back(to_repo_file(entry));
  }
  std::sort(files.begin(), files.end(), [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
  return files;
}

std::vector<std::string> HubRepository::list_folders(std::string_view prefix)
{
  auto folder = normalize_prefix(prefix);
  auto repo_id = qualified_id();
  std::vector<hub::HubTreeEntry> entries;
  try {
    entries = m_api.list_tree(repo_id, k_branch, folder, false);
  } catch (const EntryNotFound&) {
    return {};
  } catch (const RevisionNotFound&) {
    return {};
  }
  std::vector<std::string> names;
  auto start = folder.empty() ? 0 : folder.size() + 1;
  for (const auto& entry : entries) {
    // An unsafe folder is never descended into; its files are reported when listed.
    if (entry.type != "directory" || !is_valid_path_in_repo(entry.path)) {
      continue;
    }
    if (entry.path.size() <= start || (!folder.empty() && !entry.path.starts_with(folder + "/"))
        || entry.path.find('/', start) != std::string::npos) {
      throw IntegrityError("the Hub listed '" + entry.path + "' as a direct sub-folder of '" + folder + "' in "
                             + repo_id,
                           "the repo or the server is corrupt: report it to the repo owner");
    }
    names.push_back(entry.path.substr(start));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<RepoFile> HubRepository::stat(std::string_view path)
{
  validate_path_in_repo(path);
  std::vector<hub::HubTreeEntry> entries;
  try {
    entries = m_api.paths_info(qualified_id(), k_branch, {std::string(path)});
  } catch (const EntryNotFound&) {
    return std::nullopt;
  } catch (const RevisionNotFound&) {
    return std::nullopt;
  }
  for (const auto& entry : entries) {
    if (entry.path == path && entry.type == "file") {
      return to_repo_file(entry);
    }
  }
  return std::nullopt;
}

std::string HubRepository::read_file(std::string_view path)
{
  validate_path_in_repo(path);
  hub::StringDownloadTarget target;
  try {
    m_api.download(qualified_id(), k_branch, path, target);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(std::string(path) + " in " + describe() + ": " + error.what());
  }
  return std::move(target.content);
}

void HubRepository::download_file(std::string_view path, const stdfs::path& destination,
                                  const util::ProgressCallback& progress, bool flush)
{
  validate_path_in_repo(path);
  FileDownloadTarget target(destination);
  m_api.download(qualified_id(), k_branch, path, target, progress);
  target.commit(flush);
}

util::FileDigests HubRepository::download_listed(const RepoFile& listed, const stdfs::path& destination,
                                                 const util::ProgressCallback& progress, bool flush)
{
  validate_path_in_repo(listed.path);
  FileDownloadTarget target(destination);
  hub::ListedContent content{listed.size, listed.sha256, listed.git_blob_sha1};
  auto result = m_api.download(qualified_id(), k_branch, listed.path, target, progress, &content);
  util::FileDigests digests{result.size, result.sha256, result.git_blob_sha1};
  check_download(listed, digests, "'" + listed.path + "' from " + describe());
  target.commit(flush);
  return digests;
}

void HubRepository::check_writable()
{
  m_api.require_online();
  if (!m_api.has_token()) {
    throw TokenMissing("You need to log in to the Hugging Face Hub to push to " + m_repo_id,
                       ErrorFacts{m_repo_id, false, true});
  }
  if (!exists()) {
    throw RepoNotFound("cache repo " + m_repo_id + " does not exist or cannot be read",
                       ErrorFacts{m_repo_id, m_api.has_token(), true});
  }
  m_api.check_write_access(qualified_id());
}

CommitResult HubRepository::commit(const CommitRequest& request, const util::ProgressCallback& progress)
{
  m_api.require_online();
  for (const auto& addition : request.additions) {
    validate_path_in_repo(addition.path_in_repo);
  }
  for (const auto& deletion : request.deletions) {
    validate_path_in_repo(deletion.path_in_repo);
  }
  if (!m_api.has_token()) {
    throw TokenMissing("cannot commit to " + describe() + ": no Hugging Face token is set",
                       ErrorFacts{m_repo_id, false, true});
  }
  qualified_id();

  // Hash every addition once, several files at a time; the plan may be remade, the
  // hashes stay.
  std::vector<LocalFile> locals(request.additions.size());
  util::parallel_for(locals.size(), m_api.config().workers,
                     [&](std::size_t i) { locals[i] = describe_addition(request.additions[i]); });
  // The additions by content, for the LFS uploads: a sorted vector, not a node per file.
  std::vector<const LocalFile*> by_sha256;
  by_sha256.reserve(locals.size());
  for (const auto& local : locals) {
    by_sha256.push_back(&local);
  }
  std::sort(by_sha256.begin(), by_sha256.end(),
            [](const LocalFile* a, const LocalFile* b) { return a->sha256 < b->sha256; });
  auto with_sha256 = [&](const std::string& oid) -> const LocalFile& {
    auto digest = util::Sha256Bytes::from_hex(oid);
    auto it = digest ? std::lower_bound(by_sha256.begin(), by_sha256.end(), *digest,
                                        [](const LocalFile* local, const auto& value) { return local->sha256 < value; })
                     : by_sha256.end();
    if (it == by_sha256.end() || (*it)->sha256 != *digest) {
      throw RemoteError("the Hub asked for an LFS object that is not part of this commit (" + oid + ")", "retry later");
    }
    return **it;
  };

  std::set<util::Sha256Bytes> uploaded_lfs; // survives re-plans: objects stay on the Hub
  std::mt19937 random{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  auto conflict_delay = m_api.config().conflict_base;
  std::string last_failure;

  for (int attempt = 1; attempt <= k_max_commit_attempts; ++attempt) {
    auto info = m_api.repo_info(m_repo_id);
    if (!info) {
      throw RepoNotFound("cannot commit to " + describe() + ": it does not exist or is not accessible with your token",
                         ErrorFacts{m_repo_id, true, true});
    }
    auto head = info->sha;
    if (request.parent_revision && head != request.parent_revision) {
      throw ConflictError("the " + describe() + " moved on since revision " + *request.parent_revision,
                          "re-run the command to apply it on the new head");
    }
    auto plan_revision = head.value_or(std::string(k_branch));

    // Which additions change something, and how they travel.
    struct Planned {
      const LocalFile* local;
      bool lfs;
    };
    std::vector<Planned> planned;
    if (!locals.empty()) {
      // Each batch's answers are turned into a decision per file as they arrive.
      enum class Way : unsigned char { unanswered, skip, regular, lfs };
      std::vector<Way> ways(locals.size(), Way::unanswered);
      m_api.preupload(
        m_repo_id, k_branch, locals.size(),
        [&](std::size_t i) {
          return hub::PreuploadFile{locals[i].addition->path_in_repo, locals[i].size, sample_of(locals[i])};
        },
        [&](std::size_t begin, std::size_t end, hub::PreuploadResult& answer) {
          std::unordered_map<std::string_view, std::size_t> index;
          index.reserve(end - begin);
          for (auto i = begin; i < end; ++i) {
            index.emplace(locals[i].addition->path_in_repo, i);
          }
          for (const auto& remote : answer.files) {
            auto it = index.find(remote.path);
            if (it == index.end()) {
              continue;
            }
            const auto& local = locals[it->second];
            bool lfs = remote.lfs && local.size > 0; // empty files cannot be LFS objects
            if (remote.should_ignore
                || (lfs ? is_oid(remote.remote_oid, local.sha256) : is_oid(remote.remote_oid, local.git_blob_sha1))) {
              ways[it->second] = Way::skip; // ignored, or already there with this content
            } else {
              ways[it->second] = lfs ? Way::lfs : Way::regular;
            }
          }
        });
      for (std::size_t i = 0; i < locals.size(); ++i) {
        if (ways[i] == Way::unanswered) {
          throw RemoteError("the Hub did not say how to upload '" + locals[i].addition->path_in_repo + "'",
                            "retry later");
        }
        if (ways[i] != Way::skip) {
          planned.push_back({&locals[i], ways[i] == Way::lfs});
        }
      }
    }

    // Deletions of what is actually there, so the Hub never sees a missing path.
    std::vector<std::string> deletion_lines;
    std::size_t files_deleted = 0;
    std::vector<std::string> file_deletions;
    for (const auto& deletion : request.deletions) {
      if (!deletion.is_folder) {
        file_deletions.push_back(deletion.path_in_repo);
        continue;
      }
      std::vector<hub::HubTreeEntry> entries;
      try {
        entries = m_api.list_tree(m_repo_id, plan_revision, deletion.path_in_repo, true);
      } catch (const EntryNotFound&) {
      }
      auto count = std::count_if(entries.begin(), entries.end(), [](const auto& e) { return e.type == "file"; });
      if (count > 0) {
        files_deleted += static_cast<std::size_t>(count);
        deletion_lines.push_back(hub::commit_deletion_line(deletion.path_in_repo, true));
      }
    }
    if (!file_deletions.empty()) {
      std::set<std::string> present;
      for (const auto& entry : m_api.paths_info(m_repo_id, plan_revision, file_deletions)) {
        if (entry.type == "file") {
          present.insert(entry.path);
        }
      }
      for (const auto& path : file_deletions) {
        if (present.erase(path) > 0) {
          ++files_deleted;
          deletion_lines.push_back(hub::commit_deletion_line(path, false));
        }
      }
    }

    if (planned.empty() && deletion_lines.empty()) {
      return CommitResult{head.value_or(""), false, 0, 0, files_of(locals)};
    }

    // LFS objects first: a commit naming an object the Hub lacks is refused.
    std::uint64_t total = 0;
    for (const auto& item : planned) {
      total += item.local->size;
    }
    std::uint64_t sent = 0;
    std::vector<hub::LfsObjectRef> objects;
    std::set<util::Sha256Bytes> requested;
    for (const auto& item : planned) {
      if (item.lfs && uploaded_lfs.count(item.local->sha256) == 0 && requested.insert(item.local->sha256).second) {
        objects.push_back({item.local->sha256.hex(), item.local->size});
      }
    }
    if (!objects.empty()) {
      auto batch = m_api.lfs_batch(m_repo_id, k_branch, objects);
      m_api.lfs_upload(
        batch,
        [&](const std::string& oid) {
          hub::HubApi::UploadSource source;
          const auto& addition = *with_sha256(oid).addition;
          const auto& content = addition.source;
          if (content.is_file()) {
            source.file = content.file_for(addition.path_in_repo);
          } else {
            source.bytes = &content.bytes();
          }
          return source;
        },
        [&](std::uint64_t bytes) {
          sent += bytes;
          if (progress) {
            progress(std::min(sent, total), total);
          }
        });
      uploaded_lfs.merge(requested);
      // What the uploads built on their threads (and libcurl's transfer buffers) is handed
      // back: else it stays in those threads' arenas through the commit and after it.
      util::release_free_memory();
    }

    CommitPayload payload;
    std::string summary = request.message;
    if (summary.empty()) {
      summary = planned.empty() ? "Delete " + std::to_string(files_deleted) + " files"
                                : "Upload " + std::to_string(planned.size()) + " files";
    }
    payload.append(hub::commit_header_line(summary, request.description, head));
    for (const auto& item : planned) {
      if (item.lfs) {
        payload.append(
          hub::commit_lfs_file_line(item.local->addition->path_in_repo, item.local->sha256.hex(), item.local->size));
      } else {
        payload.append_regular_file(item.local->addition->path_in_repo, item.local->addition->source);
      }
    }
    for (const auto& line : deletion_lines) {
      payload.append(line);
    }

    // Never re-sent blindly: on any doubt the plan is remade against the head, and since
    // the commit names its parent, an earlier copy that did land turns the next plan into
    // a no-op instead of a duplicate commit.
    hub::HubApi::CommitAnswer answer;
    try {
      answer = m_api.commit(m_repo_id, k_branch, payload.finish());
    } catch (const http::TransportError& error) {
      if (request.parent_revision) {
        throw RemoteError("the commit to " + describe() + " may or may not have been applied: " + error.what(),
                          "check the repo, then re-run the command");
      }
      answer.status = 0;
      last_failure = error.what();
    }
    if (answer.status >= 200 && answer.status < 300) {
      if (progress) {
        progress(total, total);
      }
      return CommitResult{answer.commit_oid, true, planned.size(), files_deleted, files_of(locals)};
    }
    if (request.parent_revision) {
      throw ConflictError("the " + describe() + " moved on since revision " + *request.parent_revision + " (HTTP "
                            + std::to_string(answer.status) + ")",
                          "re-run the command to apply it on the new head");
    }
    if (answer.status != 0) {
      last_failure = "HTTP " + std::to_string(answer.status);
    }
    if (attempt < k_max_commit_attempts) {
      auto wait =
        std::chrono::milliseconds(static_cast<long long>(static_cast<double>(conflict_delay.count()) * jitter(random)));
      std::this_thread::sleep_for(wait);
      conflict_delay = std::min(conflict_delay * 2, m_api.config().conflict_base * 30);
    }
  }
  throw ConflictError("could not commit to " + describe() + " after " + std::to_string(k_max_commit_attempts)
                        + " attempts: other commits kept landing first (last: " + last_failure + ")",
                      "re-run the command");
}

} // namespace hubcache::storage
