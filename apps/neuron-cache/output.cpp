#include "output.hpp"

#include <hubcache/util/text.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace neuron_cache {

namespace {

// Text from repos and servers reaches the terminal only through here: each line's
// control characters are escaped, the line breaks the command meant are kept.
std::string printable_lines(const std::string& text)
{
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) {
      out += hubcache::util::escape_control(std::string_view(text).substr(start));
      break;
    }
    out += hubcache::util::escape_control(std::string_view(text).substr(start, end - start));
    out += '\n';
    start = end + 1;
  }
  return out;
}

// JSON stays exact JSON: control characters come out as \u escapes, and bytes that are
// not UTF-8 as U+FFFD instead of aborting the dump.
std::string json_text(const nlohmann::json& data)
{
  return data.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace

Output::Output(Format format, bool verbose)
  : Output(format, verbose, Terminal::detect(hubcache::util::Environment::process()))
{}

Output::Output(Format format, bool verbose, const Terminal& terminal)
  : Output(format, verbose, std::cout, std::cerr, terminal)
{}

Output::Output(Format format, bool verbose, std::ostream& out, std::ostream& err, const Terminal& terminal)
  : m_format(format), m_verbose(verbose), m_out(out), m_err(err), m_terminal(terminal)
{}

Output::ProgressStyle Output::progress_style() const
{
  if (m_progress_disabled || m_format == Format::quiet || (m_format == Format::json && !m_verbose)) {
    return ProgressStyle::none;
  }
  if (m_format == Format::human && m_terminal.stderr_tty && !m_terminal.dumb) {
    return ProgressStyle::bar;
  }
  return ProgressStyle::lines;
}

void Output::progress(const std::string& line, bool redraw) const
{
  if (redraw) {
    m_err << '\r' << line << "\033[K";
  } else {
    m_err << line << '\n';
  }
  m_err.flush();
}

std::string Output::prefix(const char* word, const char* colour) const
{
  if (!m_terminal.colour) {
    return std::string("neuron-cache: ") + word + ": ";
  }
  return std::string("neuron-cache: \033[") + colour + "m" + word + ":\033[0m ";
}

nlohmann::json Output::document(const nlohmann::json& data)
{
  if (!data.is_object()) {
    return data;
  }
  nlohmann::json document = {{"schema_version", k_json_schema_version}};
  for (const auto& [key, value] : data.items()) {
    if (key != "schema_version") {
      document[key] = value;
    }
  }
  return document;
}

void Output::info(const std::string& message) const
{
  if (m_format == Format::human) {
    m_err << printable_lines(message) << '\n';
  }
}

void Output::detail(const std::string& message) const
{
  if (m_verbose) {
    m_err << printable_lines(message) << '\n';
  }
}

void Output::warning(const std::string& message) const
{
  m_err << prefix("warning", "1;33") << printable_lines(message) << '\n';
}

void Output::error_line(const std::string& message, const std::string& hint) const
{
  m_err << prefix("error", "1;31") << printable_lines(message) << (hint.empty() ? "" : "; " + printable_lines(hint))
        << '\n';
}

void Output::error(const std::string& message, const std::string& hint, int exit_code) const
{
  error_line(message, hint);
  if (m_format == Format::json) {
    m_out << document({{"error", message},
                       {"hint", hint.empty() ? nlohmann::json() : nlohmann::json(hint)},
                       {"exit_code", exit_code}})
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
          << '\n';
    m_out.flush();
  }
}

void Output::notice(const std::string& message) const
{
  m_err << printable_lines(message) << '\n';
}

void Output::passthrough(const std::string& line) const
{
  m_err << line << '\n';
}

void Output::result(const std::string& human, const nlohmann::json& data, const std::string& quiet) const
{
  switch (m_format) {
  case Format::human:
    if (!human.empty()) {
      m_out << printable_lines(human) << (human.back() == '\n' ? "" : "\n");
    }
    break;
  case Format::json: m_out << json_text(document(data)) << '\n'; break;
  case Format::quiet:
    if (!quiet.empty()) {
      m_out << printable_lines(quiet) << (quiet.back() == '\n' ? "" : "\n");
    }
    break;
  }
  m_out.flush();
}

namespace {

// Cells are cut to no fewer columns than this (or their header's width, when smaller).
constexpr std::size_t k_min_cell = 8;
constexpr std::size_t k_column_gap = 2;

// Narrows the widest columns one character at a time until the row fits `width`.
void fit_widths(std::vector<std::size_t>& widths, std::size_t width)
{
  std::size_t total = 0;
  for (auto column : widths) {
    total += column;
  }
  total += widths.empty() ? 0 : k_column_gap * (widths.size() - 1);
  while (total > width) {
    auto widest = std::max_element(widths.begin(), widths.end());
    if (widest == widths.end() || *widest <= k_min_cell) {
      return;
    }
    --*widest;
    --total;
  }
}

} // namespace

std::string format_table(const Output::Table& raw_table, std::size_t width)
{
  Output::Table table = raw_table;
  for (auto& row : table.rows) {
    for (auto& cell : row) {
      cell = hubcache::util::escape_control(cell);
    }
  }
  std::vector<std::size_t> widths(table.headers.size(), 0);
  for (std::size_t i = 0; i < table.headers.size(); ++i) {
    widths[i] = table.headers[i].size();
  }
  for (const auto& row : table.rows) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  if (width > 0) {
    fit_widths(widths, width);
  }
  std::ostringstream out;
  auto emit = [&](const std::vector<std::string>& cells, bool header) {
    std::string line;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      std::string cell = i < cells.size() ? cells[i] : "";
      cell = header ? fit_end(cell, widths[i]) : fit_middle(cell, widths[i]);
      bool right = i < table.right_aligned.size() && table.right_aligned[i];
      std::string padding(widths[i] - std::min(widths[i], cell.size()), ' ');
      line += right ? padding + cell : cell + (i + 1 < widths.size() ? padding : "");
      if (i + 1 < widths.size()) {
        line += std::string(k_column_gap, ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out << (width > 0 ? fit_end(line, width) : line) << '\n';
  };
  emit(table.headers, true);
  for (const auto& row : table.rows) {
    emit(row, false);
  }
  if (!table.footer.empty()) {
    out << '\n' << (width > 0 ? wrap_lines(table.footer, width) : table.footer) << '\n';
  }
  return out.str();
}

void Output::table(const Table& table, const nlohmann::json& data, std::size_t quiet_column) const
{
  switch (m_format) {
  case Format::human:
    if (table.rows.empty()) {
      m_out << (table.empty_text.empty() ? "No results found." : table.empty_text) << '\n';
      if (!table.footer.empty()) {
        m_out << '\n'
              << (m_terminal.table_width > 0 ? wrap_lines(table.footer, m_terminal.table_width) : table.footer) << '\n';
      }
    } else {
      m_out << format_table(table, m_terminal.table_width);
    }
    break;
  case Format::json: m_out << json_text(document(data)) << '\n'; break;
  case Format::quiet:
    for (const auto& row : table.rows) {
      if (quiet_column < row.size()) {
        m_out << hubcache::util::escape_control(row[quiet_column]) << '\n';
      }
    }
    break;
  }
  m_out.flush();
}

void Output::raw(const std::string& text) const
{
  m_out << text;
  m_out.flush();
}

std::string human_size(std::uint64_t bytes)
{
  static const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000.0 && unit < 4) {
    value /= 1000.0;
    ++unit;
  }
  char buffer[32];
  if (unit == 0) {
    std::snprintf(buffer, sizeof(buffer), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.1f %s", value, units[unit]);
  }
  return buffer;
}

std::string count_of(std::uint64_t count, const std::string& singular, const std::string& plural_form)
{
  return std::to_string(count) + " " + (count == 1 ? singular : plural_form.empty() ? singular + "s" : plural_form);
}

std::string optional_text(const std::optional<long long>& value)
{
  return value ? std::to_string(*value) : "-";
}

nlohmann::json optional_json(const std::optional<long long>& value)
{
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json optional_json(const std::optional<std::string>& value)
{
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

} // namespace neuron_cache
