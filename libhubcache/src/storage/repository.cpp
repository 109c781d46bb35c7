#include "hubcache/storage/repository.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"

#include <cctype>
#include <set>
#include <utility>

namespace hubcache::storage {

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

std::vector<std::string> Repository::take_skipped_paths()
{
  std::lock_guard lock(m_skipped_mutex);
  return std::exchange(m_skipped_paths, {});
}

void Repository::note_skipped_path(std::string path)
{
  std::lock_guard lock(m_skipped_mutex);
  // Bounded: a hostile listing of millions of bad names must not grow memory without end.
  if (m_skipped_paths.size() < 1000) {
    m_skipped_paths.push_back(std::move(path));
  }
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

bool exists_yet(Repository& store)
{
  try {
    return store.exists();
  } catch (const RepoNotFound&) {
    return false;
  }
}

} // namespace hubcache::storage
