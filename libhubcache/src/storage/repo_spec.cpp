#include "hubcache/storage/repo_spec.hpp"

#include "hubcache/aws/s3_client.hpp"
#include "hubcache/error.hpp"
#include "hubcache/hub/config.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/fs.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

namespace hubcache::storage {

namespace {

constexpr std::string_view k_spec_hint =
  "give a Hub repo id such as org/name, an absolute path (/path or file:///path) for a directory repo,"
  " s3://bucket/prefix, or hf://buckets/namespace/name for a Storage Bucket";

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

constexpr std::array<std::string_view, 3> k_hub_hosts = {"https://huggingface.co/", "https://hf.co/",
                                                         "https://www.huggingface.co/"};

// `hf://buckets/<ns>/<name>[/<prefix>]`, or a bucket's page as copied from a browser
// (`https://huggingface.co/buckets/<ns>/<name>[/tree/<prefix>]`): the bucket; nullopt for
// anything else.
std::optional<RepoSpec> bucket_of(std::string_view text)
{
  std::string_view rest;
  bool browser = false;
  if (text.starts_with("hf://buckets/")) {
    rest = text.substr(13);
  }
  for (auto host : k_hub_hosts) {
    if (text.starts_with(host) && text.substr(host.size()).starts_with("buckets/")) {
      rest = text.substr(host.size() + 8);
      browser = true;
    }
  }
  if (rest.empty() && !text.starts_with("hf://buckets/") && !browser) {
    return std::nullopt;
  }
  while (rest.ends_with('/')) {
    rest.remove_suffix(1);
  }
  auto first = rest.find('/');
  auto second = first == std::string_view::npos ? std::string_view::npos : rest.find('/', first + 1);
  RepoSpec spec;
  spec.kind = RepoKind::bucket;
  spec.bucket_id = std::string(rest.substr(0, second));
  if (first == std::string_view::npos || !is_valid_hub_repo_id(spec.bucket_id)) {
    throw InvalidArgument(quoted(text) + " does not name a Storage Bucket",
                          "write it as hf://buckets/namespace/name[/folder]");
  }
  auto prefix = second == std::string_view::npos ? std::string_view() : rest.substr(second + 1);
  if (browser && !prefix.empty()) {
    if (!prefix.starts_with("tree/") || prefix.size() == 5) {
      throw InvalidArgument(quoted(text) + " names a page inside a bucket",
                            "give the bucket's address, https://huggingface.co/buckets/namespace/name");
    }
    prefix.remove_prefix(5);
  }
  if (!prefix.empty() && !is_valid_path_in_repo(prefix)) {
    throw InvalidArgument("the folder " + quoted(prefix) + " of " + quoted(text) + " is not a safe path",
                          "use a relative folder without '.', '..', '//' or control characters");
  }
  spec.bucket_prefix = std::string(prefix);
  return spec;
}

// `https://huggingface.co/<org>/<name>` (hf.co too, `/tree/main` and a trailing '/'
// allowed), as copied from a browser: the id in it; nullopt for another URL.
std::optional<std::string_view> hub_id_of_browser_url(std::string_view text)
{
  std::string_view rest;
  for (auto host : k_hub_hosts) {
    if (text.starts_with(host)) {
      rest = text.substr(host.size());
    }
  }
  if (rest.empty()) {
    return std::nullopt;
  }
  auto first = rest.substr(0, rest.find('/'));
  if (first == "datasets" || first == "spaces") {
    throw InvalidArgument(quoted(text) + " is a " + std::string(first.substr(0, first.size() - 1))
                            + " repo; a cache repo is a model repo",
                          std::string(k_spec_hint));
  }
  for (std::string_view suffix : {"/tree/main/", "/tree/main", "/"}) {
    if (rest.ends_with(suffix)) {
      rest.remove_suffix(suffix.size());
      break;
    }
  }
  if (std::count(rest.begin(), rest.end(), '/') > 1) {
    throw InvalidArgument(quoted(text) + " names a page inside a repo; a cache repo is used at its main branch",
                          "give the repo's address, https://huggingface.co/org/name, or its id, org/name");
  }
  return rest;
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
  if (kind == RepoKind::s3) {
    return s3_url;
  }
  if (kind == RepoKind::bucket) {
    return "hf://buckets/" + bucket_id + (bucket_prefix.empty() ? "" : "/" + bucket_prefix);
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
    RepoSpec spec;
    spec.kind = RepoKind::s3;
    spec.s3_url = aws::parse_s3_url(text).to_string();
    return spec;
  }
  if (auto bucket = bucket_of(text)) {
    return *bucket;
  }
  std::string_view id = text;
  if (text.starts_with("hf://")) {
    id = text.substr(5);
  } else if (auto browser = hub_id_of_browser_url(text)) {
    id = *browser;
  } else if (auto scheme = text.find("://"); scheme != std::string_view::npos) {
    throw InvalidArgument("unknown repo scheme in " + quoted(text), std::string(k_spec_hint));
  }
  // `org/name/`, as shells complete folders and people copy paths (but `name/` stays a
  // mistake: most likely a relative directory, which a repo name cannot be).
  if (id.ends_with('/') && id.find('/') < id.size() - 1) {
    id.remove_suffix(1);
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

} // namespace

void write_custom_cache_repo(const std::filesystem::path& config_file, std::string_view name)
{
  std::error_code ec;
  std::filesystem::create_directories(config_file.parent_path(), ec);
  if (ec) {
    throw IoError("cannot create " + config_file.parent_path().string() + ": " + ec.message(),
                  writable_hint(config_file));
  }
  try {
    util::write_file_atomically(config_file, name);
  } catch (const IoError& error) {
    throw IoError(std::string("cannot write the cache repo config file: ") + error.what(), writable_hint(config_file));
  }
}

void ensure_config_writable(const std::filesystem::path& config_file)
{
  std::error_code ec;
  std::filesystem::create_directories(config_file.parent_path(), ec);
  if (ec) {
    throw IoError("cannot create " + config_file.parent_path().string() + ": " + ec.message(),
                  writable_hint(config_file));
  }
  try {
    util::AtomicFile probe(config_file); // removed unused by its destructor
  } catch (const IoError& error) {
    throw IoError(std::string("cannot write the cache repo config file: ") + error.what(), writable_hint(config_file));
  }
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
