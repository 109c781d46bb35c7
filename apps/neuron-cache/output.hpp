#pragma once

#include "terminal.hpp"

#include <hubcache/util/text.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace neuron_cache {

enum class Format { human, json, quiet };

// The one place commands write through. Data goes to stdout, diagnostics to stderr;
// each mode decides what of a result it shows, so commands never branch on the mode.
class Output {
public:
  // Writes to the process's stdout and stderr, drawing as the process's terminal allows.
  explicit Output(Format format, bool verbose = false);
  Output(Format format, bool verbose, const Terminal& terminal);
  // Writes to the given streams (tests), drawing as `terminal` says.
  Output(Format format, bool verbose, std::ostream& out, std::ostream& err, const Terminal& terminal = {});

  Format format() const { return m_format; }
  bool is_human() const { return m_format == Format::human; }
  bool is_json() const { return m_format == Format::json; }
  bool verbose() const { return m_verbose; }
  bool stderr_is_tty() const { return m_terminal.stderr_tty; }
  const Terminal& terminal() const { return m_terminal; }

  // How a long transfer shows its progress on stderr: a bar redrawn in place (human
  // output on a terminal that can redraw), a line now and then (a CI log, a dumb
  // terminal; in json mode only with --verbose), or nothing (quiet, json, or progress
  // disabled).
  enum class ProgressStyle { none, bar, lines };
  ProgressStyle progress_style() const;
  void disable_progress() { m_progress_disabled = true; }
  // Progress on stderr: `redraw` replaces the line drawn last ("\r", erase to the end);
  // otherwise a line of its own. An empty redrawn line erases the bar.
  void progress(const std::string& line, bool redraw) const;

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
  // A line on stderr in every mode, as it is (an interrupted run's account).
  void notice(const std::string& message) const;
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
    std::string empty_text; // what a table without rows says; empty: "No results found."
  };
  // Human tables fit the width of stdout (80 columns when piped): the widest columns
  // are cut in their middle.
  void table(const Table& table, const nlohmann::json& data, std::size_t quiet_column) const;

  // Raw data line on stdout regardless of mode (completion scripts, man page).
  void raw(const std::string& text) const;

  // The JSON document for `data`: an object gains "schema_version".
  static nlohmann::json document(const nlohmann::json& data);

private:
  // "neuron-cache: warning: " with the word in colour when the terminal takes colours.
  std::string prefix(const char* word, const char* colour) const;

  Format m_format;
  bool m_verbose;
  std::ostream& m_out;
  std::ostream& m_err;
  Terminal m_terminal;
  bool m_progress_disabled = false;
};

// The version of the JSON documents commands print; bumped when a field changes meaning
// or goes away (docs/schemas/ describes each).
inline constexpr int k_json_schema_version = 1;

// Renders `rows` with `headers` as padded columns, at most `width` columns wide (0: no
// limit): the widest columns are cut in their middle, down to a few characters each.
std::string format_table(const Output::Table& table, std::size_t width = 0);
std::string human_size(std::uint64_t bytes);
// "0.42s", "12s", "3m 05s", "1h 02m": the libraries' messages use the same one.
using hubcache::util::human_duration;
// "1 entry", "2 entries": `plural_form` when count != 1 (default: singular + "s").
std::string count_of(std::uint64_t count, const std::string& singular, const std::string& plural_form = {});

// A field that may be absent: "-" in a table, null in JSON.
std::string optional_text(const std::optional<long long>& value);
nlohmann::json optional_json(const std::optional<long long>& value);
nlohmann::json optional_json(const std::optional<std::string>& value);

} // namespace neuron_cache
