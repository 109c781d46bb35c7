#include "hubcache/compilecache/sync.hpp"

#include "hubcache/compilecache/cleanup.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>


namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

constexpr std::string_view k_digest_header = "neuron-cache-digests 1";
constexpr std::string_view k_staging_name = ".neuron-cache-pull";

std::string errno_text() { return std::strerror(errno); }

} // namespace

FileStamp stamp_of(const stdfs::path& file)
{
  struct stat status {};
  if (::stat(file.c_str(), &status) != 0) {
    throw IoError("cannot stat " + file.string() + ": " + errno_text());
  }
  return {static_cast<std::uint64_t>(status.st_size),
          static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 + status.st_mtim.tv_nsec,
          static_cast<std::uint64_t>(status.st_ino)};
}

DigestCache::DigestCache(stdfs::path file) : m_file(std::move(file))
{
  std::optional<std::string> text;
  try {
    text = util::read_file_if_exists(m_file);
  } catch (const Error&) {
    return;
  }
  if (!text || !text->starts_with(k_digest_header)) {
    return;
  }
  std::istringstream lines(*text);
  std::string line;
  std::getline(lines, line);
  std::map<std::string, Record, std::less<>> loaded;
  while (std::getline(lines, line)) {
    // size \t mtime_ns \t inode \t sha256 \t git blob sha1 \t path
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (int i = 0; i < 5; ++i) {
      auto tab = line.find('\t', start);
      if (tab == std::string::npos) {
        return; // corrupt: ignore the whole file
      }
      fields.push_back(line.substr(start, tab - start));
      start = tab + 1;
    }
    Record record;
    try {
      record.stamp = {std::stoull(fields[0]), std::stoll(fields[1]), std::stoull(fields[2])};
    } catch (const std::exception&) {
      return;
    }
    auto hash_field = [](const std::string& field, std::size_t length) -> std::optional<std::string> {
      if (field == "-") {
        return std::string();
      }
      if (field.size() != length) {
        return std::nullopt;
      }
      return field;
    };
    auto sha256 = hash_field(fields[3], 64);
    auto sha1 = hash_field(fields[4], 40);
    if (!sha256 || !sha1 || start >= line.size()) {
      return;
    }
    record.digests = {record.stamp.size, *sha256, *sha1};
    loaded.emplace(line.substr(start), std::move(record));
  }
  m_loaded = std::move(loaded);
}

stdfs::path DigestCache::default_path(const stdfs::path& cache_root, const util::Environment& env)
{
  stdfs::path base;
  if (auto xdg = env.get_non_empty("XDG_CACHE_HOME")) {
    base = *xdg;
  } else {
    base = util::expand_user("~/.cache", env);
  }
  auto key = util::hex_digest(util::HashAlgorithm::sha256, stdfs::absolute(cache_root).lexically_normal().string()).substr(0, 16);
  return base / "neuron-cache" / ("digests-" + key + ".tsv");
}

std::optional<util::FileDigests> DigestCache::known(const std::string& key, const FileStamp& stamp)
{
  if (auto used = m_used.find(key); used != m_used.end() && used->second.stamp == stamp) {
    return used->second.digests;
  }
  if (auto it = m_loaded.find(key); it != m_loaded.end() && it->second.stamp == stamp) {
    m_used[key] = it->second;
    return it->second.digests;
  }
  return std::nullopt;
}

void DigestCache::remember(const std::string& key, const FileStamp& stamp, const util::FileDigests& digests)
{
  m_used[key] = Record{stamp, digests};
  m_changed = true;
}

util::FileDigests DigestCache::digest(const std::string& key, const stdfs::path& file, const FileStamp& stamp)
{
  if (auto cached = known(key, stamp); cached && !cached->sha256.empty() && !cached->git_blob_sha1.empty()) {
    return *cached;
  }
  auto digests = util::digest_file(file);
  ++m_hashed;
  // The file may have changed while it was read: remember it only if it did not.
  if (stamp_of(file) == stamp && digests.size == stamp.size) {
    remember(key, stamp, digests);
  }
  return digests;
}

