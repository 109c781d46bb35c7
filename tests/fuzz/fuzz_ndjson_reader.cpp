// The test Hub's NDJSON commit reader on arbitrary bytes, as a client could send them:
// a malformed payload must be a 400 naming what is wrong, as the Hub answers, never an
// internal error.
#include "fuzz_support.hpp"

#include "commit_payload.hpp"

#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  std::istringstream in(std::string(fuzz::text_of(data, size)));
  try {
    auto plan = testhub::read_commit_payload(in, [](const std::string&) -> std::uint64_t { return 7; });
    FUZZ_CHECK(!plan.summary.empty(), "a commit without a summary was accepted");
    for (const auto& op : plan.operations) {
      FUZZ_CHECK(testhub::is_valid_repo_path(op.path), "an invalid path was accepted: " + op.path);
    }
  } catch (const testhub::HubError& error) {
    FUZZ_CHECK(error.status() == 400, "the reader failed with " + std::to_string(error.status()));
  }
  return 0;
}
