#include "hubcache/storage/repo_spec.hpp"

#include "hubcache/error.hpp"
#include "hubcache/hub/config.hpp"
#include "hubcache/util/fs.hpp"

#include <cctype>

namespace hubcache::storage {

namespace {

constexpr std::string_view k_spec_hint =
  "give a Hub repo id such as org/name, or an absolute path (/path or file:///path) for a directory repo";

bool is_repo_name_char(char c)
{
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
}

// One segment as huggingface_hub's validate_repo_id accepts it (ASCII subset).
bool is_valid_segment(std::string_view segment)
{
  if (segment.empty() || segment.size() > 96) {
    return false;
  }
  for (char c : segment) {
    if (!is_repo_name_char(c)) {
      return false;
    }
  }
  auto edge_ok = [](char c) { return c != '-' && c != '.'; };
  return edge_ok(segment.front()) && edge_ok(segment.back());
}

std::string quoted(std::string_view text)
{
  std::string out = "'";
  for (char c : text) {
    if (std::iscntrl(static_cast<unsigned char>(c)) != 0) {
      out += "\\x";
      static constexpr char digits[] = "0123456789abcdef";
      out += digits[(static_cast<unsigned char>(c) >> 4) & 0xf];
      out += digits[static_cast<unsigned char>(c) & 0xf];
    } else {
      out += c;
    }
  }
  return out + "'";
}

RepoSpec parse_directory(std::string_view original, std::string_view path_text)
{
  if (path_text.empty() || path_text.front() != '/') {
    throw InvalidArgument("directory repo " + quoted(original) + " is not an absolute path",
                          "use an absolute path such as /data/neuron-cache or file:///data/neuron-cache");
  }
  // Leading slashes are one on Linux; lexically_normal keeps "//", whose canonical form
  // file://// would then read back as another directory.
  while (path_text.starts_with("//")) {
    path_text.remove_prefix(1);
  }
  std::filesystem::path path = std::filesystem::path(path_text).lexically_normal();
  auto text = path.string();
  if (text.size() > 1 && text.back() == '/') {
    path = text.substr(0, text.size() - 1);
  }
  RepoSpec spec;
  spec.kind = RepoKind::directory;
  spec.directory = path;
  return spec;
}

} // namespace

bool is_valid_hub_repo_id(std::string_view id) noexcept
{
  if (id.find("--") != std::string_view::npos || id.find("..") != std::string_view::npos) {
    return false;
  }
  if (id.size() >= 4 && id.substr(id.size() - 4) == ".git") {
    return false;
  }
  auto slash = id.find('/');
  if (slash == std::string_view::npos) {
    return is_valid_segment(id);
  }
  auto name = id.substr(slash + 1);
  return name.find('/') == std::string_view::npos && is_valid_segment(id.substr(0, slash)) && is_valid_segment(name);
}

std::string RepoSpec::canonical() const
{
  if (kind == RepoKind::directory) {
    return "file://" + directory.string();
  }
  return hub_id;
}

RepoSpec parse_repo_spec(std::string_view text)
{
  if (text.empty()) {
    throw InvalidArgument("the cache repo name is empty", std::string(k_spec_hint));
  }
  for (char c : text) {
    if (std::iscntrl(static_cast<unsigned char>(c)) != 0) {
      throw InvalidArgument("cache repo name " + quoted(text) + " contains control characters",
                            std::string(k_spec_hint));
    }
  }
  if (text.find_first_of(" \t") != std::string_view::npos) {
    throw InvalidArgument("cache repo name " + quoted(text) + " contains spaces", std::string(k_spec_hint));
  }
  if (text.starts_with("file://")) {
    auto rest = text.substr(7);
    if (!rest.starts_with("/")) {
      throw InvalidArgument("file URL " + quoted(text) + " must name a local absolute path",
                            "write it as file:///absolute/path");
    }
    return parse_directory(text, rest);
  }
  if (text.starts_with("/")) {
    return parse_directory(text, text);
  }
  if (text.starts_with("s3://")) {
    throw NotSupported("S3 cache repos (" + quoted(text) + ") are not supported yet",
                       "use a Hub repo id or a directory path for now");
  }
  std::string_view id = text;
  if (text.starts_with("hf://")) {
    id = text.substr(5);
  } else if (auto scheme = text.find("://"); scheme != std::string_view::npos) {
    throw InvalidArgument("unknown repo scheme in " + quoted(text), std::string(k_spec_hint));
  }
  if (!is_valid_hub_repo_id(id)) {
    std::string why = id.find('/') != std::string_view::npos && id.find('/') != id.rfind('/')
                        ? " (a Hub id has at most one '/'; directory repos need an absolute path)"
                        : "";
    throw InvalidArgument(quoted(text) + " is neither a Hub repo id nor an absolute path" + why,
                          std::string(k_spec_hint));
  }
  RepoSpec spec;
  spec.kind = RepoKind::hub;
  spec.hub_id = std::string(id);
  return spec;
}

std::string_view to_string(RepoSource source)
{
  switch (source) {
  case RepoSource::option: return "option";
  case RepoSource::environment: return "environment";
  case RepoSource::config_file: return "config-file";
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
    content = util::read_file_if_exists(config_file);
  } catch (const IoError& error) {
    throw ConfigError(std::string("cannot read the cache repo config file: ") + error.what(),
                      "fix its permissions, or run: neuron-cache set NAME");
  }
  if (!content) {
    return std::nullopt;
  }
  auto begin = content->find_first_not_of(" \t\r\n\f\v");
  if (begin == std::string::npos) {
    throw ConfigError("the cache repo config file " + config_file.string() + " is empty",
                      "run: neuron-cache set NAME, or delete the file to use the default repo");
  }
  auto end = content->find_last_not_of(" \t\r\n\f\v");
  return content->substr(begin, end - begin + 1);
}

void write_custom_cache_repo(const std::filesystem::path& config_file, std::string_view name)
{
  std::error_code ec;
  std::filesystem::create_directories(config_file.parent_path(), ec);
  if (ec) {
    throw IoError("cannot create " + config_file.parent_path().string() + ": " + ec.message(),
                  "make HF_HOME point at a writable directory");
  }
  try {
    util::write_file_atomically(config_file, name);
  } catch (const IoError& error) {
    throw IoError(std::string("cannot write the cache repo config file: ") + error.what(),
                  "make HF_HOME point at a writable directory");
  }
}

void ensure_config_writable(const std::filesystem::path& config_file)
{
  std::error_code ec;
  std::filesystem::create_directories(config_file.parent_path(), ec);
  if (ec) {
    throw IoError("cannot create " + config_file.parent_path().string() + ": " + ec.message(),
                  "make HF_HOME point at a writable directory");
  }
  try {
    util::AtomicFile probe(config_file); // removed unused by its destructor
  } catch (const IoError& error) {
    throw IoError(std::string("cannot write the cache repo config file: ") + error.what(),
                  "make HF_HOME point at a writable directory");
  }
}

ResolvedRepo resolve_repo(const std::optional<std::string>& option, const util::Environment& env)
{
  if (option) {
    return ResolvedRepo{parse_repo_spec(*option), RepoSource::option, "--repo-id"};
  }
  if (auto value = env.get_non_empty("CUSTOM_CACHE_REPO")) {
    try {
      return ResolvedRepo{parse_repo_spec(*value), RepoSource::environment, "CUSTOM_CACHE_REPO"};
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(std::string("CUSTOM_CACHE_REPO: ") + error.what(), error.hint());
    }
  }
  auto config_file = custom_cache_config_path(env);
  if (auto stored = read_custom_cache_repo(config_file)) {
    try {
      return ResolvedRepo{parse_repo_spec(*stored), RepoSource::config_file, config_file.string()};
    } catch (const InvalidArgument& error) {
      throw ConfigError(config_file.string() + ": " + error.what(), "run: neuron-cache set NAME");
    }
  }
  return ResolvedRepo{parse_repo_spec(k_default_cache_repo), RepoSource::default_value, "built-in default"};
}

} // namespace hubcache::storage