void DigestCache::save()
{
  if (m_file.empty() || (!m_changed && m_used.size() == m_loaded.size())) {
    return; // nothing new to remember
  }
  try {
    std::error_code ec;
    stdfs::create_directories(m_file.parent_path(), ec);
    std::string text(k_digest_header);
    text += '\n';
    auto field = [](const std::string& hash) { return hash.empty() ? std::string("-") : hash; };
    for (const auto& [key, record] : m_used) {
      text += std::to_string(record.stamp.size) + '\t' + std::to_string(record.stamp.mtime_ns) + '\t'
              + std::to_string(record.stamp.inode) + '\t' + field(record.digests.sha256) + '\t'
              + field(record.digests.git_blob_sha1) + '\t' + key + '\n';
    }
    util::write_file_atomically(m_file, text);
  } catch (const Error&) {
    // Only a cache: the next run hashes again.
  }
}

bool same_content(const storage::RepoFile& remote, const LocalFile& local, DigestCache& digests)
{
  if (remote.size != local.size) {
    return false;
  }
  if (remote.sha256.empty() && remote.git_blob_sha1.empty()) {
    return true;
  }
  FileStamp stamp{local.size, local.mtime_ns, local.inode};
  auto cached = digests.known(local.path, stamp);
  if (!remote.sha256.empty()) {
    if (!cached || cached->sha256.empty()) {
      cached = digests.digest(local.path, local.source, stamp);
    }
    return cached->sha256 == remote.sha256;
  }
  if (!cached || cached->git_blob_sha1.empty()) {
    cached = digests.digest(local.path, local.source, stamp);
  }
  return cached->git_blob_sha1 == remote.git_blob_sha1;
}

namespace {

bool is_publishable(const Entry& entry)
{
  return entry.kind != EntryKind::module || entry.state == EntryState::success;
}

} // namespace

PushPlan plan_push(const Scan& scan, const std::vector<storage::RepoFile>& remote, DigestCache& digests)
{
  std::unordered_map<std::string_view, const storage::RepoFile*> by_path;
  by_path.reserve(remote.size());
  for (const auto& file : remote) {
    by_path.emplace(file.path, &file);
  }
  PushPlan plan;
  plan.skipped = scan.skipped;
  for (const auto& entry : scan.entries) {
    if (!is_publishable(entry) || entry.files.empty()) {
      continue;
    }
    bool uploads = false;
    for (const auto& file : entry.files) {
      auto it = by_path.find(file.path);
      if (it != by_path.end() && same_content(*it->second, file, digests)) {
        continue;
      }
      plan.uploads.push_back({file.path, file.source, {file.size, file.mtime_ns, file.inode}});
      plan.bytes_to_upload += file.size;
      uploads = true;
    }
    (uploads ? plan.entries_to_push : plan.entries_present).push_back(entry.path);
  }
  return plan;
}

std::vector<storage::RepoFile> list_remote_for(storage::Repository& repo, const Scan& scan)
{
  std::set<std::string> versions;
  for (const auto& entry : scan.entries) {
    if (is_publishable(entry) && !entry.files.empty()) {
      versions.insert(entry.path.substr(0, entry.path.find('/')));
    }
  }
  std::vector<storage::RepoFile> files;
  for (const auto& version : versions) {
    std::vector<storage::RepoFile> listed;
    try {
      listed = repo.list_files(version);
    } catch (const EntryNotFound&) {
      continue; // a version the repo has never seen
    }
    files.insert(files.end(), std::make_move_iterator(listed.begin()), std::make_move_iterator(listed.end()));
  }
  return files;
}

