#pragma once

// The NDJSON payload of POST /api/{type}s/{repo}/commit/{revision}, read the way the Hub
// reads it: a header line, then one line per operation. Separate from the route so the
// writer/reader pair can be fuzzed (tests/fuzz/fuzz_ndjson_commit.cpp).

#include <cstdint>
#include <functional>
#include <istream>
#include <string>

#include "storage.hpp"

namespace testhub {

// The size of an LFS object the repo already stores, for lfsFile lines without "size"
// (server-side copies).
using StoredLfsSize = std::function<std::uint64_t(const std::string& sha256)>;

// Throws HubError 400 naming the line for anything malformed, as the Hub answers it.
CommitPlan read_commit_payload(std::istream& in, const StoredLfsSize& stored_lfs_size);

} // namespace testhub
