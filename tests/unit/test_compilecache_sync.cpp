#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/pull_lock.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/error.hpp>
#include <hubcache/storage/directory_repository.hpp>
#include <hubcache/util/fd.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/hash.hpp>

#include "forwarding_repository.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <filesystem>

using namespace hubcache;
using namespace hubcache::util;
using namespace hubcache::storage;
namespace cc = hubcache::compilecache;
namespace stdfs = std::filesystem;

namespace compilecache_sync_test {

namespace {

const std::string k_version = "neuronxcc-2.21.33363.0+82129205";

using test_support::write;

std::string make_entry(const stdfs::path& root, const std::string& key, const std::string& neff = "neff",
                       const std::string& version = k_version)
{
  std::string flags = R"(["--model-type=transformer"])";
  auto rel = version + "/MODULE_" + key + "+" + cc::flags_suffix(flags);
  auto dir = root / rel;
  write(dir / "compile_flags.json", flags);
  write(dir / "model.hlo_module.pb", "hlo " + key);
  write(dir / "model.neff", neff);
  write(dir / "model.done", "");
  return rel;
}

RepoFile remote_of(const stdfs::path& file, const std::string& path, bool sha256)
{
  auto digests = digest_file(file);
  return RepoFile{path, digests.size, sha256 ? digests.sha256 : "", sha256 ? "" : digests.git_blob_sha1};
}

struct Fixture {
  test_support::TempDir dir;
  stdfs::path root = dir / "cache";
  DirectoryRepository repo{dir / "repo"};
  Fixture() { repo.create({}); }
};

// The repo's content-derived revision: unchanged iff nothing was written.
std::string repo_state(Fixture& fixture)
{
  return fixture.repo.revision().value_or("");
}

// Forwards to a repo and counts listings, to show what push does not do.
class CountingRepository final : public test_support::ForwardingRepository {
public:
  using ForwardingRepository::ForwardingRepository;
  std::size_t listings = 0;

