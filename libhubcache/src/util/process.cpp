#include "hubcache/util/process.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fs.hpp"
#include "hubcache/util/text.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <utility>

#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ; // NOLINT: POSIX

namespace hubcache::util {

namespace {

namespace stdfs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::atomic<int> g_interrupt_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void record_interrupt(int signal)
{
  int expected = 0;
  g_interrupt_signal.compare_exchange_strong(expected, signal);
}

constexpr int k_interrupt_signals[] = {SIGINT, SIGTERM, SIGHUP};
std::mutex g_scope_mutex;
int g_scope_depth = 0;
struct sigaction g_previous_actions[3];

std::pair<Fd, Fd> make_pipe()
{
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw IoError(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  return {Fd(fds[0]), Fd(fds[1])};
}

std::map<std::string, std::string> current_environment()
{
  std::map<std::string, std::string> values;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    auto equals = text.find('=');
    if (equals != std::string_view::npos) {
      values.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
    }
  }
  return values;
}

bool is_executable_file(const stdfs::path& path)
{
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// PATH search done before fork, with the child's PATH, so "not found" is a clear error.
stdfs::path find_program(const std::string& name, const std::map<std::string, std::string>& environment)
{
  if (name.find('/') != std::string::npos) {
    if (!is_executable_file(name)) {
      throw IoError("cannot run '" + name + "': " + (stdfs::exists(name) ? "not an executable file" : "no such file"),
                    "check the command's path");
    }
    return name;
  }
  auto path_entry = environment.find("PATH");
  std::string search = path_entry != environment.end() ? path_entry->second : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= search.size()) {
    auto end = search.find(':', start);
    if (end == std::string::npos) {
      end = search.size();
    }
    stdfs::path directory = search.substr(start, end - start);
    if (directory.empty()) {
      directory = ".";
    }
    if (is_executable_file(directory / name)) {
      return directory / name;
    }
    start = end + 1;
  }
  throw IoError("cannot run '" + name + "': command not found in PATH", "install it or give its full path");
}

std::string read_proc_file(const stdfs::path& path)
{
  std::string text;
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd) {
    try {
      read_chunks(
        fd, path, [&](const char* data, std::size_t size) { text.append(data, size); }, 4096);
    } catch (const IoError&) {
      // The process went away while we read: what we have is all there is.
    }
  }
  return text;
}

// Process state from /proc/<pid>/stat: the field after the parenthesized command name.
char process_state(const std::string& stat_text, pid_t* group)
{
  auto close = stat_text.rfind(')');
  if (close == std::string::npos || close + 2 >= stat_text.size()) {
    return '?';
  }
  char state = stat_text[close + 2];
  if (group != nullptr) {
    long parent = 0;
    long process_group = 0;
    if (std::sscanf(stat_text.c_str() + close + 3, " %ld %ld", &parent, &process_group) == 2) {
      *group = static_cast<pid_t>(process_group);
    }
  }
  return state;
}

// True while a process of the group is still running. Zombies do not count: once our
// direct child is reaped, its orphans are reaped by init, which may take its time (or,
// in some containers, never happen).
bool group_alive(pid_t group)
{
  if (::kill(-group, 0) != 0) {
    return false;
  }
  std::error_code ec;
  for (const auto& item : stdfs::directory_iterator("/proc", ec)) {
    const auto name = item.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::string text = read_proc_file(item.path() / "stat");
    pid_t process_group = 0;
    char state = process_state(text, &process_group);
    if (process_group == group && state != 'Z' && state != 'X' && state != '?') {
      return true;
    }
  }
  // No procfs (or nothing readable in it): trust kill(2).
  return static_cast<bool>(ec);
}

// Splits piped output into lines and keeps the tail.
class LineCollector {
public:
  static constexpr std::size_t k_max_line = std::size_t{1} << 20;