PushResult push(storage::Repository& repo, PushPlan plan, DigestCache& digests, const util::ProgressCallback& progress)
{
  PushResult result;
  if (plan.uploads.empty()) {
    result.revision = repo.revision();
    result.plan = std::move(plan);
    return result;
  }
  storage::CommitRequest request;
  request.message = std::string(k_commit_message);
  request.additions.reserve(plan.uploads.size());
  for (const auto& upload : plan.uploads) {
    request.additions.push_back(
      {upload.path, storage::FileSource::from_file(upload.source), digests.known(upload.path, upload.stamp)});
  }
  auto commit = repo.commit(request, progress);
  result.committed = commit.created;
  result.revision = commit.revision;

  // The commit reports the digests of what it holds now: remember them for files that did
  // not change meanwhile, so the next push hashes nothing and lists nothing twice.
  std::unordered_map<std::string_view, const storage::RepoFile*> committed;
  for (const auto& file : commit.files) {
    committed.emplace(file.path, &file);
  }
  for (const auto& upload : plan.uploads) {
    auto it = committed.find(upload.path);
    if (it == committed.end() || it->second->size != upload.stamp.size || it->second->sha256.empty()) {
      continue;
    }
    try {
      if (stamp_of(upload.source) == upload.stamp) {
        auto known = digests.known(upload.path, upload.stamp);
        auto git_blob_sha1 = !it->second->git_blob_sha1.empty() ? it->second->git_blob_sha1
                             : known && known->sha256 == it->second->sha256 ? known->git_blob_sha1
                                                                            : std::string();
        digests.remember(upload.path, upload.stamp, {upload.stamp.size, it->second->sha256, git_blob_sha1});
      }
    } catch (const Error&) {
    }
  }
  result.plan = std::move(plan);
  return result;
}

RepoLayout group_repo_files(const std::vector<storage::RepoFile>& files)
{
  RepoLayout layout;
  std::map<std::string, RepoEntry> entries;
  for (const auto& file : files) {
    auto first = file.path.find('/');
    auto second = first == std::string::npos ? std::string::npos : file.path.find('/', first + 1);
    auto name = stdfs::path(file.path).filename().string();
    if (second == std::string::npos || !file.path.starts_with(k_version_prefix)
        || first == k_version_prefix.size() || !storage::is_valid_path_in_repo(file.path)) {
      ++layout.other_files;
      continue;
    }
    if (is_lock_name(name) || is_temp_file_name(name)) {
      continue; // never installed: a lock would stall every compiler on this host
    }
    auto dir = std::string_view(file.path).substr(first + 1, second - first - 1);
    auto module = parse_module_name(dir);
    EntryKind kind;
    if (dir == k_registry_dir) {
      kind = EntryKind::registry;
    } else if (module) {
      kind = module->flags_suffix ? EntryKind::module : EntryKind::exported_model;
    } else {
      ++layout.other_files;
      continue;
    }
    auto path = file.path.substr(0, second);
    auto [it, inserted] = entries.try_emplace(path);
    if (inserted) {
      it->second.kind = kind;
      it->second.path = path;
      it->second.compiler_version = file.path.substr(k_version_prefix.size(),
                                                     first - k_version_prefix.size());
    }
    it->second.files.push_back(file);
  }
  for (auto& [path, entry] : entries) {
    layout.entries.push_back(std::move(entry));
  }
  return layout;
}

bool version_matches(std::string_view version, std::string_view filter)
{
  if (filter.empty() || version == filter) {
    return true;
  }
  return version.size() > filter.size() && version.starts_with(filter)
         && (version[filter.size()] == '.' || version[filter.size()] == '+');
}

