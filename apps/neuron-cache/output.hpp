#pragma once

#include <hubcache/util/progress.hpp>
#include <hubcache/util/text.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace neuron_cache {

enum class Format { human, json, quiet };

// The one place commands write through. Data goes to stdout, diagnostics to stderr;
// each mode decides what of a result it shows, so commands never branch on the mode.
class Output {
public:
  // Writes to the process's stdout and stderr.
  explicit Output(Format format, bool verbose = false);
  // Writes to the given streams (tests); `stderr_tty` stands for isatty(stderr).
  Output(Format format, bool verbose, std::ostream& out, std::ostream& err, bool stderr_tty = false);

  Format format() const { return m_format; }
  bool is_human() const { return m_format == Format::human; }
  bool is_json() const { return m_format == Format::json; }
  bool verbose() const { return m_verbose; }
  bool stderr_is_tty() const { return m_stderr_tty; }
  // Progress bars are drawn in human mode on a terminal, unless disabled.
  bool shows_progress() const { return is_human() && m_stderr_tty && !m_progress_disabled; }
  void disable_progress() { m_progress_disabled = true; }

  // Diagnostics (stderr). `info` is shown in human mode only; `detail` only with
  // --verbose; warnings always, as "neuron-cache: warning: ...".
  void info(const std::string& message) const;
  void detail(const std::string& message) const;
  void warning(const std::string& message) const;
  // "neuron-cache: error: MESSAGE; HINT" on stderr and, in json mode, the error object
  // {"schema_version", "error", "hint", "exit_code"} on stdout.
  void error(const std::string& message, const std::string& hint, int exit_code) const;
  // The stderr line alone, for a command whose json document already carries the error.
  void error_line(const std::string& message, const std::string& hint) const;
  // A line of a child process's output, passed through to stderr in every mode.
  void passthrough(const std::string& line) const;

  // A command's result: `human` lines in human mode, `data` in json mode, `quiet`
  // (one value per line, for pipes) in quiet mode.
  void result(const std::string& human, const nlohmann::json& data, const std::string& quiet) const;

  // A table: padded columns in human mode, an array of objects in json, `quiet_column`
  // values in quiet mode. `rows` holds display strings; `data` the json objects.
  struct Table {
    std::vector<std::string> headers;
    std::vector<std::vector<std::string>> rows;
    std::vector<bool> right_aligned;
    std::string footer;
  };
  void table(const Table& table, const nlohmann::json& data, std::size_t quiet_column) const;

  // Raw data line on stdout regardless of mode (completion scripts, man page).
  void raw(const std::string& text) const;

  // The JSON document for `data`: an object gains "schema_version".
  static nlohmann::json document(const nlohmann::json& data);

private:
  Format m_format;
  bool m_verbose;
  std::ostream& m_out;
  std::ostream& m_err;
  bool m_stderr_tty;
  bool m_progress_disabled = false;
};

// The version of the JSON documents commands print; bumped when a field changes meaning
// or goes away (docs/schemas/ describes each).
inline constexpr int k_json_schema_version = 1;

// Renders `rows` with `headers` as padded columns.
std::string format_table(const Output::Table& table);
std::string human_size(std::uint64_t bytes);
// "0.42s", "12s", "3m 05s", "1h 02m": the libraries' messages use the same one.
using hubcache::util::human_duration;
// "1 entry", "2 entries": `plural_form` when count != 1 (default: singular + "s").
std::string count_of(std::uint64_t count, const std::string& singular, const std::string& plural_form = {});

// A progress bar on stderr for long transfers: bytes, files done/total, rate and ETA,
// redrawn by time (so the rate and ETA stay current even when bytes stall), drawn only
// when Output::shows_progress(). Updates may come from any thread.
class ProgressBar {
public:
  ProgressBar(const Output& output, std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(const hubcache::util::TransferProgress& progress);
  void update(std::uint64_t done, std::uint64_t total) { update({done, total, 0, 0}); }
  void finish();

  // The line drawn for `progress` at `bytes_per_second` (0: not known yet).
  static std::string render(const std::string& label, const hubcache::util::TransferProgress& progress,
                            double bytes_per_second);

private:
  void draw_locked();
  void tick();

  bool m_enabled;
  std::string m_label;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  bool m_drawn = false;
  bool m_started = false;
  hubcache::util::TransferProgress m_progress;
  // (time, bytes done) samples over the last few seconds: the rate is their slope.
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>> m_samples;
  std::thread m_ticker;
};

} // namespace neuron_cache