  LineCollector(const ProcessSpec& spec, ProcessStream stream, std::deque<std::string>& tail)
    : m_spec(spec), m_stream(stream), m_tail(tail)
  {}
  void feed(std::string_view data)
  {
    m_buffer.append(data);
    std::size_t start = 0;
    for (auto newline = m_buffer.find('\n'); newline != std::string::npos; newline = m_buffer.find('\n', start)) {
      emit(std::string_view(m_buffer).substr(start, newline - start));
      start = newline + 1;
    }
    m_buffer.erase(0, start);
    // A child that writes without newlines cannot make us hold all of it: long lines
    // come in pieces.
    if (m_buffer.size() >= k_max_line) {
      emit(m_buffer);
      m_buffer.clear();
    }
  }
  void flush()
  {
    if (!m_buffer.empty()) {
      emit(m_buffer);
      m_buffer.clear();
    }
  }

private:
  void emit(std::string_view line)
  {
    if (m_spec.on_line) {
      m_spec.on_line(m_stream, line);
    }
    if (m_spec.tail_lines > 0) {
      m_tail.emplace_back(line);
      while (m_tail.size() > m_spec.tail_lines) {
        m_tail.pop_front();
      }
    }
  }

  const ProcessSpec& m_spec;
  ProcessStream m_stream;
  std::deque<std::string>& m_tail;
  std::string m_buffer;
};

} // namespace

std::string ProcessResult::describe() const
{
  if (interrupted_by) {
    const char* name = sigabbrev_np(*interrupted_by);
    return "was terminated because this program received "
           + (name != nullptr ? "SIG" + std::string(name) : "signal " + std::to_string(*interrupted_by));
  }
  if (timed_out) {
    return "timed out after " + human_duration(static_cast<double>(time_limit.count()) / 1000.0)
           + " and was terminated";
  }
  if (term_signal) {
    const char* name = strsignal(*term_signal);
    return "was killed by signal " + std::to_string(*term_signal)
           + (name != nullptr ? std::string(" (") + name + ")" : "");
  }
  if (exit_code) {
    return "exited with status " + std::to_string(*exit_code);
  }
  return "ended in an unknown state";
}

namespace {

// Everything exec needs, built before fork: after it only async-signal-safe calls are
// allowed (other threads may hold malloc's lock). Not movable: argv and envp point into
// the strings.
class ExecImage {
public:
  explicit ExecImage(const ProcessSpec& spec)
  {
    auto environment = spec.base_environment ? *spec.base_environment : current_environment();
    for (const auto& [name, value] : spec.environment_overrides) {
      if (value) {
        environment[name] = *value;
      } else {
        environment.erase(name);
      }
    }
    m_program = find_program(spec.argv.front(), environment).string();
    m_env_strings.reserve(environment.size());
    for (const auto& [name, value] : environment) {
      m_env_strings.push_back(name + "=" + value);
    }
    m_argv_strings = spec.argv;
    m_envp = pointers_to(m_env_strings);
    m_argv = pointers_to(m_argv_strings);
    if (spec.working_directory) {
      m_working_directory = spec.working_directory->string();
    }
  }
  ExecImage(const ExecImage&) = delete;
  ExecImage& operator=(const ExecImage&) = delete;

  const std::string& working_directory() const { return m_working_directory; }

