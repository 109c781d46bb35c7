#include "commit_payload.hpp"

#include <nlohmann/json.hpp>

#include "http_util.hpp"

namespace testhub {

namespace {

std::string strip_trailing_slashes(std::string path)
{
  while (!path.empty() && path.back() == '/')
    path.pop_back();
  return path;
}

} // namespace

CommitPlan read_commit_payload(std::istream& in, const StoredLfsSize& stored_lfs_size)
{
  CommitPlan plan;
  bool has_header = false;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty())
      continue;
    json item;
    try {
      item = json::parse(line);
    } catch (const json::exception&) {
      throw HubError(400, "Invalid NDJSON: line " + std::to_string(number) + " is not JSON");
    }
    // A value of the wrong type (a number for "key", a string for "size"...) is a 400 like
    // any other malformed line, as the Hub answers it, not an internal error.
    try {
      if (!item.is_object() || !item.contains("key") || !item.contains("value") || !item.at("value").is_object())
        throw HubError(400, "Invalid NDJSON: line " + std::to_string(number) + " needs \"key\" and \"value\"");
      const auto key = item.at("key").get<std::string>();
      const auto& value = item.at("value");
      const auto path_of = [&]() {
        if (!value.contains("path") || !value.at("path").is_string())
          throw HubError(400, "Invalid NDJSON: line " + std::to_string(number) + " needs a \"path\"");
        auto path = value.at("path").get<std::string>();
        if (key == "deletedFolder")
          path = strip_trailing_slashes(path);
        if (!is_valid_repo_path(path))
          throw HubError(400, "Invalid path in commit: '" + path
                                + "' (no leading '/', no empty, '.', '..' or '.git' component)");
        return path;
      };
      if (key == "header") {
        has_header = true;
        plan.summary = value.value("summary", std::string{});
        plan.description = value.value("description", std::string{});
        if (value.contains("parentCommit") && !value.at("parentCommit").is_null()) {
          const auto parent = value.at("parentCommit").get<std::string>();
          if (!is_hex(parent, 40))
            throw HubError(400, "Invalid parentCommit: " + parent);
          plan.parent_commit = parent;
        }
      } else if (key == "file") {
        CommitOperation op{CommitOperation::Kind::add_regular, path_of(), {}, {}, 0};
        const auto encoding = value.value("encoding", std::string{"base64"});
        const auto content = value.value("content", std::string{});
        if (encoding == "base64") {
          const auto decoded = base64_decode(content);
          if (!decoded)
            throw HubError(400, "Invalid base64 content for " + op.path);
          op.content = *decoded;
        } else if (encoding == "utf-8" || encoding == "utf8") {
          op.content = content;
        } else {
          throw HubError(400, "Unknown encoding \"" + encoding + "\" for " + op.path);
        }
        plan.operations.push_back(std::move(op));
      } else if (key == "lfsFile") {
        CommitOperation op{CommitOperation::Kind::add_lfs, path_of(), {}, {}, 0};
        if (value.contains("algo") && value.at("algo") != "sha256")
          throw HubError(400, "Unsupported LFS algo for " + op.path + " (only sha256)");
        op.sha256 = value.value("oid", std::string{});
        if (!is_hex(op.sha256, 64))
          throw HubError(400, "Invalid LFS oid for " + op.path);
        if (value.contains("size")) {
          // A float or negative size is refused (a cast of 1e300 is undefined behaviour).
          op.size = value.at("size").get_ref<const json::number_unsigned_t&>();
        } else { // server-side copy: the size is the stored object's
          op.size = stored_lfs_size(op.sha256);
        }
        plan.operations.push_back(std::move(op));
      } else if (key == "deletedFile") {
        plan.operations.push_back({CommitOperation::Kind::delete_file, path_of(), {}, {}, 0});
      } else if (key == "deletedFolder") {
        plan.operations.push_back({CommitOperation::Kind::delete_folder, path_of(), {}, {}, 0});
      } else {
        throw HubError(400, "Invalid NDJSON: unknown key \"" + key + "\" on line " + std::to_string(number));
      }
    } catch (const json::exception& e) {
      throw HubError(400, "Invalid NDJSON: line " + std::to_string(number) + ": " + e.what());
    }
  }
  if (!has_header)
    throw HubError(400, "Invalid NDJSON: the first line must be the header");
  if (plan.summary.empty())
    throw HubError(400, "The commit summary (title) must not be empty");
  return plan;
}

} // namespace testhub
