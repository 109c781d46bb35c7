#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/store_copy.hpp>
#include <hubcache/error.hpp>
#include <hubcache/storage/directory_repository.hpp>

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>

using namespace hubcache;
using namespace hubcache::storage;
namespace cc = hubcache::compilecache;
namespace stdfs = std::filesystem;

namespace {

const std::string k_version = "neuronxcc-2.21.33363.0+82129205";
const std::string k_flags = R"(["--model-type=transformer"])";

std::string module_path(const std::string& key, const std::string& version = k_version)
{
  return version + "/MODULE_" + key + "+" + cc::flags_suffix(k_flags);
}

// A complete generation-C entry, as additions.
void add_entry(CommitRequest& request, const std::string& path, const std::string& neff, bool done = true,
               const std::string& flags = k_flags)
{
  request.additions.push_back({path + "/compile_flags.json", FileSource::from_bytes(flags)});
  request.additions.push_back({path + "/model.hlo_module.pb", FileSource::from_bytes("hlo of " + path)});
  request.additions.push_back({path + "/model.neff", FileSource::from_bytes(neff)});
  if (done) {
    request.additions.push_back({path + "/model.done", FileSource::from_bytes("")});
  }
}

void commit(Repository& repo, CommitRequest request)
{
  request.message = "test content";
  repo.commit(request);
}

std::set<std::string> paths_of(Repository& repo)
{
  std::set<std::string> paths;
  for (const auto& file : repo.list_files()) {
    paths.insert(file.path);
  }
  return paths;
}

struct Stores {
  test_support::TempDir dir;
  DirectoryRepository source{dir / "source"};
  DirectoryRepository target{dir / "target"};
  cc::CopyOptions options;
  Stores()
  {
    source.create({});
    target.create({});
    options.scratch_parent = dir.path();
    options.workers = 4;
  }
};

std::vector<std::string> reasons(const std::vector<cc::Skipped>& skipped)
{
  std::vector<std::string> found;
  for (const auto& item : skipped) {
    found.push_back(item.path + ": " + item.reason);
  }
  std::sort(found.begin(), found.end());
  return found;
}

} // namespace

TEST_CASE("a copy carries complete entries, skips the rest with a reason, and registries last")
{
  Stores stores;
  CommitRequest request;
  add_entry(request, module_path("1"), "neff one");
  add_entry(request, module_path("2"), std::string(3000, 'x'));
  add_entry(request, module_path("3"), "unfinished", false);
  add_entry(request, module_path("4"), "wrong flags", true, R"(["--other"])");
  request.additions.push_back({module_path("5") + "/model.log", FileSource::from_bytes("compiler error")});
  request.additions.push_back({module_path("5") + "/compile_flags.json", FileSource::from_bytes(k_flags)});
  request.additions.push_back({k_version + "/MODULE_abcdef/model.neff", FileSource::from_bytes("exported")});
  request.additions.push_back({k_version + "/0_REGISTRY/0.4.4/llama/org/model/h.json", FileSource::from_bytes("{}")});
  request.additions.push_back({"README.md", FileSource::from_bytes("not cache content")});
  commit(stores.source, request);

  auto plan = cc::plan_copy(stores.source, stores.target, stores.options);
  CHECK(plan.copies.size() == 4);
  CHECK(plan.copies.back().entry.kind == cc::EntryKind::registry);
  CHECK(reasons(plan.skipped)
        == std::vector<std::string>{module_path("3") + ": incomplete-in-source",
                                    module_path("4") + ": flags-mismatch-in-source",
                                    module_path("5") + ": failed-in-source"});

  stores.options.batch_files = 3; // several commits
  auto report = cc::apply_copy(stores.source, stores.target, std::move(plan), stores.options);
  CHECK(report.errors.empty());
  CHECK(report.entries_copied.size() == 4);
  CHECK(report.commits >= 2);
  CHECK(report.files_copied == 10);
  CHECK(report.revision == stores.target.revision());
  auto copied = paths_of(stores.target);
  CHECK(copied.count(module_path("1") + "/model.done") == 1);
  CHECK(copied.count(module_path("2") + "/model.neff") == 1);
  CHECK(copied.count(k_version + "/0_REGISTRY/0.4.4/llama/org/model/h.json") == 1);
  CHECK(copied.count(module_path("3") + "/model.neff") == 0);
  CHECK(copied.count(module_path("5") + "/model.log") == 0);
  CHECK(copied.count("README.md") == 0);
  CHECK(stores.target.read_file(module_path("2") + "/model.neff") == std::string(3000, 'x'));
  // The scratch space is gone.
  for (const auto& item : stdfs::directory_iterator(stores.dir.path())) {
    CHECK(item.path().filename().string().find("neuron-cache-copy") == std::string::npos);
  }

  // Copied once: a second plan finds everything present and the target unchanged.
  auto head = stores.target.revision();
  auto again = cc::plan_copy(stores.source, stores.target, stores.options);
  CHECK(again.copies.empty());
  CHECK(again.entries_present.size() == 4);
  auto nothing = cc::apply_copy(stores.source, stores.target, std::move(again), stores.options);
  CHECK(nothing.commits == 0);
  CHECK(stores.target.revision() == head);
}

