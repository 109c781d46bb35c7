#pragma once

#include "hubcache/util/fs.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace test_support {

// A fresh directory under the system temp dir, removed when the test ends.
class TempDir {
public:
  TempDir()
  {
    std::random_device random;
    m_path = std::filesystem::temp_directory_path()
             / ("neuron-cache-unit-" + std::to_string(random()) + "-" + std::to_string(random()));
    std::filesystem::create_directories(m_path);
  }
  ~TempDir()
  {
    std::error_code ec;
    std::filesystem::permissions(m_path, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(m_path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return m_path; }
  std::filesystem::path operator/(const std::string& child) const { return m_path / child; }

private:
  std::filesystem::path m_path;
};

// The owner part of a temp name (util/temp_owner.hpp) that process `pid` of this node
// would write: `<host>.<pid>.<node>-0-` (start time unknown).
inline std::string temp_owner_of(pid_t pid)
{
  return hubcache::util::host_name() + "." + std::to_string(pid) + "." + hubcache::util::this_node() + "-0-";
}

// Writes `content` to `path`, creating its folders.
inline void write(const std::filesystem::path& path, std::string_view content)
{
  std::filesystem::create_directories(path.parent_path());
  hubcache::util::write_file_atomically(path, content);
}

// The message and hint of the ErrorType that `function` throws; fails the test if none.
template <typename ErrorType, typename F>
std::string message_of(F&& function)
{
  try {
    function();
  } catch (const ErrorType& error) {
    return std::string(error.what()) + " | " + error.hint();
  }
  FAIL("expected an error");
  return {};
}

} // namespace test_support
