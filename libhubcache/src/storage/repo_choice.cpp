#include "hubcache/storage/repo_choice.hpp"

#include "hubcache/error.hpp"
#include "hubcache/hub/config.hpp"
#include "hubcache/util/fs.hpp"

namespace hubcache::storage {

std::string_view to_string(RepoSource source)
{
  switch (source) {
  case RepoSource::option: return "option";
  case RepoSource::environment: return "environment";
  case RepoSource::config_file: return "config-file";
  case RepoSource::own_config_file: return "own-config-file";
  case RepoSource::default_value: return "default";
  }
  return "default";
}

std::filesystem::path custom_cache_config_path(const util::Environment& env)
{
  return hub::hf_home(env) / std::string(k_custom_cache_file_name);
}

std::optional<std::string> read_custom_cache_repo(const std::filesystem::path& config_file)
{
  std::optional<std::string> content;
  try {
    // A repo name fits on one short line; a larger file is not a config file.
    content = util::read_file_if_exists(config_file, 64 * 1024);
  } catch (const IoError& error) {
    throw RepoConfigFileError(std::string("cannot read the cache repo config file: ") + error.what(),
                              "fix its permissions");
  }
  if (!content) {
    return std::nullopt;
  }
  auto begin = content->find_first_not_of(" \t\r\n\f\v");
  if (begin == std::string::npos) {
    throw RepoConfigFileError("the cache repo config file " + config_file.string() + " is empty",
                              "delete the file to use the default repo");
  }
  auto end = content->find_last_not_of(" \t\r\n\f\v");
  return content->substr(begin, end - begin + 1);
}

namespace {

// The variable that moves a config file elsewhere: HF_HOME for optimum's, XDG_CONFIG_HOME
// for neuron-cache's own.
std::string writable_hint(const std::filesystem::path& config_file)
{
  return std::string("make ") + (config_file.filename() == k_custom_cache_file_name ? "HF_HOME" : "XDG_CONFIG_HOME")
         + " point at a writable directory";
}

// Makes the config file's folder, then runs `write` (which writes or probes the file),
// each failure worded with the variable that moves the file elsewhere.
template <class Write>
void write_config_file(const std::filesystem::path& config_file, Write write)
{
  std::error_code ec;
  std::filesystem::create_directories(config_file.parent_path(), ec);
  if (ec) {
    throw IoError("cannot create " + config_file.parent_path().string() + ": " + ec.message(),
                  writable_hint(config_file));
  }
  try {
    write();
  } catch (const IoError& error) {
    throw IoError(std::string("cannot write the cache repo config file: ") + error.what(), writable_hint(config_file));
  }
}

} // namespace

void write_custom_cache_repo(const std::filesystem::path& config_file, std::string_view name)
{
  write_config_file(config_file, [&] { util::write_file_atomically(config_file, name); });
}

void ensure_config_writable(const std::filesystem::path& config_file)
{
  write_config_file(config_file, [&] {
    util::AtomicFile probe(config_file); // removed unused by its destructor
  });
}

std::filesystem::path own_config_path(const util::Environment& env)
{
  if (auto xdg = env.get_non_empty("XDG_CONFIG_HOME")) {
    return util::expand_user(*xdg, env) / "neuron-cache" / "repo";
  }
  return util::expand_user("~/.config/neuron-cache/repo", env);
}

std::filesystem::path choice_file_for(const RepoSpec& spec, const util::Environment& env)
{
  return spec.kind == RepoKind::hub ? custom_cache_config_path(env) : own_config_path(env);
}

std::filesystem::path record_repo_choice(const RepoSpec& spec, std::string_view name, const util::Environment& env)
{
  auto file = choice_file_for(spec, env);
  write_custom_cache_repo(file, name);
  if (spec.kind == RepoKind::hub) {
    // The Hub choice is optimum's file: neuron-cache's own must not shadow it any more.
    std::error_code ec;
    std::filesystem::remove(own_config_path(env), ec);
    if (ec) {
      throw IoError("cannot remove " + own_config_path(env).string() + ": " + ec.message());
    }
  }
  return file;
}

std::vector<std::filesystem::path> forget_repo_choice(const util::Environment& env)
{
  std::vector<std::filesystem::path> removed;
  for (const auto& file : {own_config_path(env), custom_cache_config_path(env)}) {
    std::error_code ec;
    if (std::filesystem::remove(file, ec)) {
      removed.push_back(file);
    } else if (ec) {
      throw IoError("cannot remove " + file.string() + ": " + ec.message(), "check its permissions");
    }
  }
  return removed;
}

std::optional<std::string> recorded_repo_choice(const util::Environment& env)
{
  for (const auto& file : {own_config_path(env), custom_cache_config_path(env)}) {
    try {
      if (auto name = read_custom_cache_repo(file)) {
        return name;
      }
    } catch (const ConfigError&) {
    }
  }
  return std::nullopt;
}

ResolvedRepo resolve_repo(const std::optional<std::string>& option, const util::Environment& env)
{
  if (option) {
    return ResolvedRepo{parse_repo_spec(*option), RepoSource::option, {}};
  }
  if (auto value = env.get_non_empty("CUSTOM_CACHE_REPO")) {
    try {
      return ResolvedRepo{parse_repo_spec(*value), RepoSource::environment, "CUSTOM_CACHE_REPO"};
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(std::string("CUSTOM_CACHE_REPO: ") + error.what(), error.hint());
    }
  }
  auto own_file = own_config_path(env);
  if (auto stored = read_custom_cache_repo(own_file)) {
    try {
      return ResolvedRepo{parse_repo_spec(*stored), RepoSource::own_config_file, own_file.string()};
    } catch (const InvalidArgument& error) {
      throw RepoConfigFileError(own_file.string() + ": " + error.what());
    }
  }
  auto config_file = custom_cache_config_path(env);
  if (auto stored = read_custom_cache_repo(config_file)) {
    try {
      return ResolvedRepo{parse_repo_spec(*stored), RepoSource::config_file, config_file.string()};
    } catch (const InvalidArgument& error) {
      throw RepoConfigFileError(config_file.string() + ": " + error.what());
    }
  }
  return ResolvedRepo{parse_repo_spec(k_default_cache_repo), RepoSource::default_value, "built-in default"};
}

} // namespace hubcache::storage
