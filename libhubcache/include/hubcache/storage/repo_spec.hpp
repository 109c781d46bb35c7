#pragma once

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

} // namespace hubcache::storage
