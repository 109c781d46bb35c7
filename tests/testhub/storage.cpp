#include "storage.hpp"

#include <algorithm>
#include <atomic>
#include <fstream>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "commit_tree.hpp"
#include "http_util.hpp"
#include "hubcache/util/fd.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/hash.hpp"

namespace testhub {

namespace {
std::atomic<std::int64_t> g_commit_clock_offset{0};
} // namespace

void write_hub_file(const stdfs::path& target, std::string_view content)
{
  hubcache::util::write_file_atomically(target, content, false);
}

std::int64_t commit_clock_offset()
{
  return g_commit_clock_offset.load();
}

void set_commit_clock_offset(std::int64_t seconds)
{
  g_commit_clock_offset.store(seconds);
}

namespace {

using hubcache::util::HashAlgorithm;

// What the real Hub commits as "initial commit" in a new model repo.
constexpr std::string_view k_default_gitattributes = "*.7z filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.arrow filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.bin filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.bz2 filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.ckpt filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.ftz filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.gz filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.h5 filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.joblib filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.lfs.* filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.mlmodel filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.model filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.msgpack filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.npy filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.npz filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.onnx filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.ot filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.parquet filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.pb filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.pickle filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.pkl filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.pt filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.pth filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.rar filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
                                                     "saved_model/**/* filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.tar.* filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.tar filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.tflite filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.tgz filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.wasm filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.xz filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.zip filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*.zst filter=lfs diff=lfs merge=lfs -text\n"
                                                     "*tfevents* filter=lfs diff=lfs merge=lfs -text\n";

std::string sha1_hex(std::string_view data)
{
  return hubcache::util::hex_digest(HashAlgorithm::sha1, data);
}

std::string commit_object_id(const Commit& commit)
{
  std::string text = "tree " + commit.directory_oids.at("") + "\n";
  if (!commit.parent.empty())
    text += "parent " + commit.parent + "\n";
  const auto who =
    commit.author + " <" + commit.author + "@users.noreply.huggingface.co> " + std::to_string(commit.date) + " +0000\n";
  text += "author " + who + "committer " + who + "\n" + commit.title + "\n";
  if (!commit.message.empty())
    text += "\n" + commit.message + "\n";
  return sha1_hex("commit " + std::to_string(text.size()) + std::string(1, '\0') + text);
}

nlohmann::json entry_to_json(const FileEntry& entry)
{
  nlohmann::json e = {{"oid", entry.oid}, {"size", entry.size}};
  if (entry.is_lfs()) {
    e["sha256"] = entry.lfs_sha256;
    e["pointerSize"] = entry.pointer_size;
  }
  return e;
}

FileEntry entry_from_json(const nlohmann::json& e)
{
  FileEntry entry;
  entry.oid = e.at("oid");
  entry.size = e.at("size");
  if (e.contains("sha256")) {
    entry.lfs_sha256 = e.at("sha256");
    entry.pointer_size = e.at("pointerSize");
  }
  return entry;
}

// A commit on disk: its metadata and either every file ("files": a repo's first commit) or
// what it changed from its parent ("changes": path -> entry, null for a deletion), so that
// writing a commit costs what the commit holds, not what the repo holds.
nlohmann::json commit_to_json(const Commit& commit, const std::vector<std::string>* changed)
{
  nlohmann::json j = {{"id", commit.id},           {"parent", commit.parent}, {"title", commit.title},
                      {"message", commit.message}, {"author", commit.author}, {"date", commit.date}};
  if (!changed) {
    nlohmann::json files = nlohmann::json::object();
    for (const auto& [path, entry] : commit.files)
      files[path] = entry_to_json(entry);
    j["files"] = std::move(files);
    return j;
  }
  nlohmann::json changes = nlohmann::json::object();
  for (const auto& path : *changed) {
    const auto it = commit.files.find(path);
    changes[path] = it == commit.files.end() ? nlohmann::json(nullptr) : entry_to_json(it->second);
  }
  j["changes"] = std::move(changes);
  return j;
}

void metadata_from_json(Commit& commit, const nlohmann::json& j)
{
  commit.id = j.at("id");
  commit.parent = j.at("parent");
  commit.title = j.at("title");
  commit.message = j.at("message");
  commit.author = j.at("author");
  commit.date = j.at("date");
}

// A commit stored whole.
std::shared_ptr<Commit> commit_from_json(const nlohmann::json& j)
{
  auto commit = std::make_shared<Commit>();
  metadata_from_json(*commit, j);
  for (const auto& [path, e] : j.at("files").items())
    commit->files.emplace(path, entry_from_json(e));
  compute_directory_oids(*commit);
  return commit;
}

// A commit stored as its changes, applied to its parent.
std::shared_ptr<Commit> commit_from_changes(const Commit& parent, const nlohmann::json& j)
{
  auto commit = std::make_shared<Commit>();
  metadata_from_json(*commit, j);
  commit->files = parent.files;
  commit->directory_oids = parent.directory_oids;
  std::vector<std::string> changed;
  for (const auto& [path, e] : j.at("changes").items()) {
    changed.push_back(path);
    if (e.is_null())
      commit->files.erase(path);
    else
      commit->files.insert_or_assign(path, entry_from_json(e));
  }
  update_directory_oids(*commit, changed);
  return commit;
}

// The same bytes preupload judges (the clients' 512-byte sample): a file preupload calls
// "regular" is never refused as binary at commit, as on the real Hub.
bool looks_binary(std::string_view content)
{
  return content.substr(0, k_binary_sample_size).find('\0') != std::string_view::npos;
}

} // namespace

std::string lfs_pointer_text(const std::string& sha256, std::uint64_t size)
{
  return "version https://git-lfs.github.com/spec/v1\noid sha256:" + sha256 + "\nsize " + std::to_string(size) + "\n";
}

bool is_valid_repo_path(const std::string& path)
{
  if (path.empty() || path.front() == '/' || path.size() > 4096)
    return false;
  for (const auto& part : split(path, '/')) {
    if (part.empty() || part == "." || part == ".." || part == ".git")
      return false;
  }
  return path.find('\0') == std::string::npos;
}

bool is_valid_repo_name_part(const std::string& part)
{
  if (part.empty() || part.size() > 96)
    return false;
  if (!std::all_of(part.begin(), part.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
               || c == '.';
      }))
    return false;
  if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.')
    return false;
  return part.find("--") == std::string::npos && part.find("..") == std::string::npos;
}