  // The child's side of fork: its own process group, default signal handling, the given
  // standard streams, then exec. An exec (or chdir) error goes back through status_fd.
  [[noreturn]] void exec_in_child(pid_t parent, int stdin_fd, int stdout_fd, int stderr_fd, int status_fd) const
  {
    ::setpgid(0, 0);
    // A SIGTERM when our parent dies, so a killed neuron-cache leaves no compiler behind.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) {
      ::_exit(127);
    }
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) {
      ::sigaction(signal, &default_action, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(stdin_fd, 0);
    redirect(stdout_fd, 1);
    redirect(stderr_fd, 2);
    if (m_working_directory.empty() || ::chdir(m_working_directory.c_str()) == 0) {
      ::execve(m_program.c_str(), m_argv.data(), m_envp.data());
    }
    int error = errno;
    [[maybe_unused]] auto written = ::write(status_fd, &error, sizeof error);
    ::_exit(127);
  }

private:
  static std::vector<char*> pointers_to(std::vector<std::string>& strings)
  {
    std::vector<char*> pointers;
    pointers.reserve(strings.size() + 1);
    for (auto& text : strings) {
      pointers.push_back(text.data());
    }
    pointers.push_back(nullptr);
    return pointers;
  }
  // dup2 onto the same fd keeps FD_CLOEXEC set; clear the flag in that case.
  static void redirect(int from, int to)
  {
    if (from == to) {
      int flags = ::fcntl(to, F_GETFD);
      if (flags >= 0) {
        ::fcntl(to, F_SETFD, flags & ~FD_CLOEXEC);
      }
    } else {
      ::dup2(from, to);
    }
  }

  std::string m_program;
  std::vector<std::string> m_argv_strings;
  std::vector<std::string> m_env_strings;
  std::vector<char*> m_argv;
  std::vector<char*> m_envp;
  std::string m_working_directory;
};

// Waits for the child's exec verdict: the status pipe closes on a successful exec and
// carries errno when exec (or chdir) failed, which becomes a clear error here.
void throw_if_exec_failed(pid_t pid, const Fd& status_read, const ProcessSpec& spec, const ExecImage& image)
{
  int exec_error = 0;
  ssize_t got = 0;
  do {
    got = ::read(status_read.get(), &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(sizeof exec_error)) {
    return;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const auto& directory = image.working_directory();
  if (!directory.empty() && exec_error != 0 && ::access(directory.c_str(), F_OK) != 0) {
    throw IoError("cannot run '" + spec.argv.front() + "' in " + directory + ": " + std::strerror(exec_error));
  }
  throw IoError("cannot run '" + spec.argv.front() + "': " + std::strerror(exec_error));
}

// The parent's ends of the child's stdout and stderr pipes (piped mode), read as lines.
class ChildOutput {
public:
  ChildOutput(const ProcessSpec& spec, Fd out_read, Fd err_read)
    : m_out_read(std::move(out_read)), m_err_read(std::move(err_read)), m_out_lines(spec, ProcessStream::out, m_tail),
      m_err_lines(spec, ProcessStream::err, m_tail)
  {}

  bool open() const { return m_out_read || m_err_read; }

  // Reads what is available within timeout_ms (just waits when nothing is piped).
  void read_available(int timeout_ms)
  {
    pollfd fds[2];
    nfds_t count = 0;
    if (m_out_read) {
      fds[count++] = {m_out_read.get(), POLLIN, 0};
    }
    if (m_err_read) {
      fds[count++] = {m_err_read.get(), POLLIN, 0};
    }
    if (count == 0) {
      if (timeout_ms > 0) {
        ::poll(nullptr, 0, timeout_ms);
      }
      return;
    }
    if (::poll(fds, count, timeout_ms) <= 0) {
      return;
    }
    for (nfds_t i = 0; i < count; ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        read_one(fds[i].fd);
      }
    }
  }

  std::vector<std::string> finish()
  {
    m_out_lines.flush();
    m_err_lines.flush();
    return {m_tail.begin(), m_tail.end()};
  }

private:
  void read_one(int fd)
  {
    char buffer[8192];
    auto size = ::read(fd, buffer, sizeof buffer);
    bool is_out = m_out_read && fd == m_out_read.get();
    if (size > 0) {
      (is_out ? m_out_lines : m_err_lines).feed(std::string_view(buffer, static_cast<std::size_t>(size)));
    } else if (size == 0 || (errno != EINTR && errno != EAGAIN)) {
      (is_out ? m_out_read : m_err_read).reset();
    }
  }

  Fd m_out_read;
  Fd m_err_read;
  std::deque<std::string> m_tail;
  LineCollector m_out_lines;
  LineCollector m_err_lines;
};

// Runs until the group's leader exits: forwards our interrupt, enforces the timeout
// (SIGTERM, then SIGKILL after the grace). Returns the leader's wait status.
int supervise(pid_t pid, const ProcessSpec& spec, Clock::time_point started, ChildOutput& output, ProcessResult& result)
{
  std::optional<Clock::time_point> kill_at; // SIGKILL deadline once we have sent SIGTERM
  auto terminate_group = [&](int signal) {
    if (!kill_at) {
      ::kill(-pid, signal);
      kill_at = Clock::now() + spec.termination_grace;
    }
  };
  int status = 0;
  while (true) {
    output.read_available(50);
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      return status;
    }
    if (int signal = interrupt_signal(); signal != 0 && !result.interrupted_by) {
      result.interrupted_by = signal;
      // Forward what we got (torchrun turns SIGINT into a clean shutdown of its workers).
      terminate_group(signal == SIGHUP ? SIGTERM : signal);
    }
    // Compared in milliseconds: a huge timeout in nanoseconds would overflow.
    if (spec.timeout && !result.timed_out
        && std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started) >= *spec.timeout) {
      result.timed_out = true;
      result.time_limit = *spec.timeout;
      terminate_group(SIGTERM);
    }
    if (kill_at && Clock::now() >= *kill_at) {
      ::kill(-pid, SIGKILL);
      kill_at = Clock::now() + std::chrono::hours(24);
    }
  }
}