namespace {

// A directory in the cache root for one pull's downloads, removed when done.
class StagingDir {
public:
  explicit StagingDir(const stdfs::path& root) : m_path(util::unique_temp_path(root / std::string(k_staging_name)))
  {
    if (::mkdir(m_path.c_str(), 0755) != 0) {
      throw IoError("cannot create a staging directory in " + root.string() + ": " + errno_text(),
                    "check that the compile cache is writable");
    }
  }
  ~StagingDir()
  {
    std::error_code ec;
    stdfs::remove_all(m_path, ec);
  }
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
  const stdfs::path& path() const { return m_path; }

private:
  stdfs::path m_path;
};

// Staging left by a pull that died: by a dead process of this host, or older than a day.
void sweep_stale_staging(const stdfs::path& root)
{
  auto prefix = std::string(k_staging_name) + std::string(util::k_temp_infix);
  auto host = util::host_name();
  std::error_code ec;
  for (const auto& item : stdfs::directory_iterator(root, ec)) {
    auto name = item.path().filename().string();
    if (!name.starts_with(prefix)) {
      continue;
    }
    auto rest = name.substr(prefix.size()); // <host>.<pid>.<random>
    auto dot = rest.find('.');
    auto dot2 = dot == std::string::npos ? std::string::npos : rest.find('.', dot + 1);
    bool dead = false;
    if (dot2 != std::string::npos && rest.substr(0, dot) == host) {
      try {
        auto pid = static_cast<pid_t>(std::stol(rest.substr(dot + 1, dot2 - dot - 1)));
        dead = pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
      } catch (const std::exception&) {
      }
    }
    struct stat status {};
    bool old = ::lstat(item.path().c_str(), &status) == 0
               && std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(status.st_mtime)
                    > std::chrono::hours(24);
    if (dead || old) {
      stdfs::remove_all(item.path(), ec);
    }
  }
}

enum class Action { install, present, skip };

struct Decision {
  Action action = Action::skip;
  std::string reason; // skip reason code
  std::string detail;
  bool fresh = false;               // the entry does not exist locally
  std::vector<const storage::RepoFile*> to_download;
  bool replace = false;             // a failed local entry makes way for it
};

std::string relative_name(const RepoEntry& entry, const storage::RepoFile& file)
{
  return file.path.substr(entry.path.size() + 1);
}

LocalFile local_file(const std::string& rel, const stdfs::path& path)
{
  auto stamp = stamp_of(path);
  return {rel, path, stamp.size, stamp.mtime_ns, stamp.inode};
}

// Files below an existing local entry dir (relative names; temp files ignored).
std::vector<std::string> local_names(const stdfs::path& dir)
{
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(dir, ec); !ec && it != stdfs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_directory(ec) && !is_temp_file_name(it->path().filename().string())) {
      names.push_back(it->path().lexically_relative(dir).generic_string());
    }
  }
  return names;
}

// A local module entry in the FAILED state with no lock: what --replace-failed replaces.
bool is_failed_locally(const std::vector<std::string>& names)
{
  std::vector<EntryFileInfo> infos;
  for (const auto& name : names) {
    infos.push_back({name, 1});
  }
  return classify_module_files(infos).state == EntryState::failed;
}