bool is_hex(const std::string& text, std::size_t length)
{
  return text.size() == length && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Storage::Storage(stdfs::path root) : m_root(std::move(root))
{
  stdfs::create_directories(m_root / "repos");
  stdfs::create_directories(m_root / "tmp");
  stdfs::create_directories(m_root / "uploads");
  const auto server_file = m_root / "server.json";
  if (auto text = hubcache::util::read_file_if_exists(server_file)) {
    m_secret = nlohmann::json::parse(*text).at("secret");
  } else {
    m_secret = random_hex(32);
    write_hub_file(server_file, nlohmann::json{{"secret", m_secret}}.dump());
  }
}

stdfs::path Storage::temp_path(const std::string& hint) const
{
  return m_root / "tmp" / (hint + "." + random_hex(16));
}

stdfs::path Storage::repo_dir(const std::string& repo_id) const
{
  return m_root / "repos" / repo_id;
}

std::optional<RepoMeta> Storage::find_repo(const std::string& repo_id) const
{
  const auto parts = split(repo_id, '/');
  if (parts.size() != 2 || !is_valid_repo_name_part(parts[0]) || !is_valid_repo_name_part(parts[1]))
    return std::nullopt;
  const auto text = hubcache::util::read_file_if_exists(repo_dir(repo_id) / "repo.json");
  if (!text)
    return std::nullopt;
  const auto j = nlohmann::json::parse(*text);
  RepoMeta meta;
  meta.repo_id = repo_id;
  meta.ns = parts[0];
  meta.name = parts[1];
  meta.uid = j.at("id");
  meta.is_private = j.at("private");
  meta.created = j.at("createdAt");
  meta.author = j.at("author");
  return meta;
}

RepoMeta Storage::create_repo(const std::string& ns, const std::string& name, bool is_private,
                              const std::string& author)
{
  const auto repo_id = ns + "/" + name;
  const auto dir = repo_dir(repo_id);
  stdfs::create_directories(dir.parent_path());
  // Build the repo aside and rename it in, so readers never see half a repo.
  const auto staging = temp_path("repo");
  stdfs::create_directories(staging / "commits");
  stdfs::create_directories(staging / "blobs");
  stdfs::create_directories(staging / "lfs");
  RepoMeta meta{repo_id, ns, name, random_hex(24), is_private, unix_now(), author};
  write_hub_file(
    staging / "repo.json",
    nlohmann::json{{"id", meta.uid}, {"private", is_private}, {"createdAt", meta.created}, {"author", author}}.dump());
  Commit initial;
  initial.title = "initial commit";
  initial.author = author;
  initial.date = meta.created;
  const std::string attributes(k_default_gitattributes);
  const auto oid = hubcache::util::git_blob_sha1(attributes);
  write_hub_file(staging / "blobs" / oid, attributes);
  initial.files[".gitattributes"] = FileEntry{oid, attributes.size(), {}, 0};
  compute_directory_oids(initial);
  initial.id = commit_object_id(initial);
  write_hub_file(staging / "commits" / (initial.id + ".json"), commit_to_json(initial, nullptr).dump());
  write_hub_file(staging / "refs.json", nlohmann::json{{"main", initial.id}}.dump());
  std::error_code ec;
  stdfs::rename(staging, dir, ec);
  if (ec) {
    stdfs::remove_all(staging);
    throw HubError(409, "You already created this model repo: " + repo_id);
  }
  return meta;
}

bool Storage::delete_repo(const std::string& repo_id)
{
  if (!find_repo(repo_id))
    return false;
  const auto trash = temp_path("deleted");
  stdfs::rename(repo_dir(repo_id), trash);
  stdfs::remove_all(trash);
  return true;
}

void Storage::set_private(const RepoMeta& repo, bool is_private)
{
  write_hub_file(
    repo_dir(repo.repo_id) / "repo.json",
    nlohmann::json{{"id", repo.uid}, {"private", is_private}, {"createdAt", repo.created}, {"author", repo.author}}
      .dump());
}

std::map<std::string, std::string> Storage::branches(const RepoMeta& repo) const
{
  const auto text = hubcache::util::read_file(repo_dir(repo.repo_id) / "refs.json");
  return nlohmann::json::parse(text).get<std::map<std::string, std::string>>();
}

void Storage::write_refs(const RepoMeta& repo, const std::map<std::string, std::string>& refs)
{
  write_hub_file(repo_dir(repo.repo_id) / "refs.json", nlohmann::json(refs).dump());
}

std::optional<std::string> Storage::resolve_revision(const RepoMeta& repo, const std::string& revision) const
{
  const auto refs = branches(repo);
  std::string name = revision == "HEAD" ? "main" : revision;
  if (name.rfind("refs/heads/", 0) == 0)
    name = name.substr(11);
  if (auto it = refs.find(name); it != refs.end())
    return it->second;
  if (is_hex(revision, 40) && stdfs::exists(repo_dir(repo.repo_id) / "commits" / (revision + ".json")))
    return revision;
  return std::nullopt;
}

std::shared_ptr<const Commit> Storage::commit(const RepoMeta& repo, const std::string& id) const
{
  const auto cached = [&](const std::string& commit_id) -> std::shared_ptr<const Commit> {
    std::lock_guard lock(m_cache_mutex);
    const auto it = m_commit_cache.find(repo.uid + ":" + commit_id);
    return it == m_commit_cache.end() ? nullptr : it->second;
  };
  if (auto found = cached(id))
    return found;
  // Back to a commit known or stored whole, then forward applying each one's changes.
  std::vector<nlohmann::json> pending;
  std::shared_ptr<Commit> base;
  for (auto at = id; !base;) {
    auto j = nlohmann::json::parse(hubcache::util::read_file(repo_dir(repo.repo_id) / "commits" / (at + ".json")));
    if (j.contains("files")) {
      base = commit_from_json(j);
      break;
    }
    at = j.at("parent").get<std::string>();
    pending.push_back(std::move(j));
    base = std::const_pointer_cast<Commit>(cached(at));
  }
  std::lock_guard lock(m_cache_mutex);
  m_commit_cache.emplace(repo.uid + ":" + base->id, base);
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
    base = commit_from_changes(*base, *it);
    m_commit_cache.emplace(repo.uid + ":" + base->id, base);
  }
  return base;
}

