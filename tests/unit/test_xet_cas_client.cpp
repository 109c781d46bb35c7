#include <hubcache/util/hash.hpp>
#include <hubcache/xet/cas_client.hpp>
#include <hubcache/xet/merkle.hpp>
#include <hubcache/xet/packer.hpp>
#include <hubcache/xet/shard.hpp>
#include <hubcache/xet/xorb.hpp>

#include "fake_server.hpp"
#include "xet_test_data.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

using namespace hubcache;
using namespace hubcache::xet;

TEST_SUITE_BEGIN("hubcache::xet::cas_client");

namespace xet_cas_client_test {

namespace {

// A packed upload of `files`, kept in memory: its xorbs by hash and its parsed shard.
struct Packed {
  std::map<MerkleHash, std::vector<std::uint8_t>> xorbs;
  Shard shard;
  std::vector<PackedFile> files;
  PackStats stats;
};

Packed pack(const std::vector<std::vector<std::uint8_t>>& files)
{
  Packed packed;
  UploadPacker packer(
    [&](const MerkleHash& hash, const std::vector<std::uint8_t>& bytes) { packed.xorbs.emplace(hash, bytes); });
  for (const auto& file : files) {
    packed.files.push_back(packer.add_bytes(file));
  }
  packed.shard = parse_shard(packer.finish());
  packed.stats = packer.stats();
  return packed;
}

std::string as_text(const std::vector<std::uint8_t>& bytes)
{
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// A v1 reconstruction of shard file `index`, as a server answers it, with each term's
// range taken whole from the stored xorb.
std::string reconstruction_of(const Packed& packed, std::size_t index, std::int64_t size_delta = 0)
{
  std::string terms;
  std::string fetch;
  for (const auto& term : packed.shard.files[index].terms) {
    const auto layout = read_xorb_layout(packed.xorbs.at(term.xorb_hash));
    const auto first = layout.chunks[term.chunk_start].header_offset;
    const auto& last = layout.chunks[term.chunk_end - 1];
    const auto end = last.header_offset + chunk_header_size + last.stored_size - 1;
    const auto range =
      "{\"start\":" + std::to_string(term.chunk_start) + ",\"end\":" + std::to_string(term.chunk_end) + "}";
    terms += std::string(terms.empty() ? "" : ",") + "{\"hash\":\"" + term.xorb_hash.hex() + "\",\"unpacked_length\":"
             + std::to_string(static_cast<std::int64_t>(term.unpacked_size) + size_delta) + ",\"range\":" + range + "}";
    fetch += std::string(fetch.empty() ? "" : ",") + "\"" + term.xorb_hash.hex() + "\":[{\"range\":" + range
             + ",\"url\":\"http://cas/x\",\"url_range\":{\"start\":" + std::to_string(first)
             + ",\"end\":" + std::to_string(end) + "}}]";
  }
  return "{\"offset_into_first_range\":0,\"terms\":[" + terms + "],\"fetch_info\":{" + fetch + "}}";
}

// Rebuilds file `index` as CasClient::reconstruct does, from in-memory xorbs.
std::vector<std::uint8_t> rebuild(const Packed& packed, std::size_t index, const std::string& answer,
                                  std::uint64_t size)
{
  const auto plan = parse_reconstruction(answer, size);
  std::vector<std::uint8_t> out;
  std::vector<HashedNode> nodes;
  for (const auto& term : plan.terms) {
    const auto& fetch = plan.fetches[term.fetch];
    const auto& xorb = packed.xorbs.at(fetch.xorb);
    const auto bytes = as_text(xorb).substr(fetch.byte_start, fetch.byte_end - fetch.byte_start + 1);
    for (const auto& chunk : decode_term(bytes, fetch, term)) {
      nodes.push_back({chunk.hash, chunk.data.size()});
      out.insert(out.end(), chunk.data.begin(), chunk.data.end());
    }
  }
  CHECK(file_hash(nodes) == packed.shard.files[index].file_hash);
  return out;
}

} // namespace

TEST_CASE("the packer shares xorbs between small files and stores a repeated chunk once")
{
  const auto big = xet_test::splitmix64_data(400000, 7);
  auto longer = big;
  longer.insert(longer.end(), {1, 2, 3});
  const auto small = xet_test::splitmix64_data(3000, 8);
  const auto packed = pack({big, small, longer});
  CHECK(packed.xorbs.size() == 1);
  CHECK(packed.stats.new_bytes < big.size() + small.size() + 200000);
  CHECK(packed.stats.deduplicated_bytes > 100000);
  REQUIRE(packed.shard.files.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& file = packed.shard.files[i];
    CHECK(file.verification.size() == file.terms.size());
    REQUIRE(file.sha256);
    CHECK(file.sha256->hex() == packed.files[i].sha256);
  }
  CHECK(packed.files[1].sha256 == util::hex_digest(util::HashAlgorithm::sha256, as_text(small)));
}

TEST_CASE("a reconstruction rebuilds the packed file byte for byte")
{
  const auto big = xet_test::splitmix64_data(400000, 9);
  const auto small = xet_test::splitmix64_data(1000, 10);
  const auto packed = pack({small, big});
  CHECK(rebuild(packed, 1, reconstruction_of(packed, 1), big.size()) == big);
  CHECK(rebuild(packed, 0, reconstruction_of(packed, 0), small.size()) == small);
}

TEST_CASE("a lying reconstruction is refused")
{
  const auto big = xet_test::splitmix64_data(300000, 11);
  const auto packed = pack({big});
  const auto answer = reconstruction_of(packed, 0);
  SUBCASE("terms that do not add up to the file")
  {
    CHECK_THROWS_WITH_AS(parse_reconstruction(answer, big.size() + 1), doctest::Contains("add up to"), IntegrityError);
  }
  SUBCASE("a term whose size is not its chunks'")
  {
    const auto lying = reconstruction_of(packed, 0, 1);
    const auto plan = parse_reconstruction(lying, big.size() + packed.shard.files[0].terms.size());
    const auto& fetch = plan.fetches[plan.terms[0].fetch];
    const auto bytes = as_text(packed.xorbs.at(fetch.xorb)).substr(fetch.byte_start);
    CHECK_THROWS_WITH_AS(decode_term(bytes, fetch, plan.terms[0]), doctest::Contains("announced"), IntegrityError);
  }
  SUBCASE("a range shorter than its chunks")
  {
    const auto plan = parse_reconstruction(answer, big.size());
    const auto& fetch = plan.fetches[plan.terms[0].fetch];
    const auto bytes = as_text(packed.xorbs.at(fetch.xorb)).substr(fetch.byte_start, 5000);
    CHECK_THROWS_AS(decode_term(bytes, fetch, plan.terms[0]), IntegrityError);
  }
  SUBCASE("not JSON, no terms, a term without a range to fetch")
  {
    CHECK_THROWS_AS(parse_reconstruction("{\"terms\": [", big.size()), IntegrityError);
    CHECK_THROWS_AS(parse_reconstruction("{}", big.size()), IntegrityError);
    const auto no_fetch = answer.substr(0, answer.find("\"fetch_info\"")) + "\"fetch_info\":{}}";
    CHECK_THROWS_WITH_AS(parse_reconstruction(no_fetch, big.size()), doctest::Contains("without a range"),
                         IntegrityError);
  }
  SUBCASE("a start inside the first term")
  {
    auto shifted = answer;
    shifted.replace(shifted.find("\"offset_into_first_range\":0"), 27, "\"offset_into_first_range\":5");
    CHECK_THROWS_AS(parse_reconstruction(shifted, big.size()), IntegrityError);
  }
}

TEST_SUITE_END();

namespace {

// The dedup answer a CAS gives for the xorbs of `earlier`: their chunks HMAC'd with `key`.
Shard dedup_answer(const Packed& earlier, const MerkleHash& key)
{
  Shard answer;
  for (auto xorb : earlier.shard.xorbs) {
    for (auto& chunk : xorb.chunks) {
      chunk.hash = hmac(chunk.hash, key);
    }
    answer.xorbs.push_back(std::move(xorb));
  }
  answer.footer = ShardFooter{};
  answer.footer->chunk_hash_hmac_key = key;
  return parse_shard(serialize_shard(answer)); // as it comes over the wire
}

} // namespace

TEST_CASE("an upload sealed in segments: each shard names its own files and xorbs, later ones reuse earlier xorbs")
{
  const auto first = xet_test::splitmix64_data(400000, 31);
  auto second = first; // recompiled: shares all but its last chunks with the first
  for (std::size_t i = 390000; i < 390010; ++i) {
    second[i] ^= 0x5a;
  }
  Packed packed;
  UploadPacker packer(
    [&](const MerkleHash& hash, const std::vector<std::uint8_t>& bytes) { packed.xorbs.emplace(hash, bytes); });
  packed.files.push_back(packer.add_bytes(first));
  CHECK(packer.has_files());
  const auto first_shard = parse_shard(packer.finish());
  CHECK_FALSE(packer.has_files());
  packed.files.push_back(packer.add_bytes(second));
  const auto second_shard = parse_shard(packer.finish());
  REQUIRE(first_shard.files.size() == 1);
  REQUIRE(second_shard.files.size() == 1);
  CHECK(first_shard.files[0].file_hash == packed.files[0].file_hash);
  CHECK(second_shard.files[0].file_hash == packed.files[1].file_hash);
  // The second segment sent only a xorb of the changed chunks; its file names the first
  // segment's xorb for the rest.
  REQUIRE(first_shard.xorbs.size() == 1);
  REQUIRE(second_shard.xorbs.size() == 1);
  CHECK(second_shard.xorbs[0].xorb_hash != first_shard.xorbs[0].xorb_hash);
  CHECK(second_shard.xorbs[0].unpacked_size < 200000);
  CHECK(second_shard.files[0].terms.front().xorb_hash == first_shard.xorbs[0].xorb_hash);
  CHECK(packer.stats().deduplicated_bytes + packer.stats().new_bytes == first.size() + second.size());
  CHECK(packed.xorbs.size() == 2);
  // Each file rebuilds byte for byte from the xorbs of both segments.
  packed.shard.files = {first_shard.files[0], second_shard.files[0]};
  CHECK(rebuild(packed, 0, reconstruction_of(packed, 0), first.size()) == first);
  CHECK(rebuild(packed, 1, reconstruction_of(packed, 1), second.size()) == second);
}

TEST_CASE("global dedup: chunks the CAS holds are referenced in its xorbs, not uploaded")
{
  const auto original = xet_test::splitmix64_data(900000, 11);
  const auto earlier = pack({original});
  // The same file recompiled: a few bytes changed near its end.
  auto changed = original;
  for (std::size_t i = 850000; i < 850010; ++i) {
    changed[i] ^= 0x5a;
  }
  MerkleHash key;
  key.bytes[0] = 7;
  std::mutex asking; // queries run on other threads
  std::vector<MerkleHash> asked;
  std::map<MerkleHash, std::vector<std::uint8_t>> uploaded;
  UploadPacker packer([&](const MerkleHash& hash, const std::vector<std::uint8_t>& bytes) { uploaded[hash] = bytes; },
                      [&](const MerkleHash& chunk) -> std::optional<Shard> {
                        const std::lock_guard lock(asking);
                        asked.push_back(chunk);
                        return dedup_answer(earlier, key);
                      });
  const auto file = packer.add_bytes(changed);
  const auto shard = parse_shard(packer.finish());
  const auto& stats = packer.stats();
  // The file's first chunk is asked, once: its answer covers every later chunk, so nothing
  // is asked after it (a query sent ahead before the answer came back is the only other
  // kind, and it may still be running: the copy is taken under the lock).
  const auto first_chunk = pack({changed}).shard.xorbs[0].chunks[0].hash;
  const auto asked_now = [&] {
    const std::lock_guard lock(asking);
    return asked;
  }();
  CHECK(std::count(asked_now.begin(), asked_now.end(), first_chunk) == 1);
  CHECK(stats.dedup_queries >= 1);
  CHECK(stats.dedup_queries <= dedup_queries_in_flight);
  CHECK(stats.stored_bytes > 700000);
  CHECK(stats.new_bytes < 200000);
  CHECK(stats.new_bytes + stats.stored_bytes == changed.size());
  REQUIRE(shard.files.size() == 1);
  CHECK(shard.files[0].file_hash == file.file_hash);
  // The terms name the stored xorb for the shared chunks and the new one for the rest; the
  // shard describes only the new xorb.
  REQUIRE(earlier.shard.xorbs.size() == 1);
  bool names_stored = false;
  for (const auto& term : shard.files[0].terms) {
    names_stored = names_stored || term.xorb_hash == earlier.shard.xorbs[0].xorb_hash;
  }
  CHECK(names_stored);
  REQUIRE(shard.xorbs.size() == 1);
  CHECK(uploaded.count(shard.xorbs[0].xorb_hash) == 1);
  CHECK(uploaded.count(earlier.shard.xorbs[0].xorb_hash) == 0);
  // Rebuilt from both xorbs, it is the changed file byte for byte.
  Packed both{earlier.xorbs, shard, {file}, stats};
  both.xorbs.insert(uploaded.begin(), uploaded.end());
  CHECK(rebuild(both, 0, reconstruction_of(both, 0), changed.size()) == changed);
}

TEST_CASE("global dedup: a miss or no answer uploads everything; misses in a row space the queries out")
{
  const auto data = xet_test::splitmix64_data(300000, 12);
  std::atomic<std::size_t> asked = 0;
  std::atomic<std::size_t> running = 0;
  std::atomic<std::size_t> most_at_once = 0;
  // The first answer is held until another query is asked meanwhile (at most 5 s): a
  // packer that waited for each answer would ask nothing more until then, whatever the
  // machine's speed.
  UploadPacker packer([](const MerkleHash&, const std::vector<std::uint8_t>&) {},
                      [&](const MerkleHash&) -> std::optional<Shard> {
                        const auto call = ++asked;
                        const auto now = ++running;
                        auto most = most_at_once.load();
                        while (now > most && !most_at_once.compare_exchange_weak(most, now)) {
                        }
                        for (int waited = 0; call == 1 && running < 2 && waited < 5000; ++waited) {
                          std::this_thread::sleep_for(std::chrono::milliseconds(1));
                        }
                        --running;
                        return std::nullopt;
                      });
  packer.add_bytes(data);
  packer.add_bytes(xet_test::splitmix64_data(5000, 13)); // 300 kB after a first miss: asked
  CHECK(packer.stats().dedup_queries == 2);
  // 40 files of 20 kB: after each miss the next query waits twice as long (128 kB of new
  // chunks, then 256 kB, 512 kB...), so 40 small files cost 2 more queries, not 40.
  for (std::uint64_t seed = 100; seed < 140; ++seed) {
    packer.add_bytes(xet_test::splitmix64_data(20000, seed));
  }
  packer.finish();
  CHECK(asked == 4);
  CHECK(packer.stats().dedup_queries == 4);
  CHECK(packer.stats().stored_bytes == 0);
  CHECK(packer.stats().new_bytes == data.size() + 5000 + 40 * 20000);
  // Packing went on while an answer was awaited and asked the next queries ahead: they
  // overlapped instead of waiting for each other.
  CHECK(most_at_once >= 2);
}

TEST_CASE("global dedup: a re-push whose first file misses still finds the next files' unchanged chunks")
{
  // Three graphs pushed, then recompiled: the first changed in its first chunk, the others
  // in their middle.
  std::vector<std::vector<std::uint8_t>> graphs;
  for (std::uint64_t seed = 21; seed < 24; ++seed) {
    graphs.push_back(xet_test::splitmix64_data(600000, seed));
  }
  const auto earlier = pack(graphs);
  auto recompiled = graphs;
  recompiled[0][100] ^= 0x5a;
  recompiled[1][300000] ^= 0x5a;
  recompiled[2][300000] ^= 0x5a;
  MerkleHash key;
  key.bytes[0] = 9;
  std::set<MerkleHash> stored;
  for (const auto& xorb : earlier.shard.xorbs) {
    for (const auto& chunk : xorb.chunks) {
      stored.insert(chunk.hash);
    }
  }
  std::mutex asking; // queries run on other threads
  std::vector<std::pair<MerkleHash, bool>> hits;
  UploadPacker packer([](const MerkleHash&, const std::vector<std::uint8_t>&) {},
                      [&](const MerkleHash& chunk) -> std::optional<Shard> {
                        const std::lock_guard lock(asking);
                        hits.emplace_back(chunk, stored.count(chunk) != 0);
                        if (!hits.back().second) {
                          return std::nullopt;
                        }
                        return dedup_answer(earlier, key);
                      });
  std::vector<MerkleHash> first_chunks;
  for (const auto& graph : recompiled) {
    packer.add_bytes(graph);
    first_chunks.push_back(pack({graph}).shard.xorbs[0].chunks[0].hash);
  }
  packer.finish();
  // The first file's first chunk misses; the second file's is still asked and hits. (The
  // third file's may be asked ahead, supposing a miss; its answer is not needed, and it
  // may still be running: the answers are read under the lock, in no particular order.)
  const auto answers = [&] {
    const std::lock_guard lock(asking);
    return hits;
  }();
  const auto answer_for = [&](const MerkleHash& chunk) {
    return std::find_if(answers.begin(), answers.end(), [&](const auto& hit) { return hit.first == chunk; });
  };
  REQUIRE(answers.size() >= 2);
  REQUIRE(answers.size() <= 3);
  REQUIRE(answer_for(first_chunks[0]) != answers.end());
  CHECK_FALSE(answer_for(first_chunks[0])->second);
  REQUIRE(answer_for(first_chunks[1]) != answers.end());
  CHECK(answer_for(first_chunks[1])->second);
  // Of the second and third files only the chunk holding the change is new (a chunk is at
  // most 128 KiB): what the first file shares is uploaded, there was no answer yet.
  const auto& stats = packer.stats();
  CHECK(stats.stored_bytes >= 2 * (600000 - 2 * 131072));
  CHECK(stats.new_bytes <= 600000 + 2 * 2 * 131072);
  CHECK(stats.new_bytes + stats.stored_bytes == 3 * 600000);
}

TEST_CASE("a multi-range answer gives each range asked for, and a short or misplaced part is refused")
{
  const XorbFetch first{"http://cas/x", {}, 0, 1, 0, 3};
  const XorbFetch second{"http://cas/x", {}, 4, 5, 10, 14};
  const std::vector<const XorbFetch*> asked{&first, &second};
  const std::string type = "multipart/byteranges; boundary=XYZ";
  const auto part = [](const std::string& range, const std::string& data) {
    return "--XYZ\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes " + range + "/100\r\n\r\n" + data
           + "\r\n";
  };
  const auto good = part("0-3", "abcd") + part("10-14", "efghi") + "--XYZ--\r\n";
  const auto parts = split_byteranges(good, type, asked);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0] == "abcd");
  CHECK(parts[1] == "efghi");
  // A part shorter than its range, a missing part, parts swapped, no multipart at all.
  CHECK_THROWS_WITH_AS(split_byteranges(part("0-3", "abcd") + part("10-14", "efg") + "--XYZ--\r\n", type, asked),
                       doctest::Contains("shorter"), IntegrityError);
  CHECK_THROWS_AS(split_byteranges(part("0-3", "abcd") + "--XYZ--\r\n", type, asked), IntegrityError);
  CHECK_THROWS_WITH_AS(split_byteranges(part("10-14", "efghi") + part("0-3", "abcd") + "--XYZ--\r\n", type, asked),
                       doctest::Contains("other bytes"), IntegrityError);
  CHECK_THROWS_AS(split_byteranges("abcdefghi", "application/octet-stream", asked), IntegrityError);
}