TEST_CASE("a copy keeps the target's complete entries, completes its partial ones, and filters")
{
  Stores stores;
  CommitRequest source_content;
  add_entry(source_content, module_path("1"), "source neff");
  add_entry(source_content, module_path("2"), "source neff 2");
  add_entry(source_content, module_path("3", "neuronxcc-2.19.1.0+00000000"), "older compiler");
  commit(stores.source, source_content);
  CommitRequest target_content;
  add_entry(target_content, module_path("1"), "target neff"); // complete, other bytes
  target_content.additions.push_back(
    {module_path("2") + "/model.neff", FileSource::from_bytes("torn")}); // partial: no done, other bytes
  commit(stores.target, target_content);

  stores.options.compiler_version = "2.21";
  auto plan = cc::plan_copy(stores.source, stores.target, stores.options);
  REQUIRE(plan.copies.size() == 1);
  CHECK(plan.copies[0].entry.path == module_path("2"));
  CHECK(plan.copies[0].to_copy.size() == 4); // the torn neff is replaced, the rest added
  CHECK(reasons(plan.skipped) == std::vector<std::string>{module_path("1") + ": target-entry-differs"});
  auto report = cc::apply_copy(stores.source, stores.target, std::move(plan), stores.options);
  CHECK(report.entries_copied == std::vector<std::string>{module_path("2")});
  CHECK(stores.target.read_file(module_path("1") + "/model.neff") == "target neff");
  CHECK(stores.target.read_file(module_path("2") + "/model.neff") == "source neff 2");
  CHECK_FALSE(stores.target.file_exists(module_path("3", "neuronxcc-2.19.1.0+00000000") + "/model.neff"));

  // Only named entries.
  stores.options.compiler_version.reset();
  stores.options.only_entries = std::set<std::string>{module_path("3", "neuronxcc-2.19.1.0+00000000")};
  auto only = cc::plan_copy(stores.source, stores.target, stores.options);
  REQUIRE(only.copies.size() == 1);
  CHECK(only.copies[0].entry.compiler_version == "2.19.1.0+00000000");
}

TEST_CASE("a file that cannot be read leaves its entry out and the others land")
{
  Stores stores;
  CommitRequest request;
  add_entry(request, module_path("1"), "one");
  add_entry(request, module_path("2"), "two");
  commit(stores.source, request);
  auto plan = cc::plan_copy(stores.source, stores.target, stores.options);
  REQUIRE(plan.copies.size() == 2);
  // The source loses a file between the plan and the copy.
  CommitRequest removal;
  removal.message = "remove";
  removal.deletions.push_back({module_path("2") + "/model.hlo_module.pb", false});
  stores.source.commit(removal);

  auto report = cc::apply_copy(stores.source, stores.target, std::move(plan), stores.options);
  CHECK(report.entries_copied == std::vector<std::string>{module_path("1")});
  REQUIRE(report.errors.size() == 1);
  CHECK(report.errors[0].path == module_path("2"));
  CHECK(stores.target.file_exists(module_path("1") + "/model.done"));
  // Nothing of the broken entry is visible at the target.
  CHECK_FALSE(stores.target.file_exists(module_path("2") + "/model.neff"));
  CHECK_FALSE(stores.target.file_exists(module_path("2") + "/model.done"));
}

TEST_CASE("a target that does not exist yet is planned as empty")
{
  test_support::TempDir dir;
  DirectoryRepository source(dir / "source");
  source.create({});
  CommitRequest request;
  add_entry(request, module_path("1"), "one");
  commit(source, request);
  DirectoryRepository missing(dir / "not-yet");
  cc::CopyOptions options;
  options.scratch_parent = dir.path();
  auto plan = cc::plan_copy(source, missing, options);
  CHECK(plan.copies.size() == 1);
  CHECK(plan.bytes_planned > 0);
}
