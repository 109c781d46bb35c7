#include "hubcache/storage/directory_repository.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"
#include "hubcache/util/json.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <random>
#include <thread>
#include <unistd.h>

namespace hubcache::storage {

namespace stdfs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::string_view k_marker_name = "neuron-cache-repo.json";
constexpr std::string_view k_format_name = "neuron-cache-directory-repo";
constexpr std::string_view k_manifest_header = "neuron-cache-manifest 1\n";
constexpr int k_format_version = 1;
constexpr int k_max_commit_attempts = 1000;

std::string utc_timestamp()
{
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buffer;
}

std::string sequence_name(std::uint64_t sequence)
{
  std::string digits = std::to_string(sequence);
  return std::string(20 - std::min<std::size_t>(20, digits.size()), '0') + digits;
}

std::optional<std::uint64_t> parse_sequence(std::string_view text)
{
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

bool is_hex(std::string_view text, std::size_t length)
{
  if (text.size() != length) {
    return false;
  }
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

std::string normalize_prefix(std::string_view prefix)
{
  std::string out(prefix);
  while (!out.empty() && out.back() == '/') {
    out.pop_back();
  }
  while (!out.empty() && out.front() == '/') {
    out.erase(out.begin());
  }
  return out;
}

// Streams `source` into `out`, hashing as it goes, and checks it against `expected`.
void copy_verified(const stdfs::path& source, util::AtomicFile& out, const std::string& expected_sha256,
                   std::uint64_t expected_size, const util::ProgressCallback& progress, const std::string& what)
{
  std::optional<util::Fd> fd;
  try {
    fd = util::open_regular_file_if_exists(source);
  } catch (const IoError& error) {
    throw IntegrityError("the content of " + what + " in the repo cannot be read (" + error.what() + ")",
                         "the repo is damaged; push the file again");
  }
  if (!fd) {
    throw IntegrityError("the content of " + what + " is missing from the repo (" + source.string() + ")",
                         "the repo is damaged; push the file again");
  }
  util::Hasher hasher(util::HashAlgorithm::sha256);
  std::uint64_t done = 0;
  util::read_chunks(*fd, source, [&](const char* data, std::size_t n) {
    hasher.update(data, n);
    out.write(data, n);
    done += n;
    if (done > expected_size) {
      throw IntegrityError("the content of " + what + " in the repo is larger than its recorded size",
                           "the repo is damaged; push the file again");
    }
    if (progress) {
      progress(done, expected_size);
    }
  });
  if (done != expected_size || hasher.hex_digest() != expected_sha256) {
    throw IntegrityError("the content of " + what + " in the repo does not match its recorded size and sha256",
                         "the repo is damaged; push the file again");
  }
}

} // namespace

std::string serialize_manifest(const DirectoryRepository::Manifest& manifest)
{
  std::string out(k_manifest_header);
  out.reserve(manifest.size() * 120);
  for (const auto& [path, entry] : manifest) {
    out += entry.sha256;
    out += ' ';
    out += std::to_string(entry.size);
    out += ' ';
    out += path;
    out += '\n';
  }
  return out;
}

DirectoryRepository::Manifest parse_manifest(std::string_view text)
{
  if (!text.starts_with(k_manifest_header)) {
    throw IntegrityError("a manifest in the repo has an unknown format");
  }
  DirectoryRepository::Manifest manifest;
  std::size_t position = k_manifest_header.size();
  while (position < text.size()) {
    auto end = text.find('\n', position);
    if (end == std::string_view::npos) {
      throw IntegrityError("a manifest in the repo is truncated");
    }
    std::string_view line = text.substr(position, end - position);
    position = end + 1;
    auto first = line.find(' ');
    auto second = first == std::string_view::npos ? first : line.find(' ', first + 1);
    if (second == std::string_view::npos) {
      throw IntegrityError("a manifest in the repo has a malformed line");
    }
    auto size = parse_sequence(line.substr(first + 1, second - first - 1));
    auto sha = line.substr(0, first);
    if (!size || !is_hex(sha, 64)) {
      throw IntegrityError("a manifest in the repo has a malformed line");
    }
    manifest.emplace(std::string(line.substr(second + 1)), DirectoryRepository::ManifestEntry{std::string(sha), *size});
  }
  return manifest;
}

DirectoryRepository::DirectoryRepository(stdfs::path root) : m_root(std::move(root)) {}

std::string DirectoryRepository::spec() const { return "file://" + m_root.string(); }

std::string DirectoryRepository::describe() const { return "directory repo " + m_root.string(); }

stdfs::path DirectoryRepository::marker_path() const { return m_root / std::string(k_marker_name); }

stdfs::path DirectoryRepository::object_path(std::string_view sha256) const
{
  return m_root / "objects" / std::string(sha256.substr(0, 2)) / std::string(sha256);
}

stdfs::path DirectoryRepository::commit_path(std::uint64_t sequence) const
{
  return m_root / "commits" / sequence_name(sequence);
}

bool DirectoryRepository::exists()
{
  std::optional<std::string> marker;
  try {
    marker = util::read_file_if_exists(marker_path());
  } catch (const IoError&) {
    return false;
  }
  if (!marker) {
    return false;
  }
  auto parsed = util::try_parse_json(*marker);
  return parsed && parsed->is_object() && parsed->value("format", "") == k_format_name;
}

void DirectoryRepository::require_repo()
{
  if (!exists()) {
    std::error_code ec;
    if (stdfs::exists(m_root, ec) && !stdfs::is_empty(m_root, ec)) {
      throw NotACacheRepo(m_root.string() + " exists but is not a neuron-cache repo", ErrorFacts{spec()});
    }
    throw RepoNotFound("cache repo " + m_root.string() + " does not exist", ErrorFacts{spec()});
  }
}

std::string DirectoryRepository::create(const RepoCreateOptions& options)
{
  if (exists()) {
    if (!options.exist_ok) {
      throw RepoAlreadyExists("cache repo " + m_root.string() + " already exists", ErrorFacts{spec()});
    }
    return spec();
  }
  std::error_code ec;
  if (stdfs::exists(m_root, ec) && !stdfs::is_empty(m_root, ec)) {
    throw RepoAlreadyExists(m_root.string() + " is not empty and is not a neuron-cache repo", ErrorFacts{spec()},
                            "choose an empty or new directory");
  }
  for (const auto& directory : {m_root / "objects", m_root / "commits"}) {
    stdfs::create_directories(directory, ec);
    if (ec) {
      throw IoError("cannot create " + directory.string() + ": " + ec.message(),
                    "check that the parent directory is writable");
    }
  }
  // The marker goes last: a create interrupted before it leaves no "repo".
  {
    // The initial commit is claimed like any other, so concurrent creates agree on it.
    auto manifest_sha = store_manifest(Manifest{});
    json record = {{"sequence", 1}, {"parent", nullptr}, {"manifest", manifest_sha},
                   {"message", "Create cache repo"}, {"description", ""}, {"timestamp", utc_timestamp()},
                   {"host", util::host_name()}, {"files", 0}};
    record["id"] = util::hex_digest(util::HashAlgorithm::sha1, record.dump() + std::to_string(::getpid()));
    util::AtomicFile file(commit_path(1));
    file.write(record.dump(2) + "\n");
    const auto& temp = file.finish_without_rename();
    util::create_exclusive_from(temp, commit_path(1));
    ::unlink(temp.c_str());
  }
  json marker = {{"format", k_format_name}, {"version", k_format_version}, {"created", utc_timestamp()}};
  util::write_file_atomically(marker_path(), marker.dump(2) + "\n");
  util::sync_directory(m_root);
  return spec();
}

std::uint64_t DirectoryRepository::find_head_sequence()
{
  std::uint64_t sequence = 0;
  if (auto hint = util::read_file_if_exists(m_root / "HEAD")) {
    auto space = hint->find(' ');
    if (auto parsed = parse_sequence(std::string_view(*hint).substr(0, space))) {
      sequence = *parsed;
    }
  }
  std::error_code ec;
  if (sequence == 0 || !stdfs::exists(commit_path(sequence), ec)) {
    // No usable hint: list the commits once.
    sequence = 0;
    for (const auto& item : stdfs::directory_iterator(m_root / "commits", ec)) {
      auto name = item.path().filename().string();
      if (util::is_temp_name(name)) {
        continue;
      }
      if (auto parsed = parse_sequence(name); parsed && *parsed > sequence) {
        sequence = *parsed;
      }
    }
  }
  // Commits published after the hint was written.
  while (stdfs::exists(commit_path(sequence + 1), ec)) {
    ++sequence;
  }
  return sequence;
}

std::shared_ptr<const DirectoryRepository::Manifest> DirectoryRepository::load_manifest(const std::string& sha256)
{
  auto text = util::read_file_if_exists(object_path(sha256));
  if (!text) {
    throw IntegrityError("the repo's manifest " + sha256 + " is missing", "the repo is damaged");
  }
  if (util::hex_digest(util::HashAlgorithm::sha256, *text) != sha256) {
    throw IntegrityError("the repo's manifest " + sha256 + " is corrupted", "the repo is damaged");
  }
  return std::make_shared<const Manifest>(parse_manifest(*text));
}

DirectoryRepository::Head DirectoryRepository::load_head()
{
  require_repo();
  auto sequence = find_head_sequence();
  if (sequence == 0) {
    Head head;
    head.manifest = std::make_shared<const Manifest>();
    return head;
  }
  {
    std::lock_guard lock(m_head_mutex);
    if (m_cached_head && m_cached_head->sequence == sequence) {
      return *m_cached_head;
    }
  }
  auto text = util::read_file(commit_path(sequence));
  auto parsed = util::try_parse_json(text);
  if (!parsed || !parsed->is_object() || !parsed->contains("id") || !parsed->contains("manifest")) {
    throw IntegrityError("commit record " + commit_path(sequence).string() + " is malformed", "the repo is damaged");
  }
  Head head;
  head.sequence = sequence;
  const auto& record = *parsed;
  head.id = record["id"].get<std::string>();
  head.manifest_sha256 = record["manifest"].get<std::string>();
  head.manifest = load_manifest(head.manifest_sha256);
  std::lock_guard lock(m_head_mutex);
  m_cached_head = head;
  return head;
}

std::optional<std::string> DirectoryRepository::revision()
{
  auto head = load_head();
  if (head.sequence == 0) {
    return std::nullopt;
  }
  return head.id;
}

std::vector<RepoFile> DirectoryRepository::list_files(std::string_view prefix)
{
  auto head = load_head();
  auto folder = normalize_prefix(prefix);
  std::vector<RepoFile> files;
  auto begin = folder.empty() ? head.manifest->begin() : head.manifest->lower_bound(folder + "/");
  for (auto it = begin; it != head.manifest->end(); ++it) {
    if (!folder.empty() && !it->first.starts_with(folder + "/")) {
      break;
    }
    files.push_back(RepoFile{it->first, it->second.size, it->second.sha256, {}});
  }
  return files;
}

std::optional<RepoFile> DirectoryRepository::stat(std::string_view path)
{
  auto head = load_head();
  auto it = head.manifest->find(path);
  if (it == head.manifest->end()) {
    return std::nullopt;
  }
  return RepoFile{it->first, it->second.size, it->second.sha256, {}};
}

const DirectoryRepository::ManifestEntry& DirectoryRepository::lookup(const Head& head, std::string_view path)
{
  auto it = head.manifest->find(path);
  if (it == head.manifest->end()) {
    throw EntryNotFound(std::string(path) + " does not exist in " + describe());
  }
  return it->second;
}

std::string DirectoryRepository::read_file(std::string_view path)
{
  auto head = load_head();
  const auto& entry = lookup(head, path);
  auto content = util::read_file_if_exists(object_path(entry.sha256));
  if (!content || content->size() != entry.size || util::hex_digest(util::HashAlgorithm::sha256, *content) != entry.sha256) {
    throw IntegrityError("the content of " + std::string(path) + " in " + describe() + " is missing or corrupted",
                         "the repo is damaged; push the file again");
  }
  return std::move(*content);
}

void DirectoryRepository::download_file(std::string_view path, const stdfs::path& destination,
                                        const util::ProgressCallback& progress)
{
  auto head = load_head();
  const auto& entry = lookup(head, path);
  util::AtomicFile out(destination);
  copy_verified(object_path(entry.sha256), out, entry.sha256, entry.size, progress, std::string(path));
  out.commit();
}

DirectoryRepository::ManifestEntry DirectoryRepository::store_object(const FileSource& source)
{
  // Content goes to a temp file in objects/ while being hashed; the rename to its final
  // content-addressed name is idempotent, so racing writers of the same bytes agree.
  auto staging_dir = m_root / "objects";
  util::AtomicFile staged(staging_dir / "incoming");
  util::Hasher hasher(util::HashAlgorithm::sha256);
  std::uint64_t size = 0;
  if (const auto* bytes = std::get_if<std::string>(&source.content)) {
    hasher.update(*bytes);
    staged.write(*bytes);
    size = bytes->size();
  } else {
    const auto& file = std::get<stdfs::path>(source.content);
    size = util::read_file_chunks(file, [&](const char* data, std::size_t n) {
      hasher.update(data, n);
      staged.write(data, n);
    });
  }
  ManifestEntry entry{hasher.hex_digest(), size};
  auto target = object_path(entry.sha256);
  std::error_code ec;
  if (stdfs::exists(target, ec) && stdfs::file_size(target, ec) == size) {
    return entry; // already stored; `staged` removes its temp file
  }
  stdfs::create_directories(target.parent_path(), ec);
  const auto& temp = staged.finish_without_rename();
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    int saved = errno;
    ::unlink(temp.c_str());
    throw IoError("cannot store an object in " + describe() + ": " + std::strerror(saved));
  }
  return entry;
}

std::string DirectoryRepository::store_manifest(const Manifest& manifest)
{
  return store_object(FileSource::from_bytes(serialize_manifest(manifest))).sha256;
}

std::size_t DirectoryRepository::sweep_stale_temp_files(std::chrono::seconds min_age)
{
  std::size_t removed = 0;
  auto now = stdfs::file_time_type::clock::now();
  for (const auto& directory : {m_root / "objects", m_root / "commits"}) {
    std::error_code ec;
    for (const auto& item : stdfs::directory_iterator(directory, ec)) {
      if (!util::is_temp_name(item.path().filename().string())) {
        continue;
      }
      std::error_code stat_error;
      auto modified = stdfs::last_write_time(item.path(), stat_error);
      if (!stat_error && now - modified >= min_age && stdfs::remove(item.path(), stat_error)) {
        ++removed;
      }
    }
  }
  return removed;
}

void DirectoryRepository::check_writable()
{
  require_repo();
  // Commits write objects, then claim a record in commits/: both must take new files.
  for (const auto& directory : {m_root / "objects", m_root / "commits"}) {
    try {
      util::TemporaryFile probe(directory / "write-probe");
    } catch (const IoError& error) {
      throw WriteAccessDenied("You do not have write access to " + spec() + ": cannot create files in "
                                + directory.string() + " (" + error.what() + ")",
                              ErrorFacts{spec(), false, true}, "fix its permissions");
    }
  }
}

CommitResult DirectoryRepository::commit(const CommitRequest& request, const util::ProgressCallback& progress)
{
  if (request.message.empty()) {
    throw InvalidArgument("a commit needs a message");
  }
  for (const auto& addition : request.additions) {
    validate_path_in_repo(addition.path_in_repo);
  }
  for (const auto& deletion : request.deletions) {
    validate_path_in_repo(normalize_prefix(deletion.path_in_repo));
  }
  require_repo();

  // Objects first: they are invisible until a manifest names them.
  std::vector<std::pair<std::string, ManifestEntry>> added;
  added.reserve(request.additions.size());
  std::uint64_t total = 0;
  for (const auto& addition : request.additions) {
    if (const auto* file = std::get_if<stdfs::path>(&addition.source.content)) {
      std::error_code ec;
      total += stdfs::file_size(*file, ec);
    } else {
      total += std::get<std::string>(addition.source.content).size();
    }
  }
  std::uint64_t done = 0;
  std::vector<RepoFile> files;
  files.reserve(request.additions.size());
  for (const auto& addition : request.additions) {
    added.emplace_back(addition.path_in_repo, store_object(addition.source));
    const auto& stored = added.back().second;
    files.push_back({addition.path_in_repo, stored.size, stored.sha256,
                     addition.digests && addition.digests->sha256 == stored.sha256 ? addition.digests->git_blob_sha1
                                                                                 : std::string()});
    done += added.back().second.size;
    if (progress) {
      progress(done, total);
    }
  }

  std::mt19937 jitter{std::random_device{}()};
  for (int attempt = 0; attempt < k_max_commit_attempts; ++attempt) {
    auto head = load_head();
    if (request.parent_revision && *request.parent_revision != head.id) {
      throw ConflictError("the repo moved on since revision " + *request.parent_revision,
                          "re-run the command to apply it on the new head");
    }
    Manifest next = *head.manifest;
    std::size_t deleted = 0;
    for (const auto& deletion : request.deletions) {
      auto path = normalize_prefix(deletion.path_in_repo);
      if (deletion.is_folder) {
        auto folder = path + "/";
        for (auto it = next.lower_bound(folder); it != next.end() && it->first.starts_with(folder);) {
          it = next.erase(it);
          ++deleted;
        }
      } else {
        deleted += next.erase(path);
      }
    }
    std::size_t changed = 0;
    for (const auto& [path, entry] : added) {
      auto it = next.find(path);
      if (it == next.end() || it->second.sha256 != entry.sha256) {
        next[path] = entry;
        ++changed;
      }
    }
    if (changed == 0 && deleted == 0) {
      return CommitResult{head.id, false, 0, 0, files};
    }
    auto manifest_sha = store_manifest(next);
    auto sequence = head.sequence + 1;
    json record = {{"sequence", sequence},
                   {"parent", head.id.empty() ? json(nullptr) : json(head.id)},
                   {"manifest", manifest_sha},
                   {"message", request.message},
                   {"description", request.description},
                   {"timestamp", utc_timestamp()},
                   {"host", util::host_name()},
                   {"files", next.size()}};
    record["id"] = util::hex_digest(util::HashAlgorithm::sha1,
                              record.dump() + std::to_string(::getpid()) + std::to_string(jitter()));
    util::AtomicFile file(commit_path(sequence));
    file.write(record.dump(2) + "\n");
    const auto& temp = file.finish_without_rename();
    if (before_publish_hook) {
      before_publish_hook();
    }
    bool claimed = util::create_exclusive_from(temp, commit_path(sequence));
    ::unlink(temp.c_str());
    if (claimed) {
      auto id = record["id"].get<std::string>();
      try {
        util::write_file_atomically(m_root / "HEAD", std::to_string(sequence) + " " + id + "\n");
      } catch (const IoError&) {
        // The hint is an optimization; readers find the head without it.
      }
      if (sequence % 32 == 0) {
        sweep_stale_temp_files();
      }
      return CommitResult{id, true, changed, deleted, files};
    }
    // Someone else published this sequence: re-plan on top of theirs.
    std::this_thread::sleep_for(std::chrono::microseconds(jitter() % (1000 * (1 + std::min(attempt, 20)))));
  }
  throw ConflictError("could not commit to " + describe() + " after " + std::to_string(k_max_commit_attempts)
                        + " attempts: too many concurrent writers",
                      "re-run the command");
}

} // namespace hubcache::storage