TEST_CASE("an upload cuts xorbs of at most upload_xorb_bytes, each handed over once")
{
  const auto data = xet_test::splitmix64_data(upload_xorb_bytes + upload_xorb_bytes / 4, 31);
  std::vector<std::size_t> sizes;
  UploadPacker packer([&](const MerkleHash&, std::vector<std::uint8_t> bytes) { sizes.push_back(bytes.size()); });
  packer.add_bytes(data);
  const auto shard = parse_shard(packer.finish());
  REQUIRE(sizes.size() == 2);
  REQUIRE(shard.xorbs.size() == 2);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    CHECK(sizes[i] <= upload_xorb_bytes);
    CHECK(sizes[i] == shard.xorbs[i].serialized_size);
    CHECK(shard.xorbs[i].unpacked_size <= upload_xorb_bytes);
  }
  CHECK(shard.xorbs[0].unpacked_size + shard.xorbs[1].unpacked_size == data.size());
}

TEST_CASE("a xorb buffer handed back is where the next xorb is built")
{
  const auto data = xet_test::splitmix64_data(2 * upload_xorb_bytes + upload_xorb_bytes / 4, 32);
  std::vector<const std::uint8_t*> buffers;
  std::vector<std::vector<std::uint8_t>> kept;
  UploadPacker packer([&](const MerkleHash& hash, std::vector<std::uint8_t> bytes) {
    CHECK(decode_xorb(bytes).hash == hash); // what was handed over is the whole xorb
    buffers.push_back(bytes.data());
    kept.push_back(bytes);            // as an upload would send it...
    packer.recycle(std::move(bytes)); // ...then hand the buffer back
  });
  packer.add_bytes(data);
  packer.finish();
  REQUIRE(buffers.size() == 3);
  CHECK(buffers[1] == buffers[0]);
  CHECK(buffers[2] == buffers[0]);
  CHECK(kept[0] != kept[1]);
}

