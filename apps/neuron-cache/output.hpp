#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace neuron_cache {

enum class Format { human, json, quiet };

// The one place commands write through. Data goes to stdout, diagnostics to stderr;
// each mode decides what of a result it shows, so commands never branch on the mode.
class Output {
public:
  explicit Output(Format format);

  Format format() const { return m_format; }
  bool is_human() const { return m_format == Format::human; }
  bool stderr_is_tty() const { return m_stderr_tty; }

  // Diagnostics (stderr). `info` is shown in human mode only; warnings always.
  void info(const std::string& message) const;
  void warning(const std::string& message) const;

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

private:
  Format m_format;
  bool m_stderr_tty;
};

// Renders `rows` with `headers` as padded columns.
std::string format_table(const Output::Table& table);
std::string human_size(std::uint64_t bytes);

// A progress bar on stderr, drawn only when stderr is a terminal and output is human.
class ProgressBar {
public:
  ProgressBar(const Output& output, std::string label);
  ~ProgressBar();
  void update(std::uint64_t done, std::uint64_t total);
  void finish();

private:
  bool m_enabled;
  std::string m_label;
  int m_last_percent = -1;
};

} // namespace neuron_cache
