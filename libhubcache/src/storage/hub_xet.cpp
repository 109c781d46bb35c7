#include "hub_xet.hpp"

#include "hubcache/xet/cas_client.hpp"
#include "hubcache/xet/cas_upload.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>

namespace hubcache::storage {

hub::XetReader make_xet_reader(const hub::HubConfig& config)
{
  xet::CasOptions options;
  options.parallel_fetches = config.workers;
  options.stall_timeout = config.stall_timeout;
  options.retry = config.retry;
  return
    [token = config.token, options](const hub::XetFileRef& file, const std::function<void(std::string_view)>& write) {
      const auto hash = xet::MerkleHash::from_hex(file.file_hash);
      if (!hash) {
        throw RemoteError("the Hub announced a malformed Xet hash", "retry later; nothing was installed");
      }
      http::Client client;
      xet::CasClient cas(xet::fetch_cas_token(client, file.token_url, token), options);
      cas.reconstruct(*hash, file.size, write);
    };
}

} // namespace hubcache::storage

namespace hubcache::storage {

namespace {

std::optional<std::string> header_of(const hub::LfsAction& action, std::string_view name)
{
  for (const auto& [key, value] : action.header) {
    if (key.size() == name.size() && std::equal(key.begin(), key.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      return value;
    }
  }
  return std::nullopt;
}

// A fresh token from the batch's refresh URL (on the Hub's origin only: the Hub token goes
// nowhere else).
xet::CasToken refresh_write_token(const hub::HubConfig& config, const hub::LfsAction& action)
{
  if (http::url_origin(action.href) != http::url_origin(config.endpoint)) {
    throw RemoteError("the Hub's Xet upload offer has no usable token", "retry later");
  }
  http::Client client;
  return xet::fetch_cas_token(client, action.href, config.token);
}

// The CAS token the batch handed out, or a fresh one from its refresh URL.
xet::CasToken write_token(const hub::HubConfig& config, const hub::LfsAction& action)
{
  auto cas_url = header_of(action, "X-Xet-Cas-Url");
  auto access = header_of(action, "X-Xet-Access-Token");
  auto expires = header_of(action, "X-Xet-Token-Expiration");
  const auto now =
    std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (cas_url && access && expires) {
    xet::CasToken token{*access, *cas_url, std::atoll(expires->c_str())};
    if (token.expires > now + 60) {
      return token;
    }
  }
  return refresh_write_token(config, action);
}

} // namespace

struct XetPush::Session {
  Session(const hub::HubConfig& config, xet::CasToken token, xet::CasClient::TokenRefresh refresh)
    : cas(std::move(token), options_of(config)), upload(cas)
  {
    cas.set_token_refresh(std::move(refresh));
  }
  static xet::CasOptions options_of(const hub::HubConfig& config)
  {
    xet::CasOptions options;
    options.stall_timeout = config.stall_timeout;
    options.retry = config.retry;
    return options;
  }
  xet::CasClient cas;
  xet::CasUpload upload; // after cas: it holds it
};

XetPush::XetPush(std::unique_ptr<Session> session) : m_session(std::move(session)) {}
XetPush::~XetPush() = default;

std::unique_ptr<XetPush> XetPush::open(const hub::HubConfig& config, const std::string& token_url)
{
  const auto fetch = [&config, token_url] {
    http::Client client;
    return xet::fetch_cas_token(client, token_url, config.token);
  };
  std::optional<xet::CasToken> token;
  try {
    token = fetch();
  } catch (const Error&) {
    return nullptr; // no token here: the LFS batch negotiates (and reports what is wrong)
  }
  return std::unique_ptr<XetPush>(new XetPush(std::make_unique<Session>(config, std::move(*token), fetch)));
}

std::unique_ptr<XetPush> XetPush::open(const hub::HubConfig& config, const std::vector<hub::LfsBatchObject>& answer)
{
  const auto with_upload = std::find_if(answer.begin(), answer.end(), [](const auto& object) { return object.upload; });
  if (with_upload == answer.end()) {
    throw RemoteError("the Hub's Xet upload offer has no upload action", "retry later");
  }
  const auto action = *with_upload->upload;
  return std::unique_ptr<XetPush>(new XetPush(std::make_unique<Session>(
    config, write_token(config, action), [&config, action] { return refresh_write_token(config, action); })));
}

void XetPush::add(const std::vector<hub::LfsObjectRef>& objects, const SourceOf& source_of)
{
  for (const auto& object : objects) {
    const auto source = source_of(object.oid);
    const auto packed =
      source.file ? m_session->upload.add_file(*source.file)
                  : m_session->upload.add_bytes(
                    xet::Bytes(reinterpret_cast<const std::uint8_t*>(source.bytes->data()), source.bytes->size()));
    if (packed.sha256 != object.oid || packed.size != object.size) {
      throw IntegrityError(
        "a file changed while it was pushed (sha256 " + packed.sha256 + ", expected " + object.oid + ")", "push again");
    }
  }
}

util::Sha256Bytes XetPush::add_unhashed(const std::string& path, std::uint64_t size)
{
  const auto packed = m_session->upload.add_file(path);
  const auto sha256 = util::Sha256Bytes::from_hex(packed.sha256);
  if (!sha256 || packed.size != size) {
    throw IntegrityError("a file changed while it was pushed (" + std::to_string(packed.size) + " bytes, expected "
                           + std::to_string(size) + ")",
                         "push again");
  }
  return *sha256;
}

XetPushStats XetPush::seal()
{
  const auto stats = m_session->upload.finish();
  return XetPushStats{stats.new_bytes, stats.deduplicated_bytes, stats.stored_bytes, stats.xorbs};
}

} // namespace hubcache::storage
