// The NDJSON commit payload: our writer (hub/protocol.hpp, as HubRepository assembles a
// commit) against the test Hub's reader (tests/testhub/commit_payload.cpp, which follows
// the Hub). Operations are drawn from the input; the property is a round trip: what the
// writer accepts the reader gives back exactly, or refuses with a 400 only when the
// operation is one the Hub refuses (invalid path, empty summary, bad parent or oid).
#include "hub_answer_support.hpp"

#include "commit_payload.hpp"

#include <hubcache/hub/protocol.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include <sstream>

namespace {

std::string hex(FuzzedDataProvider& input, std::size_t length)
{
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(length, '0');
  for (auto& c : out) {
    c = digits[input.ConsumeIntegral<unsigned>() & 15U];
  }
  return out;
}

// Mostly well-formed values, sometimes other ASCII (hashes are ours, never arbitrary bytes):
// both sides of the property get exercised.
std::string maybe_hex(FuzzedDataProvider& input, std::size_t length)
{
  if (input.ConsumeBool()) {
    return hex(input, length);
  }
  auto text = input.ConsumeRandomLengthString(80);
  for (auto& c : text) {
    c = static_cast<char>(c & 0x7f);
  }
  return text;
}

std::string without_trailing_slashes(std::string path)
{
  while (!path.empty() && path.back() == '/') {
    path.pop_back();
  }
  return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  FuzzedDataProvider input(data, size);
  testhub::CommitPlan expected;
  bool hub_accepts = true;
  std::string payload;
  expected.summary = input.ConsumeRandomLengthString(80);
  expected.description = input.ConsumeRandomLengthString(80);
  if (input.ConsumeBool()) {
    expected.parent_commit = maybe_hex(input, 40);
    hub_accepts = hub_accepts && testhub::is_hex(*expected.parent_commit, 40);
  }
  hub_accepts = hub_accepts && !expected.summary.empty();
  if (!fuzz::accepts([&] {
        payload += hubcache::hub::commit_header_line(expected.summary, expected.description, expected.parent_commit);
      })) {
    return 0;
  }
  auto operations = input.ConsumeIntegralInRange<int>(0, 6);
  for (int i = 0; i < operations; ++i) {
    testhub::CommitOperation op;
    op.path = input.ConsumeRandomLengthString(64);
    std::string line;
    bool written = false;
    switch (input.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      op.kind = testhub::CommitOperation::Kind::add_regular;
      op.content = input.ConsumeRandomLengthString(200);
      written = fuzz::accepts([&] {
        line = hubcache::hub::commit_file_line_prefix(op.path) + hubcache::hub::base64_encode(op.content)
               + std::string(hubcache::hub::k_commit_file_line_suffix);
      });
      break;
    case 1:
      op.kind = testhub::CommitOperation::Kind::add_lfs;
      op.sha256 = maybe_hex(input, 64);
      op.size = input.ConsumeIntegral<std::uint64_t>();
      hub_accepts = hub_accepts && testhub::is_hex(op.sha256, 64);
      written = fuzz::accepts([&] { line = hubcache::hub::commit_lfs_file_line(op.path, op.sha256, op.size); });
      break;
    case 2:
      op.kind = testhub::CommitOperation::Kind::delete_file;
      written = fuzz::accepts([&] { line = hubcache::hub::commit_deletion_line(op.path, false); });
      break;
    default:
      op.kind = testhub::CommitOperation::Kind::delete_folder;
      written = fuzz::accepts([&] { line = hubcache::hub::commit_deletion_line(op.path, true); });
      // The writer marks folders with a trailing '/', the Hub strips trailing slashes.
      op.path = without_trailing_slashes(op.path + "/");
      break;
    }
    // The preupload that comes before an addition refuses exactly the names the commit would.
    if (op.kind == testhub::CommitOperation::Kind::add_regular || op.kind == testhub::CommitOperation::Kind::add_lfs) {
      bool preuploaded = fuzz::accepts([&] {
        (void)hubcache::hub::preupload_request_body({{op.path, op.size, op.content}}, 0, 1);
      });
      FUZZ_CHECK(preuploaded == written, "preupload and commit disagree on a name");
    }
    if (!written) {
      return 0;
    }
    FUZZ_CHECK(!line.empty() && line.back() == '\n' && line.find('\n') == line.size() - 1,
               "an NDJSON line must be one line: " + line);
    hub_accepts = hub_accepts && testhub::is_valid_repo_path(op.path);
    payload += line;
    expected.operations.push_back(std::move(op));
  }

  std::istringstream in(payload);
  testhub::CommitPlan plan;
  try {
    plan = testhub::read_commit_payload(in, [](const std::string&) -> std::uint64_t { return 0; });
  } catch (const testhub::HubError& error) {
    FUZZ_CHECK(error.status() == 400, "the reader failed with " + std::to_string(error.status()));
    FUZZ_CHECK(!hub_accepts, std::string("a valid payload was refused: ") + error.what() + "\n" + payload);
    return 0;
  }
  FUZZ_CHECK(hub_accepts, "an invalid payload was accepted:\n" + payload);
  FUZZ_CHECK(plan.summary == expected.summary, "summary changed");
  FUZZ_CHECK(plan.description == expected.description, "description changed");
  FUZZ_CHECK(plan.parent_commit == expected.parent_commit, "parent commit changed");
  FUZZ_CHECK(plan.operations.size() == expected.operations.size(), "operations lost or invented");
  for (std::size_t i = 0; i < plan.operations.size(); ++i) {
    const auto& got = plan.operations[i];
    const auto& want = expected.operations[i];
    FUZZ_CHECK(got.kind == want.kind, "operation kind changed");
    FUZZ_CHECK(got.path == want.path, "path changed: " + got.path + " != " + want.path);
    FUZZ_CHECK(got.content == want.content, "content changed for " + want.path);
    FUZZ_CHECK(got.sha256 == want.sha256 && got.size == want.size, "LFS pointer changed for " + want.path);
  }
  return 0;
}