Decision decide(const RepoEntry& entry, const stdfs::path& root, DigestCache& digests, std::vector<Skipped>& skipped,
                bool replace_failed)
{
  Decision decision;
  if (entry.kind == EntryKind::module) {
    std::vector<EntryFileInfo> infos;
    for (const auto& file : entry.files) {
      infos.push_back({relative_name(entry, file), file.size});
    }
    auto classification = classify_module_files(infos);
    if (classification.state == EntryState::failed) {
      return {Action::skip, "failed-in-repo", classification.reason, false, {}};
    }
    if (classification.state != EntryState::success) {
      return {Action::skip, "incomplete-in-repo", classification.reason, false, {}};
    }
  }
  auto target = root / entry.path;
  struct stat status {};
  if (::lstat(target.c_str(), &status) != 0) {
    decision.action = Action::install;
    decision.fresh = true;
    for (const auto& file : entry.files) {
      decision.to_download.push_back(&file);
    }
    return decision;
  }
  if (!S_ISDIR(status.st_mode)) {
    return {Action::skip, "local-entry-differs", "not a directory locally", false, {}};
  }
  auto names = local_names(target);
  if (replace_failed && entry.kind == EntryKind::module && is_failed_locally(names)) {
    decision.action = Action::install;
    decision.fresh = true;
    decision.replace = true;
    for (const auto& file : entry.files) {
      decision.to_download.push_back(&file);
    }
    return decision;
  }
  std::set<std::string> repo_names;
  for (const auto& file : entry.files) {
    repo_names.insert(relative_name(entry, file));
  }
  bool is_module = entry.kind == EntryKind::module;
  // A lock says most about the entry: checked before any difference, whatever the order.
  for (const auto& name : names) {
    if (is_lock_name(stdfs::path(name).filename().string())) {
      return {Action::skip, "locked-locally", "a compiler holds " + name, false, {}};
    }
  }
  for (const auto& name : names) {
    if (is_module && !repo_names.contains(name)) {
      return {Action::skip, "local-entry-differs", name + " exists locally but not in the repo", false, {}};
    }
  }
  for (const auto& file : entry.files) {
    auto local = target / relative_name(entry, file);
    struct stat local_status {};
    if (::stat(local.c_str(), &local_status) != 0) {
      decision.to_download.push_back(&file);
      continue;
    }
    bool same = S_ISREG(local_status.st_mode) && same_content(file, local_file(file.path, local), digests);
    if (same) {
      continue;
    }
    if (is_module) {
      return {Action::skip, "local-entry-differs", relative_name(entry, file) + " differs from the repo's", false, {}};
    }
    // Registry and exported-model trees: keep the local file, install the rest.
    skipped.push_back({file.path, "local-file-differs", "kept the local version"});
  }
  decision.action = decision.to_download.empty() ? Action::present : Action::install;
  return decision;
}

// model.done last, model.neff just before it: the markers a compiler trusts.
int install_rank(const std::string& name)
{
  return name == "model.done" ? 2 : name == "model.neff" ? 1 : 0;
}

void rename_checked(const stdfs::path& from, const stdfs::path& to)
{
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw IoError("cannot move " + to.filename().string() + " into " + to.parent_path().string() + ": " + errno_text());
  }
}

} // namespace

