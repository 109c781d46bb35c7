#include "hubcache/hub/protocol.hpp"

#include "detail.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/json.hpp"

namespace hubcache::hub {

using json = nlohmann::json;
using namespace detail;

std::string base64_encode(std::string_view bytes)
{
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    auto n = (static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16)
             | (static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8)
             | static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 2]));
    out.push_back(alphabet[(n >> 18) & 63]);
    out.push_back(alphabet[(n >> 12) & 63]);
    out.push_back(alphabet[(n >> 6) & 63]);
    out.push_back(alphabet[n & 63]);
  }
  if (auto rest = bytes.size() - i; rest > 0) {
    unsigned n = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) {
      n |= static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    }
    out.push_back(alphabet[(n >> 18) & 63]);
    out.push_back(alphabet[(n >> 12) & 63]);
    out.push_back(rest == 2 ? alphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string lfs_pointer_text(std::string_view sha256, std::uint64_t size)
{
  return "version https://git-lfs.github.com/spec/v1\noid sha256:" + std::string(sha256) + "\nsize "
         + std::to_string(size) + "\n";
}

std::vector<std::pair<std::size_t, std::size_t>> batch_ranges(std::size_t count, std::size_t batch)
{
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t begin = 0; begin < count; begin += batch) {
    ranges.emplace_back(begin, std::min(count, begin + batch));
  }
  return ranges;
}

namespace {

// JSON text for the Hub, which takes UTF-8 only: a name or message in another encoding
// (a Linux file name can be any bytes) is refused here, naming it, instead of surfacing
// as a JSON library error.
std::string utf8_json(const json& value, std::string_view path)
{
  try {
    return value.dump();
  } catch (const json::type_error&) {
    if (path.empty()) {
      throw InvalidArgument("the commit message is not valid UTF-8, which the Hub requires");
    }
    // Shown with the invalid bytes replaced and everything else escaped.
    throw InvalidArgument("the path " + json(path).dump(-1, ' ', true, json::error_handler_t::replace)
                            + " is not valid UTF-8, which the Hub requires",
                          "rename the file to a UTF-8 name");
  }
}

} // namespace

std::string commit_header_line(std::string_view summary, std::string_view description,
                               const std::optional<std::string>& parent_commit)
{
  json value = {{"summary", summary}, {"description", description}};
  if (parent_commit) {
    value["parentCommit"] = *parent_commit;
  }
  return utf8_json(json{{"key", "header"}, {"value", value}}, {}) + "\n";
}

std::string commit_lfs_file_line(std::string_view path, std::string_view sha256, std::uint64_t size)
{
  return utf8_json(
           json{{"key", "lfsFile"}, {"value", {{"path", path}, {"algo", "sha256"}, {"oid", sha256}, {"size", size}}}},
           path)
         + "\n";
}

std::string commit_deletion_line(std::string_view path, bool is_folder)
{
  if (is_folder) {
    return utf8_json(json{{"key", "deletedFolder"}, {"value", {{"path", std::string(path) + "/"}}}}, path) + "\n";
  }
  return utf8_json(json{{"key", "deletedFile"}, {"value", {{"path", path}}}}, path) + "\n";
}

std::string commit_file_line_prefix(std::string_view path)
{
  return R"({"key":"file","value":{"path":)" + utf8_json(json(path), path) + R"(,"encoding":"base64","content":")";
}

std::string preupload_request_body(const std::vector<PreuploadFile>& files, std::size_t begin, std::size_t end)
{
  json list = json::array();
  for (std::size_t i = begin; i < end; ++i) {
    utf8_json(files[i].path, files[i].path); // the first request that carries the name
    list.push_back({{"path", files[i].path}, {"sample", base64_encode(files[i].sample)}, {"size", files[i].size}});
  }
  return json{{"files", list}}.dump();
}

