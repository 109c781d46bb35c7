#include "test_support.hpp"

#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/process.hpp>

#include <doctest/doctest.h>

#include <csignal>
#include <thread>

#include <unistd.h>

using namespace hubcache;
using namespace hubcache::util;

namespace util_process_test {

namespace {

ProcessSpec shell(std::string script)
{
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", std::move(script)};
  return spec;
}

struct Captured {
  std::vector<std::string> out;
  std::vector<std::string> err;
};

ProcessSpec capturing(ProcessSpec spec, Captured& captured)
{
  spec.on_line = [&captured](ProcessStream stream, std::string_view line) {
    (stream == ProcessStream::out ? captured.out : captured.err).emplace_back(line);
  };
  return spec;
}

// Running, as opposed to gone or a zombie waiting for init to reap it.
bool process_alive(pid_t pid)
{
  if (::kill(pid, 0) != 0) {
    return false;
  }
  std::string text;
  try {
    text = util::read_file_if_exists("/proc/" + std::to_string(pid) + "/stat").value_or("");
  } catch (const Error&) {
  }
  auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] != 'Z';
}

} // namespace

TEST_CASE("process: exit codes and success")
{
  CHECK(run_process(shell("exit 0")).succeeded());
  auto failed = run_process(shell("exit 3"));
  CHECK_FALSE(failed.succeeded());
  REQUIRE(failed.exit_code);
  CHECK(*failed.exit_code == 3);
  CHECK(failed.describe() == "exited with status 3");

  auto killed = run_process(shell("kill -KILL $$"));
  CHECK_FALSE(killed.exit_code);
  REQUIRE(killed.term_signal);
  CHECK(*killed.term_signal == SIGKILL);
  CHECK(killed.describe().starts_with("was killed by signal 9"));
}

TEST_CASE("process: output is delivered line by line, per stream, with a tail")
{
  Captured captured;
  auto spec = capturing(shell("echo one; echo two >&2; printf 'three'"), captured);
  spec.tail_lines = 2;
  auto result = run_process(spec);
  CHECK(result.succeeded());
  CHECK(captured.out == std::vector<std::string>{"one", "three"});
  CHECK(captured.err == std::vector<std::string>{"two"});
  CHECK(result.tail.size() == 2);
}

TEST_CASE("process: environment overrides, removals and a base environment")
{
  Captured captured;
  auto spec = capturing(shell("echo \"A=${A-unset} B=${B-unset} C=${C-unset}\""), captured);
  spec.base_environment = std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}, {"B", "base"}, {"C", "gone"}};
  spec.environment_overrides = {{"A", std::string("set")}, {"C", std::nullopt}};
  REQUIRE(run_process(spec).succeeded());
  REQUIRE(captured.out.size() == 1);
  CHECK(captured.out[0] == "A=set B=base C=unset");
}

TEST_CASE("process: working directory and stdin from /dev/null")
{
  test_support::TempDir dir;
  Captured captured;
  auto spec = capturing(shell("pwd; cat; echo done"), captured);
  spec.working_directory = dir.path();
  REQUIRE(run_process(spec).succeeded());
  REQUIRE(captured.out.size() == 2);
  CHECK(std::filesystem::equivalent(captured.out[0], dir.path()));
  CHECK(captured.out[1] == "done");
}

TEST_CASE("process: a program that cannot run is an IoError, not an exit status")
{
  ProcessSpec missing;
  missing.argv = {"neuron-cache-no-such-program-xyz"};
  CHECK_THROWS_AS(run_process(missing), IoError);
  ProcessSpec not_executable;
  test_support::TempDir dir;
  util::write_file_atomically(dir / "script", "#!/bin/sh\n");
  not_executable.argv = {(dir / "script").string()};
  CHECK_THROWS_AS(run_process(not_executable), IoError);
  ProcessSpec empty;
  CHECK_THROWS_AS(run_process(empty), InvalidArgument);
}

