#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hubcache::util {

// Which of a child's output streams a line came from.
enum class ProcessStream { out, err };

// What to run and how. The child gets its own process group, so that it and everything
// it starts (torchrun workers, neuronx-cc...) can be signalled and terminated together.
struct ProcessSpec {
  std::vector<std::string> argv; // argv[0] is looked up in PATH
  // The child's environment: the parent's (or `base_environment` when set), then these
  // overrides; a nullopt value removes the variable.
  std::optional<std::map<std::string, std::string>> base_environment;
  std::map<std::string, std::optional<std::string>> environment_overrides;
  std::optional<std::filesystem::path> working_directory;
  // Without a line callback the child's stdout and stderr go straight to these fds of
  // ours (by default both to our stderr: a child's chatter is diagnostics, never data).
  int stdout_fd = 2;
  int stderr_fd = 2;
  // With one, both streams are piped and delivered line by line (lets callers prefix
  // lines of concurrent jobs; a line past 1 MiB comes in pieces); called from the thread
  // that runs the process.
  std::function<void(ProcessStream, std::string_view line)> on_line;
  // How many of the last lines to keep in the result (piped mode only).
  std::size_t tail_lines = 40;
  std::optional<std::chrono::milliseconds> timeout;
  // Between SIGTERM to the group and SIGKILL, when we terminate it.
  std::chrono::milliseconds termination_grace{3000};
};

struct ProcessResult {
  // The exit status when the child exited; nullopt when a signal killed it.
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  bool timed_out = false;
  std::chrono::milliseconds time_limit{0}; // the timeout that ended it, when timed_out
  // We terminated it because this process was asked to stop (SIGINT/SIGTERM/SIGHUP).
  std::optional<int> interrupted_by;
  std::vector<std::string> tail; // last lines of output (piped mode)
  std::chrono::milliseconds elapsed{0};

  bool succeeded() const { return exit_code && *exit_code == 0 && !timed_out && !interrupted_by; }
  // "exited with status 3", "was killed by signal 9 (Killed)", "timed out after 10s"...
  std::string describe() const;
};

// Runs a process to completion, streaming its output. Throws IoError when it cannot be
// started (no such program, not executable): exec errors are reported back through a
// close-on-exec pipe instead of surfacing as an exit status 127.
// While an InterruptScope is active, an interrupt request terminates the whole group
// (SIGTERM, then SIGKILL after the grace period) and is reported in the result. Safe to
// call from several threads at once.
ProcessResult run_process(const ProcessSpec& spec);

// Turns SIGINT, SIGTERM and SIGHUP into an interrupt request for as long as it lives,
// instead of killing this process outright: running children are then terminated
// group-wide and callers get to clean up. The previous handlers come back on
// destruction. Nestable; not meant for concurrent construction from several threads.
class InterruptScope {
public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

// The signal that requested an interrupt, or 0. Stays set until reset.
int interrupt_signal() noexcept;
// Requests an interrupt as if `signal` had arrived (tests, fatal errors in a worker).
void request_interrupt(int signal) noexcept;
void reset_interrupt() noexcept;

// Hands memory freed by this process back to the system. Called after a big structure
// built on worker threads is dropped (a scan of the whole cache): glibc keeps what a
// thread freed in that thread's arena, where the main thread's later allocations never
// reuse it, so it would count in the peak RSS for the rest of the run.
void release_free_memory() noexcept;

} // namespace hubcache::util
