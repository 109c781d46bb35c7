#pragma once

#include <hubcache/storage/repository.hpp>

// A repository that forwards the calls every backend answers to another: a test derives
// from it and overrides only the calls it watches or changes (counts listings, lists as S3
// does, meets a signal). The optional calls (download_listed, complete_digests, item_dates,
// the limits) keep Repository's defaults, which go through this object's own calls, so
// what a test changes reaches them too.
namespace test_support {

class ForwardingRepository : public hubcache::storage::Repository {
public:
  explicit ForwardingRepository(hubcache::storage::Repository& inner) : m_inner(inner) {}

  std::string spec() const override { return m_inner.spec(); }
  std::string describe() const override { return m_inner.describe(); }
  bool exists() override { return m_inner.exists(); }
  std::string create(const hubcache::storage::RepoCreateOptions& options) override { return m_inner.create(options); }
  std::optional<std::string> revision() override { return m_inner.revision(); }
  std::vector<hubcache::storage::RepoFile> list_files(std::string_view prefix = {}) override
  {
    return m_inner.list_files(prefix);
  }
  std::vector<std::string> list_folders(std::string_view prefix = {}) override { return m_inner.list_folders(prefix); }
  std::optional<hubcache::storage::RepoFile> stat(std::string_view path) override { return m_inner.stat(path); }
  std::string read_file(std::string_view path) override { return m_inner.read_file(path); }
  void download_file(std::string_view path, const std::filesystem::path& destination,
                     const hubcache::util::ProgressCallback& progress = {}, bool flush = true) override
  {
    m_inner.download_file(path, destination, progress, flush);
  }
  void check_writable() override { m_inner.check_writable(); }
  hubcache::storage::CommitResult commit(const hubcache::storage::CommitRequest& request,
                                         const hubcache::util::ProgressCallback& progress = {}) override
  {
    return m_inner.commit(request, progress);
  }

protected:
  hubcache::storage::Repository& inner() { return m_inner; }

private:
  hubcache::storage::Repository& m_inner;
};

} // namespace test_support
