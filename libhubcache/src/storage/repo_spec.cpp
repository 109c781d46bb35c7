#include "hubcache/storage/repo_spec.hpp"

#include "hubcache/aws/s3_client.hpp"
#include "hubcache/error.hpp"
#include "hubcache/hub/config.hpp"
#include "hubcache/storage/repository.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"

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
  return "'" + util::escape_control(text) + "'";
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

} // namespace hubcache::storage
