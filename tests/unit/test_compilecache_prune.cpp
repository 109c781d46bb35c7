#include <hubcache/compilecache/prune.hpp>
#include <hubcache/error.hpp>
#include <hubcache/storage/directory_repository.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace hubcache;
namespace cc = hubcache::compilecache;

namespace compilecache_prune_test {

namespace {

const std::string k_new = "neuronxcc-2.21.33363.0+82129205";
const std::string k_old = "neuronxcc-2.15.128.0+56dc5a86";

std::vector<storage::RepoFile> listing()
{
  std::vector<storage::RepoFile> files;
  auto add = [&](const std::string& path, std::uint64_t size) { files.push_back({.path = path, .size = size}); };
  for (const auto& version : {k_new, k_old}) {
    auto good = version + "/MODULE_1+d41d8cd9";
    add(good + "/compile_flags.json", 2);
    add(good + "/model.hlo_module.pb", 10);
    add(good + "/model.neff", 100);
    add(good + "/model.done", 0);
    add(version + "/0_REGISTRY/0.3.0/llama/meta/m/abc.json", 5);
  }
  add(k_new + "/MODULE_2+d41d8cd9/model.hlo_module.pb", 10); // failed: a log, no NEFF
  add(k_new + "/MODULE_2+d41d8cd9/model.log", 7);
  add(k_new + "/MODULE_3+d41d8cd9/model.hlo_module.pb", 10); // incomplete: nothing compiled yet
  add("README.md", 3);
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return files;
}

std::vector<std::string> paths(const cc::PrunePlan& plan)
{
  std::vector<std::string> out;
  for (const auto& removal : plan.removals) {
    out.push_back(removal.path + "=" + removal.reason);
  }
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_SUITE_BEGIN("hubcache::compilecache::prune");

TEST_CASE("prune plans: failed entries by default, incomplete with --all, old versions whole with their registry")
{
  auto files = listing();
  cc::PruneOptions options;
  auto plan = cc::plan_prune(files, options);
  CHECK(paths(plan) == std::vector<std::string>{k_new + "/MODULE_2+d41d8cd9=failed"});
  CHECK(plan.bytes == 17);
  CHECK(plan.versions == std::vector<std::string>{k_old, k_new});
  CHECK(plan.size_before == 2 * 117 + 27); // README.md is no compile-cache file

  options.incomplete = true;
  CHECK(paths(cc::plan_prune(files, options))
        == std::vector<std::string>{k_new + "/MODULE_2+d41d8cd9=failed", k_new + "/MODULE_3+d41d8cd9=incomplete"});

  options.old_versions = true;
  options.keep_versions = {"2.15"};
  plan = cc::plan_prune(files, options);
  CHECK(paths(plan) == std::vector<std::string>{k_new + "=old-version"});
  CHECK(plan.removals[0].files == 8);

  options.keep_versions = {"2.2"}; // a prefix ends at a '.' or '+': 2.2 is not 2.21
  CHECK_THROWS_WITH_AS(cc::plan_prune(files, options), doctest::Contains("matches no compiler version"),
                       InvalidArgument);
}

TEST_CASE("apply_prune deletes the plan's folders in one commit, and not on a repo that moved")
{
  test_support::TempDir dir;
  storage::DirectoryRepository repo(dir / "repo");
  repo.create({});
  storage::CommitRequest seed;
  seed.message = "seed";
  for (const auto& file : listing()) {
    seed.additions.push_back({file.path, storage::FileSource::from_bytes(std::string(file.size, 'x'))});
  }
  repo.commit(seed);
  auto revision = repo.revision();
  cc::PruneOptions options;
  options.old_versions = true;
  options.keep_versions = {"2.21"};
  auto plan = cc::plan_prune(repo.list_files(), options);
  CHECK(paths(plan) == std::vector<std::string>{k_old + "=old-version", k_new + "/MODULE_2+d41d8cd9=failed"});

  storage::CommitRequest other;
  other.message = "another writer";
  other.additions.push_back({"other.txt", storage::FileSource::from_bytes("x")});
  repo.commit(other);
  CHECK_THROWS_AS(cc::apply_prune(repo, plan, revision), ConflictError);
  CHECK(repo.stat(k_old + "/MODULE_1+d41d8cd9/model.neff"));

  auto result = cc::apply_prune(repo, plan, repo.revision());
  CHECK(result.files_deleted == 5 + 2);
  CHECK_FALSE(repo.stat(k_old + "/MODULE_1+d41d8cd9/model.neff"));
  CHECK_FALSE(repo.stat(k_new + "/MODULE_2+d41d8cd9/model.log"));
  CHECK(repo.stat(k_new + "/MODULE_1+d41d8cd9/model.neff"));
  CHECK(repo.stat(k_new + "/0_REGISTRY/0.3.0/llama/meta/m/abc.json"));
}

TEST_SUITE_END();

} // namespace compilecache_prune_test