std::vector<std::shared_ptr<const Commit>> Storage::history(const RepoMeta& repo, const std::string& head,
                                                            std::size_t limit) const
{
  std::vector<std::shared_ptr<const Commit>> commits;
  std::string id = head;
  while (!id.empty() && commits.size() < limit) {
    commits.push_back(commit(repo, id));
    id = commits.back()->parent;
  }
  return commits;
}

stdfs::path Storage::blob_path(const RepoMeta& repo, const std::string& sha1) const
{
  return repo_dir(repo.repo_id) / "blobs" / sha1;
}

stdfs::path Storage::lfs_path(const RepoMeta& repo, const std::string& sha256) const
{
  return repo_dir(repo.repo_id) / "lfs" / sha256;
}

std::map<std::string, std::uint64_t>& Storage::xet_objects(const RepoMeta& repo) const
{
  auto [it, inserted] = m_xet_objects.try_emplace(repo.uid);
  if (inserted) {
    const auto text = hubcache::util::read_file_if_exists(repo_dir(repo.repo_id) / "xet-objects.jsonl", 1ull << 34);
    for (const auto& line : split(text.value_or(""), '\n')) {
      const auto parsed = nlohmann::json::parse(line, nullptr, false); // a cut last line is skipped
      if (parsed.is_object() && parsed.contains("sha256") && parsed.contains("size"))
        it->second[parsed.at("sha256").get<std::string>()] = parsed.at("size").get<std::uint64_t>();
    }
  }
  return it->second;
}

