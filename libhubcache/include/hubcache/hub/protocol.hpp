#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The pure pieces of the Hub's upload protocol (preupload, LFS batch, multipart, the
// NDJSON commit payload): built and parsed here, sent by HubApi. See
// shared/reference/hub-api.md.
namespace hubcache::hub {

inline constexpr std::size_t k_preupload_batch_size = 256;
inline constexpr std::size_t k_lfs_batch_size = 256;
inline constexpr std::size_t k_preupload_sample_size = 512;

std::string base64_encode(std::string_view bytes);
std::string lfs_pointer_text(std::string_view sha256, std::uint64_t size);
// [begin, end) index ranges of at most `batch` items covering `count`.
std::vector<std::pair<std::size_t, std::size_t>> batch_ranges(std::size_t count, std::size_t batch);

// One line each (with its '\n') of the NDJSON commit payload.
std::string commit_header_line(std::string_view summary, std::string_view description,
                               const std::optional<std::string>& parent_commit);
std::string commit_lfs_file_line(std::string_view path, std::string_view sha256, std::uint64_t size);
std::string commit_deletion_line(std::string_view path, bool is_folder);
// A regular file line is written in pieces so its content can be streamed: prefix,
// base64 content, suffix.
std::string commit_file_line_prefix(std::string_view path);
inline constexpr std::string_view k_commit_file_line_suffix = "\"}}\n";

struct PreuploadFile {
  std::string path;
  std::uint64_t size = 0;
  std::string sample; // first <= 512 bytes, raw
};
struct PreuploadAnswer {
  std::string path;
  bool lfs = false;
  bool should_ignore = false;
  std::optional<std::string> remote_oid; // sha256 (lfs) or git blob sha1 (regular)
};
struct PreuploadResult {
  std::optional<std::string> commit_oid;
  std::vector<PreuploadAnswer> files;
};
std::string preupload_request_body(const std::vector<PreuploadFile>& files, std::size_t begin, std::size_t end);
PreuploadResult parse_preupload_response(std::string_view body);

struct LfsAction {
  std::string href;
  std::vector<std::pair<std::string, std::string>> header;
};
struct LfsBatchObject {
  std::string oid;
  std::uint64_t size = 0;
  std::optional<LfsAction> upload; // absent: the Hub already has the object
  std::optional<LfsAction> verify;
  bool xet = false; // the batch chose the "xet" transfer: `upload` carries the CAS token
};
struct LfsObjectRef {
  std::string oid;
  std::uint64_t size = 0;
};
std::string lfs_batch_request_body(const std::vector<LfsObjectRef>& objects, std::size_t begin, std::size_t end,
                                   std::string_view branch, bool offer_xet = false);
std::vector<LfsBatchObject> parse_lfs_batch_response(std::string_view body);

// Part URLs of an HF multipart upload, ordered by part number; nullopt for a basic upload.
// Throws RemoteError when the part count does not cover `size` with `chunk_size` parts.
struct MultipartPlan {
  std::uint64_t chunk_size = 0;
  std::vector<std::string> part_urls;
};
std::optional<MultipartPlan> multipart_plan(const LfsAction& upload, std::uint64_t size);

} // namespace hubcache::hub
