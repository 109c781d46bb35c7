#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/store_copy.hpp>
#include <hubcache/error.hpp>
#include <hubcache/storage/directory_repository.hpp>
#include <hubcache/util/hash.hpp>
#include <hubcache/util/process.hpp>

#include "forwarding_repository.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <set>

using namespace hubcache;
using namespace hubcache::storage;
namespace cc = hubcache::compilecache;
namespace stdfs = std::filesystem;

namespace compilecache_store_copy_test {

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

// Entries 1, 2 and 3 (NEFFs "one", "two", "three"), complete, in one commit.
void commit_three_entries(Repository& repo)
{
  CommitRequest request;
  add_entry(request, module_path("1"), "one");
  add_entry(request, module_path("2"), "two");
  add_entry(request, module_path("3"), "three");
  commit(repo, request);
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

// A directory repo that lists as S3 does: no sha256, the content's MD5 as its ETag.
class EtagListing final : public test_support::ForwardingRepository {
public:
  using ForwardingRepository::ForwardingRepository;
  std::vector<RepoFile> list_files(std::string_view prefix = {}) override
  {
    return as_s3_lists(ForwardingRepository::list_files(prefix));
  }
  CommitResult commit(const CommitRequest& request, const util::ProgressCallback& progress = {}) override
  {
    auto result = ForwardingRepository::commit(request, progress);
    result.files = as_s3_lists(std::move(result.files));
    return result;
  }

private:
  std::vector<RepoFile> as_s3_lists(std::vector<RepoFile> files)
  {
    for (auto& file : files) {
      file.etag = util::hex_digest(util::HashAlgorithm::md5, inner().read_file(file.path));
      file.sha256.clear();
      file.git_blob_sha1.clear();
    }
    return files;
  }
};

// A directory repo whose commits a signal meets: before the commit numbered
// `interrupt_before` (1 is the first) starts, or once the one numbered `interrupt_after` ended.
class InterruptedTarget final : public test_support::ForwardingRepository {
public:
  InterruptedTarget(Repository& inner, int interrupt_before, int interrupt_after)
    : ForwardingRepository(inner), m_before(interrupt_before), m_after(interrupt_after)
  {}
  CommitResult commit(const CommitRequest& request, const util::ProgressCallback& progress = {}) override
  {
    ++commits;
    if (commits == m_before) {
      util::request_interrupt(SIGINT);
    }
    auto result = ForwardingRepository::commit(request, progress);
    if (commits == m_after) {
      util::request_interrupt(SIGTERM);
    }
    return result;
  }
  int commits = 0;

private:
  int m_before;
  int m_after;
};

// The reasons these tests meet, named as the CLI names them.
std::string name_of(cc::SkipReason reason)
{
  switch (reason) {
  case cc::SkipReason::incomplete_in_source: return "incomplete-in-source";
  case cc::SkipReason::flags_mismatch_in_source: return "flags-mismatch-in-source";
  case cc::SkipReason::failed_in_source: return "failed-in-source";
  case cc::SkipReason::target_entry_differs: return "target-entry-differs";
  default: return "other";
  }
}

std::vector<std::string> reasons(const std::vector<cc::Skipped>& skipped)
{
  std::vector<std::string> found;
  for (const auto& item : skipped) {
    found.push_back(item.path + ": " + name_of(item.reason));
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
  CHECK(report.transferred.size() == 4);
  CHECK(report.commits >= 2);
  CHECK(report.files_transferred == 10);
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
  CHECK(report.transferred == std::vector<std::string>{module_path("2")});
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

TEST_CASE("a file rewritten with the same size is told apart by ETags, or by what the last copy recorded")
{
  Stores stores;
  CommitRequest content;
  add_entry(content, module_path("1"), "neff one");
  add_entry(content, module_path("2"), "neff two");
  commit(stores.source, content);
  EtagListing s3_source(stores.source);
  auto records_file = stores.dir / "copies.tsv";

  // From an S3-like source (ETags) to a store of sha256s: no checksum in common.
  {
    cc::CopyRecords records(records_file);
    stores.options.records = &records;
    auto report =
      cc::apply_copy(s3_source, stores.target, cc::plan_copy(s3_source, stores.target, stores.options), stores.options);
    CHECK(report.transferred.size() == 2);
    records.save();
  }
  CommitRequest rewrite;
  rewrite.additions.push_back({module_path("1") + "/model.neff", FileSource::from_bytes("NEFF ONE")});
  commit(stores.source, rewrite);
  {
    cc::CopyRecords records(records_file);
    stores.options.records = &records;
    auto plan = cc::plan_copy(s3_source, stores.target, stores.options);
    // The target's entry is complete: left alone, and said so (not "present").
    CHECK(reasons(plan.skipped) == std::vector<std::string>{module_path("1") + ": target-entry-differs"});
    CHECK(plan.entries_present == std::vector<std::string>{module_path("2")});
  }
  // With nothing recorded, the size decides.
  stores.options.records = nullptr;
  auto by_size = cc::plan_copy(s3_source, stores.target, stores.options);
  CHECK(by_size.skipped.empty());
  CHECK(by_size.entries_present.size() == 2);

  // Between two S3-like stores the MD5 ETags tell by themselves.
  DirectoryRepository other(stores.dir / "other");
  other.create({});
  commit(other, content);
  EtagListing s3_target(other);
  auto plan = cc::plan_copy(s3_source, s3_target, stores.options);
  CHECK(reasons(plan.skipped) == std::vector<std::string>{module_path("1") + ": target-entry-differs"});
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
  CHECK(report.transferred == std::vector<std::string>{module_path("1")});
  REQUIRE(report.errors.size() == 1);
  CHECK(report.errors[0].path == module_path("2"));
  CHECK(stores.target.file_exists(module_path("1") + "/model.done"));
  // Nothing of the broken entry is visible at the target.
  CHECK_FALSE(stores.target.file_exists(module_path("2") + "/model.neff"));
  CHECK_FALSE(stores.target.file_exists(module_path("2") + "/model.done"));
}

// A source whose every download fails as a store's own failure does (after its retries).
class FailingSource final : public test_support::ForwardingRepository {
public:
  using ForwardingRepository::ForwardingRepository;
  void download_file(std::string_view, const stdfs::path&, const util::ProgressCallback& = {}, bool = true) override
  {
    throw RemoteError("the source answered 503 Service Unavailable");
  }
};

TEST_CASE("a failure of the source stops the copy: the entry it met fails, the others are stopped, nothing lands")
{
  Stores stores;
  commit_three_entries(stores.source);
  FailingSource failing(stores.source);
  stores.options.workers = 1;
  auto plan = cc::plan_copy(failing, stores.target, stores.options);
  REQUIRE(plan.copies.size() == 3);

  auto report = cc::apply_copy(failing, stores.target, std::move(plan), stores.options);
  CHECK(report.transferred.empty());
  REQUIRE(report.errors.size() == 3);
  std::size_t failed = 0;
  for (const auto& error : report.errors) {
    // The failure itself is the detail, once as the entry's error, then as what stopped the rest.
    CHECK(error.detail.find("503 Service Unavailable") != std::string::npos);
    CHECK(error.detail.find("not copied") == std::string::npos); // worded by the CLI
    failed += error.reason == cc::SkipReason::error ? 1 : 0;
    CHECK((error.reason == cc::SkipReason::error || error.reason == cc::SkipReason::stopped));
  }
  CHECK(failed == 1);
  CHECK(paths_of(stores.target).empty());
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

// The interrupt a test requests is cleared however the test ends: left set, it would stop
// every later transfer of this binary at once.
struct InterruptReset {
  InterruptReset() = default;
  ~InterruptReset() { util::reset_interrupt(); }
  InterruptReset(const InterruptReset&) = delete;
  InterruptReset& operator=(const InterruptReset&) = delete;
};

// A copy of the source into `target`, one entry per batch, its scratch in <dir>/tmp, that a
// signal stops: the interrupt it meets is cleared however it ends.
cc::TransferReport interrupted_copy(Stores& stores, Repository& target)
{
  stores.options.batch_files = 1;
  stores.options.scratch_parent = stores.dir / "tmp";
  stdfs::create_directories(stores.options.scratch_parent);
  InterruptReset reset;
  return cc::apply_copy(stores.source, target, cc::plan_copy(stores.source, target, stores.options), stores.options);
}

TEST_CASE("an interrupt between two batches of a copy publishes the first whole and leaves no scratch")
{
  Stores stores;
  commit_three_entries(stores.source);
  InterruptedTarget target(stores.target, 0, 1);
  auto report = interrupted_copy(stores, target);
  CHECK(report.interrupted_by == SIGTERM);
  CHECK(target.commits == 1);
  CHECK(report.transferred == std::vector<std::string>{module_path("1")});
  CHECK(report.entries_planned == 3);
  CHECK(report.errors.empty()); // what was left is not an error: a re-run finishes it
  CHECK(stores.target.file_exists(module_path("1") + "/model.done"));
  CHECK_FALSE(stores.target.file_exists(module_path("2") + "/model.neff"));
  CHECK(stdfs::is_empty(stores.options.scratch_parent));

  // The same copy again finishes it.
  auto rest = cc::apply_copy(stores.source, stores.target, cc::plan_copy(stores.source, stores.target, stores.options),
                             stores.options);
  CHECK(rest.interrupted_by == 0);
  CHECK(rest.transferred.size() == 2);
  CHECK(stores.target.file_exists(module_path("3") + "/model.done"));
}

TEST_CASE("an interrupt the target's commit stops at publishes nothing of that batch")
{
  Stores stores;
  CommitRequest request;
  add_entry(request, module_path("1"), "one");
  add_entry(request, module_path("2"), "two");
  commit(stores.source, request);
  // The signal arrives as the second batch's commit starts: the directory repo stops while staging.
  InterruptedTarget target(stores.target, 2, 0);
  auto report = interrupted_copy(stores, target);
  CHECK(report.interrupted_by == SIGINT);
  CHECK(target.commits == 2);
  CHECK(report.transferred == std::vector<std::string>{module_path("1")});
  CHECK(report.errors.empty());
  CHECK_FALSE(stores.target.file_exists(module_path("2") + "/model.neff"));
  CHECK_FALSE(stores.target.file_exists(module_path("2") + "/model.done"));
  CHECK(stdfs::is_empty(stores.options.scratch_parent));
}

} // namespace compilecache_store_copy_test
