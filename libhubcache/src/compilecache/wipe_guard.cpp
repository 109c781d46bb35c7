#include "hubcache/compilecache/wipe_guard.hpp"

#include "hubcache/compilecache/compile_cache.hpp"
#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

// Directories no compile cache is: wiping one empties a system.
constexpr std::array<std::string_view, 28> k_system_directories = {
  "/",      "/bin",       "/boot", "/dev",     "/etc",     "/home",    "/lib",       "/lib32", "/lib64", "/libx32",
  "/media", "/mnt",       "/opt",  "/proc",    "/root",    "/run",     "/sbin",      "/srv",   "/sys",   "/tmp",
  "/usr",   "/usr/local", "/var",  "/var/tmp", "/var/lib", "/var/log", "/var/cache", "/snap"};

// A private folder of a directory repo that is also this cache (see DirectoryRepository).
constexpr std::string_view k_repo_private_folder = ".neuron-cache";

bool is_same_or_ancestor(const stdfs::path& ancestor, const stdfs::path& path)
{
  auto a = ancestor.begin();
  auto p = path.begin();
  for (; a != ancestor.end(); ++a, ++p) {
    if (p == path.end() || *a != *p) {
      return false;
    }
  }
  return true;
}

[[noreturn]] void refuse(const stdfs::path& root, const std::string& why, std::string hint)
{
  throw IoError("refusing to wipe " + util::escape_control(root.string()) + ": " + why + "; nothing was removed",
                std::move(hint));
}

// Whether `name`, at the top of the root, is what a compile cache holds there.
bool belongs_to_a_compile_cache(const stdfs::path& root, const std::string& name)
{
  struct stat status {};
  if (::lstat((root / name).c_str(), &status) != 0 || util::is_temp_name(name)) {
    return true; // gone meanwhile, or an in-flight or trash name of a writer
  }
  if (name == "lock") {
    return S_ISREG(status.st_mode);
  }
  // A version folder may be a link (moved to another disk): a wipe removes the link only.
  bool folder = S_ISDIR(status.st_mode) || S_ISLNK(status.st_mode);
  return folder
         && ((name.starts_with(k_version_prefix) && name.size() > k_version_prefix.size())
             || (name == k_repo_private_folder && S_ISDIR(status.st_mode)));
}

} // namespace

void check_wipe_root(const stdfs::path& root, const std::optional<stdfs::path>& home)
{
  std::error_code ec;
  auto real = stdfs::canonical(root, ec);
  if (ec) {
    refuse(root, "cannot resolve it (" + ec.message() + ")", "name an existing compile cache directory");
  }
  for (auto system : k_system_directories) {
    if (real == stdfs::path(system)) {
      refuse(root,
             "it is " + (real == root ? std::string() : util::escape_control(real.string()) + ", ")
               + "a system directory",
             "name the compile cache itself (neuronxcc-<version> folders sit directly in it)");
    }
  }
  if (home && !home->empty()) {
    auto real_home = stdfs::weakly_canonical(*home, ec);
    if (!ec && is_same_or_ancestor(real, real_home)) {
      refuse(root, "it is or holds the home directory " + util::escape_control(real_home.string()),
             "name the compile cache itself (neuronxcc-<version> folders sit directly in it)");
    }
  }
  std::vector<std::string> foreign;
  for (const auto& item : stdfs::directory_iterator(real, ec)) {
    if (auto name = item.path().filename().string(); !belongs_to_a_compile_cache(real, name)) {
      foreign.push_back(std::move(name));
    }
  }
  if (ec) {
    refuse(root, "cannot list it (" + ec.message() + ")", "check its permissions");
  }
  if (!foreign.empty()) {
    std::sort(foreign.begin(), foreign.end());
    auto others = foreign.size() - 1;
    refuse(root,
           "it holds '" + util::escape_control(foreign.front()) + "'"
             + (others == 0 ? std::string(", which is") : " and " + std::to_string(others) + " more, which are")
             + " not part of a compile cache",
           "move what is yours out of it, or remove the compile cache's entries without --wipe");
  }
}

} // namespace hubcache::compilecache
