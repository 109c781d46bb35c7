#include "commit_batcher.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

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
    hs::CommitPace{std::chrono::milliseconds(300), 1});
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

TEST_CASE("a small job commits at once: the burst goes unpaced, the next commit waits for its credit")
{
  using Clock = std::chrono::steady_clock;
  std::mutex mutex;
  std::vector<Clock::time_point> starts;
  const auto begun = Clock::now();
  // A burst of 3, then one a second: the fourth may start only once a second has passed.
  CommitBatcher batcher(
    [&](const hs::CommitRequest& request) {
      std::lock_guard lock(mutex);
      starts.push_back(Clock::now());
      return hs::CommitResult{"rev", true, request.additions.size(), 0, {}, 1};
    },
    hs::CommitPace{std::chrono::milliseconds(1000), 3});
  std::vector<std::thread> jobs;
  for (int i = 0; i < 4; ++i) {
    jobs.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100 * i));
      hs::CommitRequest request;
      request.message = "Add configuration " + std::to_string(i);
      request.additions.push_back({"reg/" + std::to_string(i) + ".json", hs::FileSource::from_bytes("{}")});
      batcher.commit(std::move(request));
    });
  }
  for (auto& job : jobs) {
    job.join();
  }
  REQUIRE(starts.size() == 4);
  auto after = [&](std::size_t i) { return std::chrono::duration_cast<std::chrono::milliseconds>(starts[i] - begun); };
  // The three of the burst went as they came (the third came at 200 ms), not a pace apart.
  CHECK(after(2) < std::chrono::milliseconds(900));
  // The fourth waited for the credit the burst spent.
  CHECK(after(3) >= std::chrono::milliseconds(990));
}

TEST_CASE("a failed group commit fails every registration it carried")
{
  CommitBatcher batcher([](const hs::CommitRequest&) -> hs::CommitResult { throw std::runtime_error("refused"); },
                        hs::CommitPace{});
  hs::CommitRequest request;
  request.additions.push_back({"a", hs::FileSource::from_bytes("a")});
  CHECK_THROWS_WITH(batcher.commit(std::move(request)), "refused");
}