PreuploadResult parse_preupload_response(std::string_view body)
{
  auto parsed = util::parse_json(body, "the Hub's preupload answer");
  PreuploadResult result;
  if (parsed.contains("commitOid") && parsed["commitOid"].is_string()) {
    result.commit_oid = parsed["commitOid"].get<std::string>();
  }
  for (const auto& item : parsed.at("files")) {
    PreuploadAnswer answer;
    answer.path = item.at("path").get<std::string>();
    auto mode = item.at("uploadMode").get<std::string>();
    if (mode != "lfs" && mode != "regular") {
      throw RemoteError("the Hub answered the preupload with an unknown upload mode '" + mode + "'",
                        "retry later; if it persists, this client may be too old for the Hub");
    }
    answer.lfs = mode == "lfs";
    answer.should_ignore = item.value("shouldIgnore", false);
    if (item.contains("oid") && item["oid"].is_string()) {
      answer.remote_oid = item["oid"].get<std::string>();
    }
    result.files.push_back(std::move(answer));
  }
  return result;
}

std::string lfs_batch_request_body(const std::vector<LfsObjectRef>& objects, std::size_t begin, std::size_t end,
                                   std::string_view branch, bool offer_xet)
{
  json list = json::array();
  for (std::size_t i = begin; i < end; ++i) {
    list.push_back({{"oid", objects[i].oid}, {"size", objects[i].size}});
  }
  return json{{"operation", "upload"},
              {"transfers", offer_xet ? json{"basic", "multipart", "xet"} : json{"basic", "multipart"}},
              {"hash_algo", "sha256"},
              {"ref", {{"name", branch}}},
              {"objects", list}}
    .dump();
}

namespace {

LfsAction parse_action(const json& value)
{
  LfsAction action;
  action.href = value.at("href").get<std::string>();
  if (value.contains("header") && value["header"].is_object()) {
    for (const auto& [key, item] : value["header"].items()) {
      action.header.emplace_back(key, item.is_string() ? item.get<std::string>() : item.dump());
    }
  }
  return action;
}

} // namespace

std::vector<LfsBatchObject> parse_lfs_batch_response(std::string_view body)
{
  auto parsed = util::parse_json(body, "the Hub's LFS batch answer");
  std::vector<LfsBatchObject> objects;
  const bool xet = parsed.value("transfer", std::string{}) == "xet";
  for (const auto& item : parsed.at("objects")) {
    LfsBatchObject object;
    object.xet = xet;
    object.oid = item.at("oid").get<std::string>();
    object.size = item.at("size").get_ref<const json::number_unsigned_t&>(); // not a float or negative
    if (item.contains("error")) {
      const auto& error = item["error"];
      throw RemoteError("the Hub refused LFS object " + object.oid + ": " + std::to_string(error.value("code", 0)) + " "
                          + error.value("message", std::string()),
                        "retry later; if it persists, the file may be too large for the Hub");
    }
    if (item.contains("actions") && item["actions"].is_object()) {
      const auto& actions = item["actions"];
      if (actions.contains("upload")) {
        object.upload = parse_action(actions["upload"]);
      }
      if (actions.contains("verify")) {
        object.verify = parse_action(actions["verify"]);
      }
    }
    objects.push_back(std::move(object));
  }
  return objects;
}

std::optional<MultipartPlan> multipart_plan(const LfsAction& upload, std::uint64_t size)
{
  std::optional<std::uint64_t> chunk_size;
  std::vector<std::pair<std::uint64_t, std::string>> parts;
  for (const auto& [key, value] : upload.header) {
    if (key == "chunk_size") {
      chunk_size = parse_u64(value);
      if (!chunk_size || *chunk_size == 0) {
        throw RemoteError("the Hub sent an invalid multipart chunk_size '" + value + "'", "retry later");
      }
    } else if (!key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) { return std::isdigit(c); })) {
      parts.emplace_back(*parse_u64(key), value);
    }
  }
  if (!chunk_size) {
    return std::nullopt;
  }
  std::sort(parts.begin(), parts.end());
  std::uint64_t expected = (size + *chunk_size - 1) / *chunk_size;
  if (parts.size() != expected) {
    throw RemoteError("the Hub offered " + std::to_string(parts.size()) + " multipart URLs for a "
                        + std::to_string(size) + "-byte object in " + std::to_string(*chunk_size)
                        + "-byte parts (expected " + std::to_string(expected) + ")",
                      "retry later");
  }
  MultipartPlan plan;
  plan.chunk_size = *chunk_size;
  for (auto& [number, url] : parts) {
    plan.part_urls.push_back(std::move(url));
  }
  return plan;
}

} // namespace hubcache::hub
