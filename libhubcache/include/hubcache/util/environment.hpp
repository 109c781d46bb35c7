#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace hubcache::util {

// Read access to environment variables, injectable so tests never touch the real ones.
class Environment {
public:
  using Lookup = std::function<std::optional<std::string>(const std::string&)>;

  explicit Environment(Lookup lookup) : m_lookup(std::move(lookup)) {}
  static Environment process();
  static Environment from_map(std::map<std::string, std::string> values);
  // This environment with `overrides` in front: what a child started with these extra
  // variables sees (e.g. a manifest's `env`), for code that must decide as the child will.
  Environment overlaid(std::map<std::string, std::string> overrides) const;

  std::optional<std::string> get(const std::string& name) const { return m_lookup(name); }
  // Unset and empty are the same for every variable we read.
  std::optional<std::string> get_non_empty(const std::string& name) const;
  // 1/ON/YES/TRUE, case-insensitive, as huggingface_hub reads boolean variables.
  bool get_flag(const std::string& name) const;

private:
  Lookup m_lookup;
};

// `~` and `~/...` expanded with HOME.
std::filesystem::path expand_user(const std::string& path, const Environment& env);

// Where scratch files go: $TMPDIR, else /tmp.
std::filesystem::path scratch_parent(const Environment& env);

} // namespace hubcache::util