TEST_CASE("process: a timeout is described by its limit, as durations are everywhere")
{
  ProcessResult result;
  result.timed_out = true;
  result.time_limit = std::chrono::hours(2);
  result.elapsed = std::chrono::milliseconds(7'203'456);
  CHECK(result.describe() == "timed out after 2h 00m and was terminated");
  result.time_limit = std::chrono::seconds(90);
  CHECK(result.describe() == "timed out after 1m 30s and was terminated");
}

TEST_CASE("process: a timeout terminates the whole process group")
{
  test_support::TempDir dir;
  auto pid_file = dir / "grandchild.pid";
  // The grandchild ignores nothing, but runs in the background: only a group kill reaches it.
  auto spec = shell("sleep 30 & echo $! > '" + pid_file.string() + "'; wait");
  spec.timeout = std::chrono::milliseconds(300);
  spec.termination_grace = std::chrono::milliseconds(500);
  auto result = run_process(spec);
  CHECK(result.timed_out);
  CHECK(result.describe() == "timed out after 0.30s and was terminated");
  CHECK_FALSE(result.succeeded());
  auto grandchild = static_cast<pid_t>(std::stol(util::read_file(pid_file)));
  CHECK_FALSE(process_alive(grandchild));
}

// The manifest and --timeout take any number of seconds: the longest timeout is no limit,
// not an overflow that times the command out at once (UBSan: signed overflow in chrono).
TEST_CASE("process: the longest timeout does not overflow into an immediate one")
{
  auto spec = shell("sleep 0.2; exit 3");
  spec.timeout = std::chrono::milliseconds::max();
  auto result = run_process(spec);
  CHECK_FALSE(result.timed_out);
  CHECK(result.exit_code == 3);
}

TEST_CASE("process: a child that ignores SIGTERM is killed after the grace period")
{
  auto spec = shell("trap '' TERM; while :; do sleep 0.05; done");
  spec.timeout = std::chrono::milliseconds(200);
  spec.termination_grace = std::chrono::milliseconds(300);
  auto started = std::chrono::steady_clock::now();
  auto result = run_process(spec);
  CHECK(result.timed_out);
  REQUIRE(result.term_signal);
  CHECK(*result.term_signal == SIGKILL);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
}

TEST_CASE("process: an interrupt request terminates running children group-wide")
{
  reset_interrupt();
  InterruptScope scope;
  test_support::TempDir dir;
  auto pid_file = dir / "grandchild.pid";
  auto spec = shell("sleep 30 & echo $! > '" + pid_file.string() + "'; wait");
  spec.termination_grace = std::chrono::milliseconds(500);
  std::thread interrupter([&] {
    for (int i = 0; i < 200 && !std::filesystem::exists(pid_file); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // A real signal to ourselves, as a Ctrl-C would deliver it.
    ::kill(::getpid(), SIGINT);
  });
  auto result = run_process(spec);
  interrupter.join();
  CHECK(interrupt_signal() == SIGINT);
  REQUIRE(result.interrupted_by);
  CHECK(*result.interrupted_by == SIGINT);
  CHECK(result.describe() == "was terminated because this program received SIGINT");
  auto grandchild = static_cast<pid_t>(std::stol(util::read_file(pid_file)));
  CHECK_FALSE(process_alive(grandchild));
  reset_interrupt();
}

TEST_CASE("process: leftovers of a finished leader are terminated")
{
  test_support::TempDir dir;
  auto pid_file = dir / "straggler.pid";
  auto spec = shell("sleep 30 & echo $! > '" + pid_file.string() + "'; exit 0");
  spec.termination_grace = std::chrono::milliseconds(500);
  auto result = run_process(spec);
  CHECK(result.succeeded());
  auto straggler = static_cast<pid_t>(std::stol(util::read_file(pid_file)));
  CHECK_FALSE(process_alive(straggler));
}

TEST_CASE("process: several processes can run at once from different threads")
{
  std::vector<std::thread> threads;
  std::vector<int> codes(4, -1);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([i, &codes] {
      auto result = run_process(shell("sleep 0.1; exit " + std::to_string(i)));
      codes[static_cast<std::size_t>(i)] = result.exit_code.value_or(-1);
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(codes == std::vector<int>{0, 1, 2, 3});
}

} // namespace util_process_test