  std::vector<RepoFile> list_files(std::string_view prefix) override
  {
    ++listings;
    return ForwardingRepository::list_files(prefix);
  }
  // A folder listing is derived from a counted listing of files.
  std::vector<std::string> list_folders(std::string_view prefix) override { return Repository::list_folders(prefix); }
  util::FileDigests download_listed(const RepoFile& listed, const stdfs::path& destination,
                                    const util::ProgressCallback& progress, bool flush) override
  {
    return inner().download_listed(listed, destination, progress, flush);
  }
  std::vector<std::string> complete_digests(const std::vector<RepoFile*>& files) override
  {
    return inner().complete_digests(files);
  }
};

} // namespace

TEST_SUITE_BEGIN("sync");

TEST_CASE("push: digests travel with the additions and come back from the commit; no second listing")
{
  Fixture fixture;
  make_entry(fixture.root, "1", "a neff of some size");
  CountingRepository counting(fixture.repo);
  cc::DigestCache digests(fixture.dir / "digests.tsv");
  auto scan = cc::scan(fixture.root);
  auto plan = cc::plan_push(scan, cc::list_remote_for(counting, scan), digests);
  auto listings_before = counting.listings;
  auto result = cc::push(counting, plan, digests);
  CHECK(result.committed);
  CHECK(counting.listings == listings_before);
  // What the commit reported is now known locally, with the repo's own sha256.
  for (const auto& upload : plan.uploads) {
    auto known = digests.known(upload.path, upload.stamp);
    REQUIRE(known.has_value());
    CHECK(known->sha256 == digest_file(plan.source_of(upload)).sha256);
  }
  // The commit result describes every addition.
  CommitRequest request{"again", "", {{"x/y.txt", FileSource::from_bytes("hello")}}, {}, std::nullopt};
  auto again = fixture.repo.commit(request);
  REQUIRE(again.files.size() == 1);
  CHECK(again.files[0].path == "x/y.txt");
  CHECK(again.files[0].size == 5);
  CHECK(again.files[0].sha256 == hex_digest(HashAlgorithm::sha256, "hello"));
}

TEST_CASE("push plan: only publishable entries, only what the repo lacks or holds differently")
{
  test_support::TempDir dir;
  auto a = make_entry(dir.path(), "1");
  auto b = make_entry(dir.path(), "2");
  auto c = make_entry(dir.path(), "3");
  write(dir / k_version / "MODULE_4+d41d8cd9" / "model.log", "Failed compilation");
  auto scan = cc::scan(dir.path());

  cc::DigestCache digests;
  std::vector<RepoFile> remote;
  for (const auto& name : {"compile_flags.json", "model.hlo_module.pb", "model.neff", "model.done"}) {
    remote.push_back(remote_of(dir / a / name, a + "/" + name, true));  // sha256 (directory, LFS)
    remote.push_back(remote_of(dir / b / name, b + "/" + name, false)); // git blob sha1 (Hub regular file)
  }
  // Same size, other content: must be uploaded again.
  remote.back() = RepoFile{b + "/model.done", 0, "", git_blob_sha1("")};
  remote[5] = RepoFile{b + "/model.neff", 4, "", git_blob_sha1("NEFF")};

  auto plan = cc::plan_push(scan, remote, digests);
  CHECK(plan.entries_present == std::vector<std::string>{a});
  CHECK(plan.entries_to_push == std::vector<std::string>{b, c});
  std::vector<std::string> uploads;
  for (const auto& upload : plan.uploads) {
    uploads.push_back(upload.path);
  }
  CHECK(uploads
        == std::vector<std::string>{b + "/model.neff", c + "/compile_flags.json", c + "/model.done",
                                    c + "/model.hlo_module.pb", c + "/model.neff"});
  CHECK(plan.skipped.size() == 1);
  CHECK(plan.skipped[0].reason == cc::SkipReason::failed);
  // Files absent from the repo are never hashed locally: the upload hashes them anyway.
  CHECK(digests.hashed() == 8);
}

TEST_CASE("push: one commit, then nothing; the digest cache makes the re-run hash nothing")
{
  Fixture fixture;
  for (int i = 0; i < 3; ++i) {
    make_entry(fixture.root, std::to_string(i));
  }
  auto cache_file = fixture.dir / "digests.tsv";
  {
    cc::DigestCache digests(cache_file);
    auto scan = cc::scan(fixture.root);
    auto plan = cc::plan_push(scan, cc::list_remote_for(fixture.repo, scan), digests);
    CHECK(plan.uploads.size() == 12);
    auto result = cc::push(fixture.repo, plan, digests);
    CHECK(result.committed);
    CHECK(digests.hashed() == 0);
    digests.save();
  }
  auto state = repo_state(fixture);
  CHECK(fixture.repo.read_file(k_version + "/MODULE_1+" + cc::flags_suffix(R"(["--model-type=transformer"])")
                               + "/model.neff")
        == "neff");
  {
    cc::DigestCache digests(cache_file);
    auto scan = cc::scan(fixture.root);
    auto plan = cc::plan_push(scan, cc::list_remote_for(fixture.repo, scan), digests);
    CHECK(plan.uploads.empty());
    CHECK(plan.entries_present.size() == 3);
    CHECK(digests.hashed() == 0);
    auto result = cc::push(fixture.repo, plan, digests);
    CHECK_FALSE(result.committed);
    CHECK(result.revision == fixture.repo.revision());
  }
  CHECK(repo_state(fixture) == state);
}

TEST_CASE("digest cache: stamps invalidate, corrupt files are ignored")
{
  test_support::TempDir dir;
  auto file = dir / "f";
  write(file, "one");
  auto cache_file = dir / "cache" / "digests.tsv";
  {
    cc::DigestCache digests(cache_file);
    auto d = digests.digest("f", file, cc::stamp_of(file));
    CHECK(d.sha256 == hex_digest(HashAlgorithm::sha256, "one"));
    CHECK(digests.hashed() == 1);
    digests.save();
  }
  {
    cc::DigestCache digests(cache_file);
    digests.digest("f", file, cc::stamp_of(file));
    CHECK(digests.hashed() == 0);
    write(file, "two"); // same size, new inode and mtime
    auto d = digests.digest("f", file, cc::stamp_of(file));
    CHECK(d.sha256 == hex_digest(HashAlgorithm::sha256, "two"));
    CHECK(digests.hashed() == 1);
  }
  write(cache_file, "neuron-cache-digests 1\n3\tnot-a-number\n");
  cc::DigestCache corrupt(cache_file);
  corrupt.digest("f", file, cc::stamp_of(file));
  CHECK(corrupt.hashed() == 1);
  write(cache_file, "something else entirely");
  cc::DigestCache other(cache_file);
  other.digest("f", file, cc::stamp_of(file));
  CHECK(other.hashed() == 1);

  auto env = Environment::from_map({{"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}});
  auto path = cc::DigestCache::default_path("/var/tmp/neuron-compile-cache", env);
  CHECK(path.parent_path() == "/xdg/neuron-cache");
  CHECK(cc::DigestCache::default_path("/var/tmp/neuron-compile-cache", Environment::from_map({{"HOME", "/home/u"}}))
          .parent_path()
        == "/home/u/.cache/neuron-cache");
  CHECK(cc::DigestCache::default_path("/other", env) != path);
}

TEST_CASE("digest cache: a remembered key is taken, not copied, only for a new record; all digests round-trip")
{
  test_support::TempDir dir;
  auto file = dir / "f";
  write(file, "one");
  auto stamp = cc::stamp_of(file);
  auto cache_file = dir / "digests.tsv";
  util::FileDigests known{.size = stamp.size,
                          .sha256 = hex_digest(HashAlgorithm::sha256, "one"),
                          .git_blob_sha1 = git_blob_sha1("one"),
                          .md5 = hex_digest(HashAlgorithm::md5, "one"),
                          .etag = "etag-1"};
  {
    cc::DigestCache digests(cache_file);
    std::string key = "v/MODULE_1+a/f";
    digests.remember(std::move(key), stamp, known);
    CHECK(key.empty()); // the record keeps the caller's string
    std::string again = "v/MODULE_1+a/f";
    digests.remember(std::move(again), stamp, {.size = stamp.size, .sha256 = known.sha256, .git_blob_sha1 = ""});
    CHECK(again == "v/MODULE_1+a/f"); // a record had it: left to the caller
    // Digests that are not lowercase hex are not kept: unknown, not wrong.
    digests.remember(std::string("v/MODULE_1+a/g"), stamp,
                     {.size = stamp.size, .sha256 = "NOT-HEX", .git_blob_sha1 = ""});
    CHECK(digests.known("v/MODULE_1+a/g", stamp)->sha256.empty());
    digests.save();
  }
  cc::DigestCache loaded(cache_file);
  auto found = loaded.known("v/MODULE_1+a/f", stamp);
  REQUIRE(found.has_value());
  CHECK(found->sha256 == known.sha256);
  CHECK(found->git_blob_sha1 == known.git_blob_sha1);
  CHECK(found->md5 == known.md5);
  CHECK(found->etag == "etag-1");
  CHECK_FALSE(loaded.known("v/MODULE_1+a/f", {stamp.size + 1, stamp.mtime_ns, stamp.inode}).has_value());
  // A digest that is not hex makes the file corrupt: ignored whole.
  write(cache_file, "neuron-cache-digests 2\n3\t1\t2\t" + std::string(64, 'g') + "\t-\t-\t-\tv/MODULE_1+a/f\n");
  cc::DigestCache corrupt(cache_file);
  CHECK_FALSE(corrupt.known("v/MODULE_1+a/f", {3, 1, 2}).has_value());
}

TEST_CASE("S3 ETags: same content by MD5 or multipart ETag, remembered per file version, size when unknowable")
{
  test_support::TempDir dir;
  auto file = dir / "model.neff";
  constexpr std::uint64_t mib = 1 << 20;
  std::string content(11 * mib + 5, 'n');
  write(file, content);
  auto stamp = cc::stamp_of(file);
  cc::LocalFile local{"v/MODULE_1+a/model.neff", file.string(), stamp.size, stamp.mtime_ns, stamp.inode};
  auto remote = [&](std::string etag, std::uint64_t size = 0) {
    return RepoFile{local.path, size == 0 ? content.size() : size, "", "", std::move(etag)};
  };
  auto cache_file = dir / "digests.tsv";
  {
    cc::DigestCache digests(cache_file);
    // A single PUT: the MD5, hashed once for both checks.
    CHECK(cc::same_content(remote(hex_digest(HashAlgorithm::md5, content)), local, digests));
    CHECK(!cc::same_content(remote(hex_digest(HashAlgorithm::md5, "other")), local, digests));
    CHECK(digests.hashed() == 1);
    // Another size never matches, whatever the ETag.
    CHECK(!cc::same_content(remote(hex_digest(HashAlgorithm::md5, content), 7), local, digests));
    // Multipart, 5 MiB parts (3 of them): the only whole MiB that gives 3 parts of 11 MiB.
    CHECK(cc::same_content(remote(multipart_etag(content, 5 * mib)), local, digests));
    CHECK(!cc::same_content(remote(multipart_etag(std::string(content.size(), 'x'), 5 * mib)), local, digests));
    // 2 parts: 6 to 10 MiB all fit; the store's own part size (7 MiB) is tried and found.
    digests.set_etag_part_sizes({7 * mib});
    CHECK(cc::same_content(remote(multipart_etag(content, 7 * mib)), local, digests));
    // A part size nobody uses: not provable, the size decides.
    CHECK(cc::same_content(remote(multipart_etag(std::string(content.size(), 'x'), 9 * mib)), local, digests));
    // An opaque tag (an encrypted object): the size decides, nothing is read.
    auto before = digests.hashed();
    CHECK(cc::same_content(remote("kms-opaque-tag"), local, digests));
    CHECK(digests.hashed() == before);
    // An ETag S3 gave our upload of this version: known without reading.
    digests.remember(local.path, stamp, {.size = stamp.size, .sha256 = "", .git_blob_sha1 = "", .etag = "given-by-s3"});
    digests.save();
  }
  {
    cc::DigestCache digests(cache_file);
    CHECK(cc::same_content(remote("given-by-s3"), local, digests));
    CHECK(cc::same_content(remote(hex_digest(HashAlgorithm::md5, content)), local, digests));
    CHECK(digests.hashed() == 0);
    // The Hub's digests were learnt in the same pass.
    CHECK(digests.digest(local.path, file, stamp).sha256 == hex_digest(HashAlgorithm::sha256, content));
    CHECK(digests.hashed() == 0);
  }
  // Rewritten with the same size: the remembered ETag no longer applies.
  content[100] = 'x';
  write(file, content);
  stamp = cc::stamp_of(file);
  local = {local.path, file.string(), stamp.size, stamp.mtime_ns, stamp.inode};
  cc::DigestCache digests(cache_file);
  CHECK(!cc::same_content(remote(hex_digest(HashAlgorithm::md5, "old")), local, digests));
  CHECK(digests.hashed() == 1);
  // A version 1 file (no MD5, no ETag) is still read.
  write(cache_file, "neuron-cache-digests 1\n" + std::to_string(stamp.size) + "\t" + std::to_string(stamp.mtime_ns)
                      + "\t" + std::to_string(stamp.inode) + "\t" + hex_digest(HashAlgorithm::sha256, content) + "\t-\t"
                      + local.path + "\n");
  cc::DigestCache v1(cache_file);
  REQUIRE(v1.known(local.path, stamp));
  CHECK(v1.known(local.path, stamp)->sha256 == hex_digest(HashAlgorithm::sha256, content));
}

TEST_CASE("remembered listing: only at its revision, only for the versions it covers, never from a damaged file")
{
  test_support::TempDir dir;
  auto file = dir / "remote.tsv";
  std::vector<RepoFile> files = {
    {k_version + "/MODULE_1+abcdef12/model.neff", 7, std::string(64, 'a'), std::string(40, 'b')},
    {k_version + "/MODULE_1+abcdef12/model.done", 0, "", std::string(40, 'c')},
    {"neuronxcc-1.0/MODULE_2+abcdef12/model.neff", 3, "", ""},
  };
  cc::RemoteSnapshot snapshot(file);
  snapshot.save("rev1", {k_version, "neuronxcc-1.0"}, files);
  auto back = snapshot.files(std::string("rev1"), {k_version});
  REQUIRE(back.has_value());
  REQUIRE(back->size() == 2);
  CHECK(back->at(0).path == files[0].path);
  CHECK(back->at(0).size == 7);
  CHECK(back->at(0).sha256 == files[0].sha256);
  CHECK(back->at(0).git_blob_sha1 == files[0].git_blob_sha1);
  CHECK(back->at(1).sha256.empty());
  CHECK(snapshot.files(std::string("rev1"), {k_version, "neuronxcc-1.0"})->size() == 3);
  CHECK(!snapshot.files(std::string("rev2"), {k_version}));
  CHECK(!snapshot.files(std::nullopt, {k_version}));
  CHECK(!snapshot.files(std::string("rev1"), {"neuronxcc-9.9"}));
  // A file cut short (a crash mid-write of a foreign tool, a full disk) is not trusted.
  auto text = util::read_file(file);
  write(file, text.substr(0, text.size() - 5));
  CHECK(!snapshot.files(std::string("rev1"), {k_version}));
  write(file, text + "12\tnot-a-line\n");
  CHECK(!snapshot.files(std::string("rev1"), {k_version}));
}

TEST_CASE("in sync: only for the same head and the same files to publish; a planned push agrees")
{
  Fixture fixture;
  make_entry(fixture.root, "1");
  make_entry(fixture.root, "2");
  auto scan = cc::scan(fixture.root);
  auto fingerprint = cc::publish_fingerprint(scan);
  CHECK(fingerprint == cc::publish_fingerprint(cc::scan(fixture.root)));

  cc::RemoteSnapshot snapshot(fixture.dir / "state" / "remote.tsv");
  CHECK_FALSE(snapshot.in_sync(std::string("rev1"), fingerprint));
  snapshot.mark_in_sync("rev1", fingerprint);
  CHECK(snapshot.in_sync(std::string("rev1"), fingerprint));
  CHECK_FALSE(snapshot.in_sync(std::string("rev2"), fingerprint));
  CHECK_FALSE(snapshot.in_sync(std::nullopt, fingerprint));
  CHECK_FALSE(cc::RemoteSnapshot().in_sync(std::string("rev1"), fingerprint));

  // What an in-sync push reports is what planning against the repo gives.
  cc::DigestCache digests;
  auto pushed = cc::push(fixture.repo, cc::plan_push(scan, {}, digests), digests);
  auto planned = cc::plan_push(scan, fixture.repo.list_files(), digests);
  auto shortcut = cc::plan_already_pushed(scan);
  CHECK(planned.uploads.empty());
  CHECK(shortcut.uploads.empty());
  CHECK(shortcut.entries_present == planned.entries_present);
  CHECK(shortcut.entries_to_push.empty());
  CHECK(shortcut.skipped.size() == planned.skipped.size());

  // Any change to a publishable file's stamp, a new entry, or an entry that stops being
  // publishable changes the fingerprint; an unpublishable one does not count.
  write(fixture.root / k_version / "MODULE_9+00000000" / "model.log", "failed");
  CHECK(cc::publish_fingerprint(cc::scan(fixture.root)) == fingerprint);
  auto second = fixture.root / make_entry(fixture.root, "2", "recompiled");
  CHECK(cc::publish_fingerprint(cc::scan(fixture.root)) != fingerprint);
  auto changed = cc::publish_fingerprint(cc::scan(fixture.root));
  make_entry(fixture.root, "3");
  CHECK(cc::publish_fingerprint(cc::scan(fixture.root)) != changed);
  auto three = cc::publish_fingerprint(cc::scan(fixture.root));
  stdfs::remove(second / "model.done");
  CHECK(cc::publish_fingerprint(cc::scan(fixture.root)) != three);

  // A damaged record is not in sync.
  auto record = fixture.dir / "state" / "remote.in-sync";
  REQUIRE(stdfs::exists(record));
  write(record, "neuron-cache-in-sync 1\nrevision\trev1\n");
  CHECK_FALSE(snapshot.in_sync(std::string("rev1"), fingerprint));
}

TEST_CASE("repo layout grouping and version filters")
{
  std::vector<RepoFile> files = {
    {k_version + "/MODULE_1+d41d8cd9/model.neff", 1, "", ""},
    {k_version + "/MODULE_1+d41d8cd9/model.done", 0, "", ""},
    {k_version + "/MODULE_1+d41d8cd9/model.hlo_module.pb.lock", 0, "", ""},
    {k_version + "/MODULE_abc/config.json", 2, "", ""},
    {k_version + "/0_REGISTRY/0.4.6/x/y.json", 2, "", ""},
    {"registry.json", 3, "", ""},
    {"inference-cache-config/a.json", 3, "", ""},
    {k_version + "/stray.txt", 3, "", ""},
    {k_version + "/MODULE_zz/x", 3, "", ""},
  };
  auto layout = cc::group_repo_files(files);
  REQUIRE(layout.entries.size() == 3);
  CHECK(layout.entries[0].kind == cc::EntryKind::registry);
  CHECK(layout.entries[1].kind == cc::EntryKind::module);
  CHECK(layout.entries[1].files.size() == 2); // the lock is never installed
  CHECK(layout.entries[1].compiler_version == "2.21.33363.0+82129205");
  CHECK(layout.entries[2].kind == cc::EntryKind::exported_model);
  CHECK(layout.other_files == 4);

  CHECK(cc::version_matches("2.21.33363.0+82129205", "2.21.33363.0+82129205"));
  CHECK(cc::version_matches("2.21.33363.0+82129205", "2.21.33363.0"));
  CHECK(cc::version_matches("2.21.33363.0+82129205", "2.21"));
  CHECK_FALSE(cc::version_matches("2.21.33363.0+82129205", "2.2"));
  CHECK_FALSE(cc::version_matches("2.21.33363.0+82129205", "2.15"));
}

TEST_CASE("pull installs whole entries, skips what it must, and is idempotent")
{
  Fixture fixture;
  auto source = fixture.dir / "source";
  auto good = make_entry(source, "1", "neff one");
  auto other_version = make_entry(source, "2", "neff two", "neuronxcc-2.15.128.0+56dc5a86");
  auto no_done = make_entry(source, "3");
  write(source / k_version / "MODULE_abcdef" / "model.neuron", "traced");
  {
    cc::DigestCache digests;
    auto scan = cc::scan(source);
    cc::push(fixture.repo, cc::plan_push(scan, {}, digests), digests);
  }
  // An entry the repo holds without its done marker (as an old uploader could leave it).
  CommitRequest edit;
  edit.message = "test";
  edit.deletions.push_back({no_done + "/model.done", false});
  fixture.repo.commit(edit);

  cc::DigestCache digests;
  auto report =
    cc::pull(fixture.repo, fixture.root, digests, {.compiler_version = std::string("2.21"), .dry_run = false});
  CHECK(report.transferred == std::vector<std::string>{good, k_version + "/MODULE_abcdef"});
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].path == no_done);
  CHECK(report.skipped[0].reason == cc::SkipReason::incomplete_in_repo);
  CHECK(util::read_file(fixture.root / good / "model.neff") == "neff one");
  CHECK(stdfs::exists(fixture.root / good / "model.done"));
  CHECK_FALSE(stdfs::exists(fixture.root / other_version));
  CHECK_FALSE(stdfs::exists(fixture.root / no_done));
  for (const auto& item : stdfs::directory_iterator(fixture.root)) {
    CHECK_FALSE(util::is_temp_name(item.path().filename().string()));
  }

  auto again = cc::pull(fixture.repo, fixture.root, digests, {});
  CHECK(again.transferred == std::vector<std::string>{other_version});
  CHECK(again.present.size() == 2);
  CHECK(digests.hashed() == 0); // what was downloaded is known by its repo digests
}

TEST_CASE("pull completes a partial entry and leaves locked or different ones alone")
{
  Fixture fixture;
  auto source = fixture.dir / "source";
  auto partial = make_entry(source, "1");
  auto locked = make_entry(source, "2");
  auto different = make_entry(source, "3");
  {
    cc::DigestCache digests;
    auto scan = cc::scan(source);
    cc::push(fixture.repo, cc::plan_push(scan, {}, digests), digests);
  }
  write(fixture.root / partial / "model.neff", "neff");
  write(fixture.root / partial / "compile_flags.json", R"(["--model-type=transformer"])");
  write(fixture.root / locked / "model.hlo_module.pb.lock", "");
  write(fixture.root / different / "model.neff", "a compiler's own neff");

  cc::DigestCache digests;
  auto report = cc::pull(fixture.repo, fixture.root, digests, {});
  CHECK(report.transferred == std::vector<std::string>{partial});
  CHECK(stdfs::exists(fixture.root / partial / "model.done"));
  REQUIRE(report.skipped.size() == 2);
  CHECK(report.skipped[0].reason == cc::SkipReason::locked_locally);
  CHECK(report.skipped[1].reason == cc::SkipReason::local_entry_differs);
  CHECK_FALSE(stdfs::exists(fixture.root / locked / "model.neff"));
  CHECK(util::read_file(fixture.root / different / "model.neff") == "a compiler's own neff");
}

TEST_CASE("pull sweeps staging left by a dead process, keeps a live one's")
{
  Fixture fixture;
  make_entry(fixture.dir / "source", "1");
  {
    cc::DigestCache digests;
    auto scan = cc::scan(fixture.dir / "source");
    cc::push(fixture.repo, cc::plan_push(scan, {}, digests), digests);
  }
  auto dead = fixture.root / (".neuron-cache-pull.tmp.nc." + test_support::temp_owner_of(999999999) + "abc");
  auto alive = fixture.root / (".neuron-cache-pull.tmp.nc." + test_support::temp_owner_of(::getpid()) + "abc");
  write(dead / "0" / "model.neff", "partial");
  write(alive / "0" / "model.neff", "in flight");
  cc::DigestCache digests;
  cc::pull(fixture.repo, fixture.root, digests, {});
  CHECK_FALSE(stdfs::exists(dead));
  CHECK(stdfs::exists(alive));

  // A pull killed after its last install: the re-run has nothing to download, and still
  // clears what the dead one left, its staging and its lock.
  write(dead / "0" / "model.neff", "installed, staging not yet removed");
  auto lock = fixture.root / std::string(cc::k_pull_lock_name);
  write(lock, "neuron-cache-pull-lock 1\n" + test_support::temp_owner_of(999999999) + "\n");
  auto again = cc::pull(fixture.repo, fixture.root, digests, {});
  CHECK(again.transferred.empty());
  CHECK_FALSE(stdfs::exists(dead));
  CHECK_FALSE(stdfs::exists(lock));
  CHECK(stdfs::exists(alive));
  // A live pull's lock (its owner alive, its flock held) stays.
  write(lock, "neuron-cache-pull-lock 1\n" + test_support::temp_owner_of(::getpid()) + "\n");
  util::Fd held(::open(lock.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(::flock(held.get(), LOCK_EX | LOCK_NB) == 0);
  cc::pull(fixture.repo, fixture.root, digests, {});
  CHECK(stdfs::exists(lock));
}

TEST_CASE("pull: a repo file replaced between listing and copy is never installed as the listed one")
{
  Fixture fixture;
  cc::DigestCache digests;
  SUBCASE("the listing knew its digest: the entry fails, nothing is installed, the next pull installs it")
  {
    auto entry = make_entry(fixture.dir / "source", "1", "neff one");
    auto scan = cc::scan(fixture.dir / "source");
    cc::push(fixture.repo, cc::plan_push(scan, {}, digests), digests);
    auto plan = cc::plan_pull(fixture.repo, fixture.root, digests, {});
    write(fixture.dir / "repo" / entry / "model.neff", "NEFF ONE"); // same size, other bytes
    auto report = cc::apply_pull(fixture.repo, fixture.root, std::move(plan), digests, {});
    REQUIRE(report.errors.size() == 1);
    CHECK(report.errors[0].path == entry);
    CHECK(report.errors[0].detail.find("changed since it was listed") != std::string::npos);
    CHECK_FALSE(stdfs::exists(fixture.root / entry));
    auto again = cc::pull(fixture.repo, fixture.root, digests, {});
    CHECK(again.transferred == std::vector<std::string>{entry});
    CHECK(util::read_file(fixture.root / entry / "model.neff") == "NEFF ONE");
  }
  SUBCASE("the listing gave its size only: what is remembered is the digest of the bytes written")
  {
    // Written as a compiler writes into the repo: nothing indexed, the listing hashes nothing.
    auto entry = make_entry(fixture.dir / "repo", "2", "neff two");
    auto plan = cc::plan_pull(fixture.repo, fixture.root, digests, {});
    write(fixture.dir / "repo" / entry / "model.neff", "NEFF TWO");
    auto report = cc::apply_pull(fixture.repo, fixture.root, std::move(plan), digests, {});
    CHECK(report.transferred == std::vector<std::string>{entry});
    CHECK(util::read_file(fixture.root / entry / "model.neff") == "NEFF TWO");
    // The next pull finds the identical entry present, not "local-entry-differs".
    auto again = cc::pull(fixture.repo, fixture.root, digests, {});
    CHECK(again.skipped.empty());
    CHECK(again.present == std::vector<std::string>{entry});
  }
  SUBCASE("another size than the listing's is refused whatever the listing knew")
  {
    auto entry = make_entry(fixture.dir / "repo", "3", "neff three");
    auto plan = cc::plan_pull(fixture.repo, fixture.root, digests, {});
    write(fixture.dir / "repo" / entry / "model.neff", "a longer neff three");
    auto report = cc::apply_pull(fixture.repo, fixture.root, std::move(plan), digests, {});
    REQUIRE(report.errors.size() == 1);
    CHECK_FALSE(stdfs::exists(fixture.root / entry));
  }
}

TEST_CASE("push and pull hash a directory repo's files only to compare them, and still see every difference")
{
  Fixture fixture;
  // The repo holds entries a compiler wrote there itself: nothing indexed.
  auto same = make_entry(fixture.dir / "repo", "1", "neff one");
  auto differs = make_entry(fixture.dir / "repo", "2", "neff two");
  make_entry(fixture.root, "1", "neff one");
  make_entry(fixture.root, "2", "NEFF TWO"); // same size, other bytes
  for (const auto& file : fixture.repo.list_files()) {
    CHECK(file.sha256.empty());
  }
  cc::DigestCache digests;
  auto scan = cc::scan(fixture.root);
  auto remote = cc::list_remote_for(fixture.repo, scan);
  cc::complete_remote_digests(fixture.repo, remote, scan);
  auto plan = cc::plan_push(scan, remote, digests);
  CHECK(plan.entries_present == std::vector<std::string>{same});
  CHECK(plan.entries_to_push == std::vector<std::string>{differs});
  CHECK(plan.files_to_upload == 1);

  // A pull into a cache holding the same entries finds the one that differs.
  auto report = cc::pull(fixture.repo, fixture.root, digests, {});
  CHECK(report.present == std::vector<std::string>{same});
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].path == differs);
  CHECK(report.skipped[0].reason == cc::SkipReason::local_entry_differs);
}

TEST_SUITE_END();

TEST_CASE("pull never writes through a link in the local cache: the entry is skipped, the link's target untouched")
{
  Fixture fixture;
  auto entry = make_entry(fixture.dir / "source", "1");
  auto registry = k_version + "/0_REGISTRY/0.3.0/llama/meta/m/abc.json";
  write(fixture.dir / "source" / registry, "{}");
  {
    cc::DigestCache digests;
    auto scan = cc::scan(fixture.dir / "source");
    cc::push(fixture.repo, cc::plan_push(scan, {}, digests), digests);
  }
  auto outside = fixture.dir / "outside";
  stdfs::create_directories(outside);
  stdfs::create_directories(fixture.root);
  SUBCASE("a linked version folder")
  {
    stdfs::create_directory_symlink(outside, fixture.root / k_version);
  }
  SUBCASE("a linked folder inside the registry")
  {
    stdfs::create_directories(fixture.root / k_version / "0_REGISTRY" / "0.3.0");
    stdfs::create_directory_symlink(outside, fixture.root / k_version / "0_REGISTRY" / "0.3.0" / "llama");
  }
  cc::DigestCache digests;
  auto report = cc::pull(fixture.repo, fixture.root, digests, {});
  CHECK(stdfs::is_empty(outside));
  CHECK(report.errors.empty());
  bool skipped_for_link = false;
  for (const auto& skipped : report.skipped) {
    skipped_for_link = skipped_for_link || skipped.reason == cc::SkipReason::link_in_local_path;
  }
  CHECK(skipped_for_link);
}

TEST_CASE("plan_pull changes nothing; apply_pull gives the same tree and report with 1 or 8 workers")
{
  Fixture fixture;
  auto source = fixture.dir / "source";
  std::vector<std::string> entries;
  for (int i = 0; i < 12; ++i) {
    entries.push_back(
      make_entry(source, std::to_string(100 + i), std::string(static_cast<std::size_t>(1000 * i + 10), 'n')));
  }
  {
    cc::DigestCache digests;
    cc::push(fixture.repo, cc::plan_push(cc::scan(source), {}, digests), digests);
  }
  auto snapshot = [](const stdfs::path& root) {
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& item : stdfs::recursive_directory_iterator(root)) {
      if (item.is_regular_file()) {
        files.emplace_back(item.path().lexically_relative(root).generic_string(), util::read_file(item.path()));
      }
    }
    std::sort(files.begin(), files.end());
    return files;
  };

  std::vector<cc::TransferReport> reports;
  for (std::size_t workers : {1U, 8U}) {
    auto root = fixture.dir / ("pull" + std::to_string(workers));
    cc::DigestCache digests;
    cc::PullOptions options;
    options.workers = workers;
    auto plan = cc::plan_pull(fixture.repo, root, digests, options);
    CHECK_FALSE(stdfs::exists(root));
    CHECK(plan.installs.size() == entries.size());
    CHECK(plan.files_planned == 4 * entries.size());
    std::size_t calls = 0;
    util::TransferProgress last;
    auto report = cc::apply_pull(fixture.repo, root, std::move(plan), digests, options,
                                 [&](const util::TransferProgress& progress) {
                                   ++calls;
                                   CHECK(progress.bytes_done >= last.bytes_done);
                                   last = progress;
                                 });
    CHECK(calls > entries.size());
    CHECK(last.files_done == last.files_total);
    CHECK(last.bytes_done == last.bytes_total);
    CHECK(report.transferred == entries);
    CHECK(report.errors.empty());
    CHECK(snapshot(root / k_version) == snapshot(source / k_version));
    for (const auto& item : stdfs::directory_iterator(root)) {
      CHECK_FALSE(item.path().filename().string().starts_with(".neuron-cache-pull"));
    }
    reports.push_back(std::move(report));
  }
  CHECK(reports[0].files_transferred == reports[1].files_transferred);
  CHECK(reports[0].bytes_transferred == reports[1].bytes_transferred);
}

TEST_CASE("pull: a file that changed since the listing is refused, never remembered by the listing's digest")
{
  Fixture fixture;
  auto source = fixture.dir / "source";
  auto entry = make_entry(source, "1", "neff one");
  {
    cc::DigestCache digests;
    cc::push(fixture.repo, cc::plan_push(cc::scan(source), {}, digests), digests);
  }
  cc::DigestCache digests;
  auto plan = cc::plan_pull(fixture.repo, fixture.root, digests, {});
  REQUIRE(plan.installs.size() == 1);
  // The repo changes between the listing and the download: same size, other bytes.
  CommitRequest rewrite;
  rewrite.message = "rewrite";
  rewrite.additions.push_back({entry + "/model.neff", FileSource::from_bytes("NEFF ONE")});
  fixture.repo.commit(rewrite);

  auto report = cc::apply_pull(fixture.repo, fixture.root, std::move(plan), digests, {});
  CHECK(report.transferred.empty());
  REQUIRE(report.errors.size() == 1);
  CHECK(report.errors[0].path == entry);
  CHECK(report.errors[0].detail.find("listed") != std::string::npos); // "changed since it was listed"
  CHECK_FALSE(stdfs::exists(fixture.root / entry));
}

TEST_CASE("pull plan: listed sizes that would wrap their sum cannot slip under a size guard")
{
  Fixture fixture;
  std::string flags = R"(["--model-type=transformer"])";
  std::vector<RepoFile> listing;
  for (const char* key : {"1", "2"}) {
    auto rel = k_version + "/MODULE_" + key + "+" + cc::flags_suffix(flags);
    listing.push_back({rel + "/compile_flags.json", flags.size(), std::string(64, 'a')});
    listing.push_back({rel + "/model.hlo_module.pb", 1, std::string(64, 'b')});
    listing.push_back({rel + "/model.neff", std::uint64_t{1} << 63, std::string(64, 'c')});
    listing.push_back({rel + "/model.done", 0, std::string(64, 'd')});
  }
  cc::DigestCache digests;
  auto plan = cc::plan_pull(listing, fixture.root, digests, {});
  REQUIRE(plan.installs.size() == 2);
  CHECK(plan.bytes_planned == UINT64_MAX);
}

} // namespace compilecache_sync_test