// The leader is gone; whatever it left running in its group goes too, so no compiler
// keeps writing into the cache after we have scanned it.
void end_group(pid_t group, std::chrono::milliseconds grace, ChildOutput& output)
{
  if (group_alive(group)) {
    ::kill(-group, SIGTERM);
    auto deadline = Clock::now() + grace;
    while (group_alive(group) && Clock::now() < deadline) {
      output.read_available(20);
    }
    if (group_alive(group)) {
      ::kill(-group, SIGKILL);
      auto last_wait = Clock::now() + std::chrono::milliseconds(500);
      while (group_alive(group) && Clock::now() < last_wait) {
        output.read_available(20);
      }
    }
  }
  // Drain what is left; a pipe held open by an unkillable straggler does not block us.
  auto drain_until = Clock::now() + std::chrono::milliseconds(200);
  while (output.open() && Clock::now() < drain_until) {
    output.read_available(20);
  }
}

} // namespace

ProcessResult run_process(const ProcessSpec& spec)
{
  if (spec.argv.empty() || spec.argv.front().empty()) {
    throw InvalidArgument("no command to run");
  }
  const ExecImage image(spec);
  const bool piped = static_cast<bool>(spec.on_line);
  Fd out_read, out_write, err_read, err_write;
  if (piped) {
    std::tie(out_read, out_write) = make_pipe();
    std::tie(err_read, err_write) = make_pipe();
  }
  auto [status_read, status_write] = make_pipe();
  Fd dev_null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!dev_null) {
    throw IoError(std::string("cannot open /dev/null: ") + std::strerror(errno));
  }
  const int child_stdout = piped ? out_write.get() : spec.stdout_fd;
  const int child_stderr = piped ? err_write.get() : spec.stderr_fd;
  const pid_t parent_pid = ::getpid();

  const auto started = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw IoError(std::string("cannot start '") + spec.argv.front() + "': " + std::strerror(errno));
  }
  if (pid == 0) {
    image.exec_in_child(parent_pid, dev_null.get(), child_stdout, child_stderr, status_write.get());
  }
  // Both sides set the group, so signalling it works whichever runs first.
  ::setpgid(pid, pid);
  status_write.reset();
  out_write.reset();
  err_write.reset();
  throw_if_exec_failed(pid, status_read, spec, image);

  ProcessResult result;
  ChildOutput output(spec, std::move(out_read), std::move(err_read));
  const int status = supervise(pid, spec, started, output, result);
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  end_group(pid, spec.termination_grace, output);
  result.tail = output.finish();
  return result;
}

InterruptScope::InterruptScope()
{
  std::lock_guard lock(g_scope_mutex);
  if (g_scope_depth++ == 0) {
    struct sigaction action {};
    action.sa_handler = record_interrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0; // no SA_RESTART: blocking calls return early with EINTR
    for (std::size_t i = 0; i < std::size(k_interrupt_signals); ++i) {
      ::sigaction(k_interrupt_signals[i], &action, &g_previous_actions[i]);
    }
  }
}

InterruptScope::~InterruptScope()
{
  std::lock_guard lock(g_scope_mutex);
  if (--g_scope_depth == 0) {
    for (std::size_t i = 0; i < std::size(k_interrupt_signals); ++i) {
      ::sigaction(k_interrupt_signals[i], &g_previous_actions[i], nullptr);
    }
  }
}

int interrupt_signal() noexcept
{
  return g_interrupt_signal.load();
}

void request_interrupt(int signal) noexcept
{
  record_interrupt(signal);
}

void reset_interrupt() noexcept
{
  g_interrupt_signal.store(0);
}

void release_free_memory() noexcept
{
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
}

} // namespace hubcache::util