void Storage::record_xet_objects(const RepoMeta& repo,
                                 const std::vector<std::pair<std::string, std::uint64_t>>& objects)
{
  std::string lines;
  for (const auto& [sha256, size] : objects)
    lines += nlohmann::json{{"sha256", sha256}, {"size", size}}.dump() + "\n";
  std::lock_guard lock(m_cache_mutex);
  auto& known = xet_objects(repo);
  const auto path = repo_dir(repo.repo_id) / "xet-objects.jsonl";
  // O_APPEND, one write: a line is whole or (after a crash) the last one is cut.
  const hubcache::util::Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd || ::write(fd.get(), lines.data(), lines.size()) != static_cast<ssize_t>(lines.size()))
    throw HubError(500, "Cannot append to " + path.string());
  for (const auto& [sha256, size] : objects)
    known[sha256] = size;
}

std::optional<std::uint64_t> Storage::lfs_object_size(const RepoMeta& repo, const std::string& sha256) const
{
  {
    // Objects that came through Xet first: a commit of 1,000 of them asks without a stat each.
    std::lock_guard lock(m_cache_mutex);
    const auto& known = xet_objects(repo);
    if (const auto it = known.find(sha256); it != known.end())
      return it->second;
  }
  std::error_code ec;
  const auto actual = stdfs::file_size(lfs_path(repo, sha256), ec);
  if (!ec)
    return actual;
  return std::nullopt;
}

bool Storage::has_lfs_object(const RepoMeta& repo, const std::string& sha256, std::uint64_t size) const
{
  return lfs_object_size(repo, sha256) == size;
}

std::optional<stdfs::path> Storage::lfs_object_file(const RepoMeta& repo, const std::string& sha256) const
{
  auto path = lfs_path(repo, sha256);
  if (stdfs::exists(path))
    return path;
  if (!is_hex(sha256, 64) || !lfs_object_size(repo, sha256) || !m_xet_rebuild || !m_xet_rebuild(sha256, path))
    return std::nullopt;
  return path; // rebuilt atomically: two readers at once write the same bytes
}

stdfs::path Storage::entry_blob(const RepoMeta& repo, const FileEntry& entry)
{
  if (entry.is_lfs())
    return blob_path(repo, store_blob(repo, lfs_pointer_text(entry.lfs_sha256, entry.size)));
  return blob_path(repo, entry.oid);
}

void Storage::install_lfs_object(const RepoMeta& repo, const stdfs::path& temp, const std::string& sha256)
{
  stdfs::rename(temp, lfs_path(repo, sha256));
}

std::string Storage::store_blob(const RepoMeta& repo, const std::string& content)
{
  const auto oid = hubcache::util::git_blob_sha1(content);
  const auto path = blob_path(repo, oid);
  if (!stdfs::exists(path))
    write_hub_file(path, content);
  return oid;
}

std::shared_ptr<Commit> Storage::write_commit(const RepoMeta& repo, Commit commit,
                                              const std::vector<std::string>& changed)
{
  update_directory_oids(commit, changed);
  commit.id = commit_object_id(commit);
  write_hub_file(repo_dir(repo.repo_id) / "commits" / (commit.id + ".json"), commit_to_json(commit, &changed).dump());
  return std::make_shared<Commit>(std::move(commit));
}

Commit Storage::take_commit(const RepoMeta& repo, const std::string& id)
{
  {
    std::lock_guard lock(m_cache_mutex);
    const auto it = m_commit_cache.find(repo.uid + ":" + id);
    if (it != m_commit_cache.end() && it->second.use_count() == 1) {
      Commit taken = std::move(*it->second);
      m_commit_cache.erase(it);
      return taken;
    }
  }
  return *commit(repo, id);
}