namespace {

// A CAS serving one file's v1 reconstruction: the terms of `packed`'s file 0 with the
// first one twice (a file repeating its start), each xorb listed as one range.
struct WindowedCas {
  const Packed& packed;
  std::string answer;
  std::vector<std::uint8_t> expected; // the file those terms make
  MerkleHash expected_hash;
  std::atomic<int> in_flight{0};
  std::atomic<int> most_in_flight{0};
  std::atomic<int> range_requests{0};
  std::atomic<int> writes_during_fetches{0};
  int fail_request = 0; // the range request (counting from 1) answered 500; 0: none

  WindowedCas(const Packed& packed_upload, const std::string& url) : packed(packed_upload)
  {
    auto terms = packed.shard.files[0].terms;
    terms.insert(terms.begin() + 1, terms.front());
    std::string term_text;
    std::string fetch_text;
    std::set<MerkleHash> listed;
    std::uint64_t size = 0;
    for (const auto& term : terms) {
      const auto range =
        "{\"start\":" + std::to_string(term.chunk_start) + ",\"end\":" + std::to_string(term.chunk_end) + "}";
      term_text += std::string(term_text.empty() ? "" : ",") + "{\"hash\":\"" + term.xorb_hash.hex()
                   + "\",\"unpacked_length\":" + std::to_string(term.unpacked_size) + ",\"range\":" + range + "}";
      size += term.unpacked_size;
      if (listed.insert(term.xorb_hash).second) {
        const auto& xorb = packed.xorbs.at(term.xorb_hash);
        fetch_text += std::string(fetch_text.empty() ? "" : ",") + "\"" + term.xorb_hash.hex()
                      + "\":[{\"range\":{\"start\":0,\"end\":" + std::to_string(read_xorb_layout(xorb).chunks.size())
                      + "},\"url\":\"" + url + "/xorb/" + term.xorb_hash.hex()
                      + "\",\"url_range\":{\"start\":0,\"end\":" + std::to_string(xorb.size() - 1) + "}}]";
      }
    }
    answer = "{\"offset_into_first_range\":0,\"terms\":[" + term_text + "],\"fetch_info\":{" + fetch_text + "}}";
    // What the file is, decoded term by term from the xorbs in memory.
    std::vector<HashedNode> nodes;
    const auto plan = parse_reconstruction(answer, size);
    for (const auto& term : plan.terms) {
      const auto& fetch = plan.fetches[term.fetch];
      for (const auto& chunk : decode_term(as_text(packed.xorbs.at(fetch.xorb)), fetch, term)) {
        nodes.push_back({chunk.hash, chunk.data.size()});
        expected.insert(expected.end(), chunk.data.begin(), chunk.data.end());
      }
    }
    expected_hash = file_hash(nodes);
  }

