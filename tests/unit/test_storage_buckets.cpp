#include <hubcache/error.hpp>
#include <hubcache/storage/bucket_repository.hpp>
#include <hubcache/storage/publish_order.hpp>
#include <hubcache/storage/repo_spec.hpp>
#include <hubcache/xet/file_hasher.hpp>
#include <hubcache/xet/packer.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace hubcache;
using namespace hubcache::storage;

TEST_SUITE_BEGIN("hubcache::buckets");

TEST_CASE("bucket specs: hf://buckets/ and the bucket's page, with an optional folder")
{
  auto plain = parse_repo_spec("hf://buckets/aws-neuron/neff-cache");
  CHECK(plain.kind == RepoKind::bucket);
  CHECK(plain.bucket_id == "aws-neuron/neff-cache");
  CHECK(plain.bucket_prefix.empty());
  CHECK(plain.canonical() == "hf://buckets/aws-neuron/neff-cache");

  auto folder = parse_repo_spec("hf://buckets/aws-neuron/neff-cache/team/a/");
  CHECK(folder.bucket_id == "aws-neuron/neff-cache");
  CHECK(folder.bucket_prefix == "team/a");
  CHECK(folder.canonical() == "hf://buckets/aws-neuron/neff-cache/team/a");
  CHECK(parse_repo_spec(folder.canonical()).canonical() == folder.canonical());

  CHECK(parse_repo_spec("https://huggingface.co/buckets/org/name").canonical() == "hf://buckets/org/name");
  CHECK(parse_repo_spec("https://hf.co/buckets/org/name/").canonical() == "hf://buckets/org/name");
  CHECK(parse_repo_spec("https://huggingface.co/buckets/org/name/tree/v2/x").canonical()
        == "hf://buckets/org/name/v2/x");
  // Not a bucket: hf://org/name stays a model repo.
  CHECK(parse_repo_spec("hf://org/name").kind == RepoKind::hub);
}

TEST_CASE("bad bucket specs are refused with a hint")
{
  for (const char* bad : {"hf://buckets/", "hf://buckets/onlyname", "hf://buckets/org/na--me", "hf://buckets/-org/x",
                          "hf://buckets/org/name/../up", "hf://buckets/org/name/a//b", "hf://buckets/org/name/.git",
                          "https://huggingface.co/buckets/org/name/settings"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_repo_spec(bad), InvalidArgument);
  }
}

TEST_CASE("publish phases: entry files, then model.done, then loose files, then the registry")
{
  const std::string v = "neuronxcc-2.21.33363.0+82129205/";
  CHECK(publish_phase(v + "MODULE_1+abc/model.neff") == 0);
  CHECK(publish_phase(v + "MODULE_1+abc/compile_flags.json") == 0);
  CHECK(publish_phase(v + "MODULE_1+abc/model.done") == 1);
  CHECK(publish_phase(v + "MODULE_1+abc/sub/model.done") == 0); // not the entry's marker
  CHECK(publish_phase("README.md") == 2);
  CHECK(publish_phase(v + "0_REGISTRY/0.3.0/org/model/abc.json") == 3);
  // Removals go the other way round.
  CHECK(removal_phase(v + "0_REGISTRY/0.3.0/org/model/abc.json") == 0);
  CHECK(removal_phase(v + "MODULE_1+abc/model.done") == 2);
  CHECK(removal_phase(v + "MODULE_1+abc/model.neff") == 3);
}

TEST_CASE("phased batches never mix phases and keep each phase's order")
{
  const std::string v = "neuronxcc-2.21.33363.0+82129205/";
  std::vector<std::string> owned = {
    v + "0_REGISTRY/r.json",     v + "MODULE_1+a/model.done", v + "MODULE_1+a/model.neff", v + "MODULE_2+a/model.done",
    v + "MODULE_2+a/model.neff", v + "MODULE_2+a/flags.json", v + "MODULE_3+a/model.neff"};
  std::vector<std::string_view> paths(owned.begin(), owned.end());
  auto batches = phased_batches(paths, publish_phase, 2);
  std::vector<std::vector<std::size_t>> expected = {{2, 4}, {5, 6}, {1, 3}, {0}};
  CHECK(batches == expected);
  // Every marker's batch comes after every batch holding a file of its entry, and the
  // registry's after every marker.
  std::size_t last_file_batch = 0;
  std::size_t first_marker_batch = batches.size();
  std::size_t first_registry_batch = batches.size();
  for (std::size_t b = 0; b < batches.size(); ++b) {
    for (auto i : batches[b]) {
      auto phase = publish_phase(paths[i]);
      if (phase == 0) {
        last_file_batch = b;
      } else if (phase == 1) {
        first_marker_batch = std::min(first_marker_batch, b);
      } else if (phase == 3) {
        first_registry_batch = std::min(first_registry_batch, b);
      }
    }
  }
  CHECK(last_file_batch < first_marker_batch);
  CHECK(first_marker_batch < first_registry_batch);
  CHECK(phased_batches({}, publish_phase, 1000).empty());
}

TEST_CASE("the Xet file hash of a stream is the one the packer names the file by")
{
  std::string data(300000, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>((i * 7919) % 251);
  }
  xet::UploadPacker packer([](const xet::MerkleHash&, const std::vector<std::uint8_t>&) {});
  auto packed = packer.add_bytes(xet::Bytes(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
  xet::FileHasher hasher;
  for (std::size_t at = 0; at < data.size(); at += 4096) { // any cut of the stream
    hasher.update(std::string_view(data).substr(at, 4096));
  }
  CHECK(hasher.finish() == packed.file_hash);
  hasher.update("abc");
  hasher.reset();
  CHECK(hasher.finish().is_zero()); // an empty file
}

TEST_CASE("a bucket revision's content part leaves out the hour it was read in")
{
  CHECK(bucket_content_of("3f2a9c.493847") == "3f2a9c");
  CHECK(bucket_content_of("3f2a9c.493847") == bucket_content_of("3f2a9c.493848"));
  CHECK(bucket_content_of("3f2a9c.493847") != bucket_content_of("3f2a9d.493847"));
  CHECK(bucket_content_of("no-hour") == "no-hour");
}

TEST_SUITE_END();