std::shared_ptr<const Commit> Storage::apply_commit(const RepoMeta& repo, const std::string& branch,
                                                    const CommitPlan& plan, const TreeCheck& check)
{
  auto refs = branches(repo);
  const auto head_it = refs.find(branch);
  if (head_it == refs.end())
    throw HubError(404, "Invalid rev id: " + branch, "RevisionNotFound");
  if (plan.parent_commit && *plan.parent_commit != head_it->second)
    throw HubError(412, "A commit has happened since. Please refresh and try again.");

  // From here on the parent's file list is the new commit's: if this commit is refused, the
  // parent is rebuilt from disk when next asked for.
  Commit next = take_commit(repo, head_it->second);
  const auto parent_file_count = next.files.size();
  next.parent = next.id;
  next.title = plan.summary;
  next.message = plan.description;
  next.author = plan.author;
  next.date = unix_now() + commit_clock_offset();
  // Whether the parent held a path, for each path this commit touches (known at its first touch).
  std::map<std::string, bool> parent_had;
  const auto touch = [&](const std::string& path) { parent_had.try_emplace(path, next.files.count(path) > 0); };
  std::vector<std::string> added;   // files added or replaced
  std::vector<std::string> changed; // and deleted
  for (const auto& op : plan.operations) {
    switch (op.kind) {
    case CommitOperation::Kind::add_regular: {
      if (looks_binary(op.content))
        throw HubError(400, "Your push was rejected because it contains binary files. Please use "
                            "https://huggingface.co/docs/hub/xet to store binary files. Offending file: - "
                              + op.path);
      if (op.content.size() > 10 * 1024 * 1024)
        throw HubError(400, "Your push was rejected because it contains files larger than 10 MiB. Please use "
                            "https://git-lfs.github.com/ to store large files. Offending file: - "
                              + op.path);
      touch(op.path);
      next.files[op.path] = FileEntry{store_blob(repo, op.content), op.content.size(), {}, 0};
      added.push_back(op.path);
      break;
    }
    case CommitOperation::Kind::add_lfs: {
      if (!has_lfs_object(repo, op.sha256, op.size))
        throw HubError(400, "Your push was rejected because an LFS pointer pointed to a file that does not exist. "
                            "For instance, this can happen if you used git push --no-verify to push your changes. "
                            "Offending file: - "
                              + op.path);
      // The pointer's oid only: its text is written if a raw download asks for it (entry_blob).
      const auto pointer = lfs_pointer_text(op.sha256, op.size);
      touch(op.path);
      next.files[op.path] = FileEntry{hubcache::util::git_blob_sha1(pointer), op.size, op.sha256, pointer.size()};
      added.push_back(op.path);
      break;
    }
    case CommitOperation::Kind::delete_file:
      touch(op.path);
      if (next.files.erase(op.path) == 0)
        throw HubError(404, "A file with this name doesn't exist: " + op.path, "EntryNotFound");
      changed.push_back(op.path);
      break;
    case CommitOperation::Kind::delete_folder: {
      const auto prefix = op.path + "/";
      const auto before = changed.size();
      touch(op.path);
      if (next.files.erase(op.path) > 0)
        changed.push_back(op.path);
      for (auto it = next.files.lower_bound(prefix); it != next.files.end() && it->first.rfind(prefix, 0) == 0;) {
        touch(it->first);
        changed.push_back(it->first);
        it = next.files.erase(it);
      }
      if (changed.size() == before)
        throw HubError(404, "A file with this name doesn't exist: " + op.path, "EntryNotFound");
      break;
    }
    }
  }
  // A path cannot be both a file and a directory.
  std::erase_if(added, [&](const std::string& path) { return !next.files.count(path); }); // added, then deleted
  check_files_are_not_folders(next.files, added);
  if (check) {
    TreeChange change{added, {}, parent_file_count};
    for (const auto& path : added) {
      if (!parent_had.at(path))
        change.new_paths.push_back(path);
    }
    check(next, change);
  }
  changed.insert(changed.end(), added.begin(), added.end());
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  auto written = write_commit(repo, std::move(next), changed);
  refs[branch] = written->id;
  write_refs(repo, refs);
  std::lock_guard lock(m_cache_mutex);
  m_commit_cache.emplace(repo.uid + ":" + written->id, written);
  return written;
}

void Storage::create_branch(const RepoMeta& repo, const std::string& branch, const std::string& commit_id)
{
  auto refs = branches(repo);
  refs[branch] = commit_id;
  write_refs(repo, refs);
}

void Storage::delete_branch(const RepoMeta& repo, const std::string& branch)
{
  auto refs = branches(repo);
  refs.erase(branch);
  write_refs(repo, refs);
}

} // namespace testhub