PullReport pull(storage::Repository& repo, const stdfs::path& root, DigestCache& digests, const PullOptions& options,
                const util::ProgressCallback& progress)
{
  PullReport report;
  std::error_code ec;
  if (!options.dry_run) {
    stdfs::create_directories(root, ec);
    if (ec) {
      throw IoError("cannot create the compile cache " + root.string() + ": " + ec.message(),
                    "check the path given with --cache-dir");
    }
  }
  struct stat status {};
  if (::stat(root.c_str(), &status) == 0 && !S_ISDIR(status.st_mode)) {
    throw IoError("the compile cache " + root.string() + " is not a directory", "give the cache directory with --cache-dir");
  }
  if (!options.dry_run) {
    sweep_stale_staging(root);
  }

  std::vector<storage::RepoFile> listing;
  try {
    listing = repo.list_files();
  } catch (const EntryNotFound&) {
    // an empty repo
  }
  auto layout = group_repo_files(listing);
  report.other_files = layout.other_files;
  std::vector<std::pair<const RepoEntry*, Decision>> installs;
  for (const auto& entry : layout.entries) {
    if (options.compiler_version && !version_matches(entry.compiler_version, *options.compiler_version)) {
      continue;
    }
    auto decision = decide(entry, root, digests, report.skipped, options.replace_failed);
    switch (decision.action) {
    case Action::present: report.entries_present.push_back(entry.path); break;
    case Action::skip: report.skipped.push_back({entry.path, decision.reason, decision.detail}); break;
    case Action::install:
      for (const auto* file : decision.to_download) {
        report.bytes_planned += file->size;
      }
      installs.emplace_back(&entry, std::move(decision));
      break;
    }
  }
  if (options.dry_run) {
    for (const auto& [entry, decision] : installs) {
      report.entries_pulled.push_back(entry->path);
      if (decision.replace) {
        report.entries_replaced.push_back(entry->path);
      }
    }
    return report;
  }
  if (installs.empty()) {
    return report;
  }

  StagingDir staging(root);
  std::size_t index = 0;
  for (const auto& [entry, decision] : installs) {
    auto stage = staging.path() / std::to_string(index++);
    auto target = root / entry->path;
    try {
      stdfs::create_directories(stage);
      std::uint64_t entry_bytes = 0;
      for (const auto* file : decision.to_download) {
        auto destination = stage / relative_name(*entry, *file);
        stdfs::create_directories(destination.parent_path());
        auto base = report.bytes_downloaded + entry_bytes;
        repo.download_file(file->path, destination, [&](std::uint64_t done, std::uint64_t) {
          if (progress) {
            progress(base + done, report.bytes_planned);
          }
        });
        entry_bytes += file->size;
      }
      if (entry->kind == EntryKind::module) {
        // The flags suffix can only be checked with the flags file's bytes.
        std::vector<EntryFileInfo> infos;
        for (const auto& file : entry->files) {
          infos.push_back({relative_name(*entry, file), file.size});
        }
        auto flags_name = flags_file_name(infos);
        std::optional<std::string> flags;
        if (!flags_name.empty()) {
          auto staged = stage / flags_name;
          flags = util::read_file(stdfs::exists(staged) ? staged : target / flags_name);
        }
        auto module = parse_module_name(stdfs::path(entry->path).filename().string());
        if (auto problem = check_flags_suffix(*module, flags); !problem.empty()) {
          report.skipped.push_back({entry->path, "flags-mismatch-in-repo", problem});
          continue;
        }
      }
      stdfs::create_directories(target.parent_path());
      if (decision.replace) {
        // Out of the way by the cleanup's rename-check-delete: a compiler that locked the
        // failed entry meanwhile (to retry it) keeps it.
        if (remove_safely(target, 1) == RemoveOutcome::taken) {
          report.skipped.push_back({entry->path, "locked-locally", "a compiler locked it during the pull"});
          continue;
        }
      }
      if (decision.fresh) {
        if (!util::rename_no_replace(stage, target)) {
          report.skipped.push_back({entry->path, "appeared-during-pull", "created locally while it was downloaded"});
          continue;
        }
      } else {
        auto names = local_names(target);
        if (std::any_of(names.begin(), names.end(), [](const std::string& name) {
              return is_lock_name(stdfs::path(name).filename().string());
            })) {
          report.skipped.push_back({entry->path, "locked-locally", "a compiler locked it during the pull"});
          continue;
        }
        auto files = decision.to_download;
        const auto* installing = entry; // a lambda cannot capture a structured binding in clang 14
        std::stable_sort(files.begin(), files.end(), [&](const storage::RepoFile* a, const storage::RepoFile* b) {
          return install_rank(relative_name(*installing, *a)) < install_rank(relative_name(*installing, *b));
        });
        for (const auto* file : files) {
          auto name = relative_name(*entry, *file);
          stdfs::create_directories((target / name).parent_path());
          rename_checked(stage / name, target / name);
        }
      }
      util::sync_directory(target);
      for (const auto* file : decision.to_download) {
        try {
          digests.remember(file->path, stamp_of(target / relative_name(*entry, *file)),
                           {file->size, file->sha256, file->git_blob_sha1});
        } catch (const Error&) {
        }
      }
      report.entries_pulled.push_back(entry->path);
      if (decision.replace) {
        report.entries_replaced.push_back(entry->path);
      }
      report.files_downloaded += decision.to_download.size();
      report.bytes_downloaded += entry_bytes;
    } catch (const Error& error) {
      report.errors.push_back({entry->path, "error", error.what()});
    } catch (const stdfs::filesystem_error& error) {
      report.errors.push_back({entry->path, "error", error.what()});
    }
    stdfs::remove_all(stage, ec);
  }
  return report;
}

} // namespace hubcache::compilecache
