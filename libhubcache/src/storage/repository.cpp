#include "hubcache/storage/repository.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/process.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

namespace hubcache::storage {

int commit_stop_signal() noexcept
{
  return util::interrupt_signal();
}

std::string FileSource::file_for(std::string_view path_in_repo) const
{
  return m_directory ? util::join_path(*m_directory, path_in_repo) : m_data;
}

std::vector<std::string> Repository::list_folders(std::string_view prefix)
{
  std::string folder(prefix);
  while (!folder.empty() && folder.back() == '/') {
    folder.pop_back();
  }
  auto start = folder.empty() ? 0 : folder.size() + 1;
  std::set<std::string> names;
  for (const auto& file : list_files(folder)) {
    auto slash = file.path.find('/', start);
    if (file.path.size() > start && slash != std::string::npos) {
      names.insert(file.path.substr(start, slash - start));
    }
  }
  return {names.begin(), names.end()};
}

std::map<std::string, std::int64_t> Repository::item_dates(std::string_view prefix, bool recursive)
{
  auto folder = folder_of_prefix(prefix);
  auto start = folder.empty() ? 0 : folder.size() + 1;
  std::map<std::string, std::int64_t> dates;
  for (const auto& file : list_files(folder)) {
    auto slash = recursive ? std::string::npos : file.path.find('/', start);
    auto& date = dates[file.path.substr(0, slash)];
    date = std::max(date, file.modified);
  }
  return dates;
}

bool is_valid_path_in_repo(std::string_view path) noexcept
{
  if (path.empty() || path.front() == '/' || path.back() == '/') {
    return false;
  }
  for (char c : path) {
    if (std::iscntrl(static_cast<unsigned char>(c)) != 0 || c == '\\') {
      return false;
    }
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    auto component = path.substr(start, end - start);
    if (component.empty() || component == "." || component == ".." || component == ".git") {
      return false;
    }
    start = end + 1;
  }
  return true;
}

std::vector<SkippedPath> Repository::take_skipped()
{
  std::lock_guard lock(m_skipped_mutex);
  return std::exchange(m_skipped, {});
}

std::vector<std::string> Repository::take_skipped_paths()
{
  std::vector<std::string> paths;
  for (auto& item : take_skipped()) {
    paths.push_back(std::move(item.path));
  }
  return paths;
}

void Repository::note_skipped_path(std::string path, std::string reason)
{
  std::lock_guard lock(m_skipped_mutex);
  // Bounded: a hostile listing of millions of bad names must not grow memory without end.
  // Once each: a command that walks the repo twice warns once.
  if (m_skipped.size() < 1000
      && std::none_of(m_skipped.begin(), m_skipped.end(), [&](const SkippedPath& item) { return item.path == path; })) {
    m_skipped.push_back({std::move(path), std::move(reason)});
  }
}

util::FileDigests Repository::download_listed(const RepoFile& listed, const std::filesystem::path& destination,
                                              const util::ProgressCallback& progress, bool flush)
{
  download_file(listed.path, destination, progress, flush);
  std::error_code ec;
  auto size = std::filesystem::file_size(destination, ec);
  if (ec || size != listed.size) {
    std::filesystem::remove(destination, ec);
    throw IntegrityError(listed.path + " in " + describe() + " is not the size its listing gave ("
                           + std::to_string(listed.size) + " bytes)",
                         "run again: it changed since it was listed");
  }
  return {.size = listed.size, .sha256 = listed.sha256, .git_blob_sha1 = listed.git_blob_sha1, .etag = listed.etag};
}

std::vector<std::string> Repository::complete_digests(const std::vector<RepoFile*>& /*files*/)
{
  return {};
}

std::string folder_of_prefix(std::string_view prefix)
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

std::vector<std::string_view> path_components(std::string_view path)
{
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

void validate_path_in_repo(std::string_view path)
{
  if (!is_valid_path_in_repo(path)) {
    throw InvalidArgument("invalid path in repo: '" + std::string(path) + "'",
                          "paths are relative, '/'-separated, without '.', '..' or '.git' components");
  }
}

bool has_no_checksum(const RepoFile& file)
{
  return file.sha256.empty() && file.git_blob_sha1.empty() && file.etag.empty();
}

void complete_listing(Repository& store, std::vector<RepoFile>& listing, const std::vector<RepoFile*>& wanted)
{
  if (wanted.empty()) {
    return;
  }
  auto gone = store.complete_digests(wanted);
  std::sort(gone.begin(), gone.end());
  std::erase_if(listing, [&](const RepoFile& file) { return std::binary_search(gone.begin(), gone.end(), file.path); });
}

bool exists_yet(Repository& store)
{
  try {
    return store.exists();
  } catch (const RepoNotFound&) {
    return false;
  }
}

} // namespace hubcache::storage