  void serve_range(const httplib::Request& req, httplib::Response& res, const test_support::FakeServer& server)
  {
    const auto number = ++range_requests;
    const auto now = ++in_flight;
    for (auto most = most_in_flight.load(); now > most && !most_in_flight.compare_exchange_weak(most, now);) {
    }
    // Open until a second request arrives, or for 200 ms: a client that fetches ahead
    // decodes the range before meanwhile.
    for (int i = 0; i < 40 && in_flight < 2 && !server.stopping(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const auto hash = MerkleHash::from_hex(req.matches[1].str());
    const auto& xorb = packed.xorbs.at(*hash);
    if (number == fail_request) {
      res.status = 500;
    } else if (req.get_header_value("Range") != "bytes=0-" + std::to_string(xorb.size() - 1)) {
      res.status = 416;
    } else {
      res.status = 206;
      res.set_content(as_text(xorb), "application/octet-stream");
    }
    --in_flight;
  }
};

} // namespace

TEST_CASE("a reconstruction fetches ranges ahead while it decodes, and reuses a range the next term needs")
{
  // Three xorbs of up to 8 MiB: the reconstruction's 16 MiB of ranges hold two at once.
  const auto data = xet_test::splitmix64_data(2 * upload_xorb_bytes + upload_xorb_bytes / 2, 41);
  const auto packed = pack({data});
  REQUIRE(packed.xorbs.size() == 3);
  std::unique_ptr<WindowedCas> cas; // its answer names the server's URL, known once bound
  test_support::FakeServer server([&](httplib::Server& routes, test_support::FakeServer& self) {
    routes.Get("/v2/reconstructions/.*", [](const httplib::Request&, httplib::Response& res) { res.status = 404; });
    routes.Get("/v1/reconstructions/.*", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(cas->answer, "application/json");
    });
    routes.Get("/xorb/([0-9a-f]+)",
               [&](const httplib::Request& req, httplib::Response& res) { cas->serve_range(req, res, self); });
  });
  cas = std::make_unique<WindowedCas>(packed, server.url);
  CasOptions options;
  options.parallel_fetches = 4;
  options.retry.max_attempts = 1;

