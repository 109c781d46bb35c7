#include "hubcache/util/environment.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <pwd.h>
#include <unistd.h>

namespace hubcache::util {

Environment Environment::process()
{
  return Environment([](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) {
      return std::nullopt;
    }
    return std::string(value);
  });
}

Environment Environment::from_map(std::map<std::string, std::string> values)
{
  return Environment([values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) {
      return std::nullopt;
    }
    return it->second;
  });
}

Environment Environment::overlaid(std::map<std::string, std::string> overrides) const
{
  return Environment(
    [base = m_lookup, overrides = std::move(overrides)](const std::string& name) -> std::optional<std::string> {
      auto it = overrides.find(name);
      if (it != overrides.end()) {
        return it->second;
      }
      return base(name);
    });
}

std::optional<std::string> Environment::get_non_empty(const std::string& name) const
{
  auto value = get(name);
  if (!value || value->empty()) {
    return std::nullopt;
  }
  return value;
}

bool Environment::get_flag(const std::string& name) const
{
  auto value = get(name);
  if (!value) {
    return false;
  }
  std::string lowered = *value;
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lowered == "1" || lowered == "on" || lowered == "yes" || lowered == "true";
}

std::filesystem::path expand_user(const std::string& path, const Environment& env)
{
  if (path.empty() || path[0] != '~' || (path.size() > 1 && path[1] != '/')) {
    return path;
  }
  std::string home;
  if (auto value = env.get_non_empty("HOME")) {
    home = *value;
  } else if (const passwd* entry = ::getpwuid(::getuid()); entry != nullptr && entry->pw_dir != nullptr) {
    home = entry->pw_dir;
  } else {
    home = "/";
  }
  return std::filesystem::path(home) / path.substr(path.size() > 1 ? 2 : 1);
}

std::filesystem::path scratch_parent(const Environment& env)
{
  return env.get_non_empty("TMPDIR").value_or("/tmp");
}

} // namespace hubcache::util
