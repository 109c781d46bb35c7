#include "commit_batcher.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

using namespace addjobs;
namespace hs = hubcache::storage;

TEST_CASE("registrations finishing close together share a commit, spaced as the quota wants")
{
  std::atomic<int> commits{0};
  std::atomic<std::size_t> files{0};
  CommitBatcher batcher(
    [&](const hs::CommitRequest& request) {
      ++commits;
      files += request.additions.size();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return hs::CommitResult{"rev" + std::to_string(commits.load()), true, request.additions.size(), 0, {}, 1};
    },
    std::chrono::milliseconds(300));
  std::vector<std::thread> jobs;
  std::vector<std::string> revisions(12);
  for (int i = 0; i < 12; ++i) {
    jobs.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(10 * i));
      hs::CommitRequest request;
      request.message = "Add configuration " + std::to_string(i);
      request.additions.push_back({"reg/" + std::to_string(i) + ".json", hs::FileSource::from_bytes("{}")});
      request.additions.push_back({"shared/MODULE_1/model.neff", hs::FileSource::from_bytes("x")});
      revisions[static_cast<std::size_t>(i)] = batcher.commit(std::move(request)).revision;
    });
  }
  for (auto& job : jobs) {
    job.join();
  }
  // The first goes at once; the eleven others finish within one spacing: one more commit.
  CHECK(commits.load() == 2);
  CHECK(batcher.commits_made() == 2);
  CHECK(files.load() == 12 + 2); // the shared entry once per commit
  CHECK(revisions[0] == "rev1");
  CHECK(revisions[11] == "rev2");
}

TEST_CASE("a failed group commit fails every registration it carried")
{
  CommitBatcher batcher([](const hs::CommitRequest&) -> hs::CommitResult { throw std::runtime_error("refused"); },
                        std::chrono::milliseconds(0));
  hs::CommitRequest request;
  request.additions.push_back({"a", hs::FileSource::from_bytes("a")});
  CHECK_THROWS_WITH(batcher.commit(std::move(request)), "refused");
}