  SUBCASE("the file byte for byte, the first xorb fetched once for both its terms")
  {
    CasClient client({"read-token", server.url, 0}, options);
    std::vector<std::uint8_t> rebuilt;
    client.reconstruct(cas->expected_hash, cas->expected.size(), [&](std::string_view bytes) {
      rebuilt.insert(rebuilt.end(), bytes.begin(), bytes.end());
      cas->writes_during_fetches += cas->in_flight > 0 ? 1 : 0;
    });
    CHECK(rebuilt == cas->expected);
    CHECK(cas->range_requests == 3);
    // Ranges were decoded while the next was fetched (a batch at a time, none would be), and
    // never more were in flight than the 16 MiB of ranges allow.
    CHECK(cas->writes_during_fetches > 0);
    CHECK(cas->most_in_flight == 2);
  }
  SUBCASE("a range refused in the middle: one error, the other fetches waited for")
  {
    cas->fail_request = 3;
    CasClient client({"read-token", server.url, 0}, options);
    std::uint64_t written = 0;
    CHECK_THROWS_WITH_AS(client.reconstruct(cas->expected_hash, cas->expected.size(),
                                            [&](std::string_view bytes) { written += bytes.size(); }),
                         doctest::Contains("HTTP 500"), RemoteError);
    CHECK(written < cas->expected.size());
    CHECK(cas->in_flight == 0);
  }
}

} // namespace xet_cas_client_test
