#pragma once

#include "hubcache/util/environment.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hubcache::storage {

enum class RepoKind { hub, directory, s3, bucket };

// Where a cache repo lives, parsed from what a user typed. Hub: `org/name`, `name` or
// `hf://org/name`. Directory: an absolute path or `file:///abs/path`. Storage Bucket:
// `hf://buckets/<ns>/<name>[/<prefix>]` or its page `https://huggingface.co/buckets/<ns>/<name>`.
struct RepoSpec {
  RepoKind kind = RepoKind::hub;
  std::string hub_id;              // hub only; may lack a namespace before `create`
  std::filesystem::path directory; // directory only; absolute and lexically normal
  std::string s3_url;              // s3 only; `s3://bucket[/prefix]` without trailing '/'
  std::string bucket_id;           // bucket only; `ns/name`
  std::string bucket_prefix;       // bucket only; a folder inside it, without leading or trailing '/'

  // The form stored in the config file and shown to users.
  std::string canonical() const;
  bool has_namespace() const { return hub_id.find('/') != std::string::npos; }
};

// Throws InvalidArgument (with a hint) for anything else.
RepoSpec parse_repo_spec(std::string_view text);
bool is_valid_hub_repo_id(std::string_view id) noexcept;

inline constexpr std::string_view k_default_cache_repo = "aws-neuron/optimum-neuron-cache";
inline constexpr std::string_view k_custom_cache_file_name = "optimum_neuron_custom_cache";

// Where the repo in effect was named: config_file is optimum-neuron's file (Hub ids),
// own_config_file neuron-cache's (directories and S3), so the source alone tells which.
enum class RepoSource { option, environment, config_file, own_config_file, default_value };
std::string_view to_string(RepoSource source);

struct ResolvedRepo {
  RepoSpec spec;
  RepoSource source = RepoSource::default_value;
  std::string origin; // empty for the caller's option, "CUSTOM_CACHE_REPO", the config file path, "built-in default"
};

// $HF_HOME/optimum_neuron_custom_cache
std::filesystem::path custom_cache_config_path(const util::Environment& env);

// The name stored in the config file, trimmed; nullopt when there is no file. An empty
// or unreadable file is a ConfigError: silently falling back would push to the wrong repo.
std::optional<std::string> read_custom_cache_repo(const std::filesystem::path& config_file);
// Writes `name` with no trailing newline (byte-compatible with optimum-neuron), creating
// the directory when needed. Atomic: the previous file stays intact on failure.
void write_custom_cache_repo(const std::filesystem::path& config_file, std::string_view name);

// Throws IoError unless `write_custom_cache_repo` can succeed: lets `create` refuse
// before it makes a repo it could not then register.
void ensure_config_writable(const std::filesystem::path& config_file);

// neuron-cache's own choice of repo, for the repos optimum-neuron cannot read (directories,
// S3): ${XDG_CONFIG_HOME:-~/.config}/neuron-cache/repo. optimum's file holds Hub ids only,
// so optimum-neuron on the same host never reads a path as a Hub id.
std::filesystem::path own_config_path(const util::Environment& env);

// Where a choice made by `set`/`create` is recorded: a Hub id in optimum's file, byte for
// byte, clearing neuron-cache's own; anything else in neuron-cache's own file, leaving
// optimum's untouched. Returns the file written.
std::filesystem::path record_repo_choice(const RepoSpec& spec, std::string_view name, const util::Environment& env);
// The file record_repo_choice would write for `spec`.
std::filesystem::path choice_file_for(const RepoSpec& spec, const util::Environment& env);
// Removes the choice `set`/`create` recorded, from both files; returns the files removed.
std::vector<std::filesystem::path> forget_repo_choice(const util::Environment& env);
// The choice recorded in either file (neuron-cache's own first), for "was already set" notes.
std::optional<std::string> recorded_repo_choice(const util::Environment& env);

// Option > CUSTOM_CACHE_REPO > neuron-cache's own file > optimum's file >
// aws-neuron/optimum-neuron-cache. Lower levels are not read once a higher one is set.
ResolvedRepo resolve_repo(const std::optional<std::string>& option, const util::Environment& env);

} // namespace hubcache::storage
