#include "output.hpp"

#include <hubcache/util/text.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <unistd.h>

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
  : Output(format, verbose, std::cout, std::cerr, ::isatty(STDERR_FILENO) != 0)
{}

Output::Output(Format format, bool verbose, std::ostream& out, std::ostream& err, bool stderr_tty)
  : m_format(format), m_verbose(verbose), m_out(out), m_err(err), m_stderr_tty(stderr_tty)
{}

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
  m_err << "neuron-cache: warning: " << printable_lines(message) << '\n';
}

void Output::error_line(const std::string& message, const std::string& hint) const
{
  m_err << "neuron-cache: error: " << printable_lines(message) << (hint.empty() ? "" : "; " + printable_lines(hint))
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

std::string format_table(const Output::Table& raw_table)
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
  std::ostringstream out;
  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      std::string cell = i < cells.size() ? cells[i] : "";
      bool right = i < table.right_aligned.size() && table.right_aligned[i];
      std::string padding(widths[i] - std::min(widths[i], cell.size()), ' ');
      line += right ? padding + cell : cell + (i + 1 < widths.size() ? padding : "");
      if (i + 1 < widths.size()) {
        line += "  ";
      }
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out << line << '\n';
  };
  emit(table.headers);
  for (const auto& row : table.rows) {
    emit(row);
  }
  if (!table.footer.empty()) {
    out << '\n' << table.footer << '\n';
  }
  return out.str();
}

void Output::table(const Table& table, const nlohmann::json& data, std::size_t quiet_column) const
{
  switch (m_format) {
  case Format::human:
    if (table.rows.empty()) {
      m_out << "No results found.\n";
      if (!table.footer.empty()) {
        m_out << '\n' << table.footer << '\n';
      }
    } else {
      m_out << format_table(table);
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

namespace {

constexpr auto k_redraw_interval = std::chrono::milliseconds(200);
constexpr auto k_rate_window = std::chrono::seconds(5);

std::string format_duration(double seconds)
{
  auto total = static_cast<long long>(seconds + 0.5);
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof(buffer), "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%lld:%02lld", total / 60, total % 60);
  }
  return buffer;
}

} // namespace

ProgressBar::ProgressBar(const Output& output, std::string label)
  : m_enabled(output.shows_progress()), m_label(std::move(label))
{
  if (m_enabled) {
    m_ticker = std::thread([this] { tick(); });
  }
}

ProgressBar::~ProgressBar()
{
  finish();
}

std::string ProgressBar::render(const std::string& label, const hubcache::util::TransferProgress& progress,
                                double bytes_per_second)
{
  constexpr int width = 24;
  auto total = progress.bytes_total;
  auto done = std::min(progress.bytes_done, total);
  int percent = total == 0 ? 0 : static_cast<int>(done * 100 / total);
  int filled = percent * width / 100;
  std::string line = label + " [" + std::string(static_cast<std::size_t>(filled), '#')
                     + std::string(static_cast<std::size_t>(width - filled), ' ') + "] ";
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "%3d%%", percent);
  line += buffer;
  line += " " + human_size(done) + "/" + human_size(total);
  if (progress.files_total > 0) {
    line += ", " + std::to_string(progress.files_done) + "/" + std::to_string(progress.files_total) + " files";
  }
  if (bytes_per_second > 0) {
    line += ", " + human_size(static_cast<std::uint64_t>(bytes_per_second)) + "/s";
    if (total > done) {
      line += ", ETA " + format_duration(static_cast<double>(total - done) / bytes_per_second);
    }
  }
  return line;
}

void ProgressBar::update(const hubcache::util::TransferProgress& progress)
{
  if (!m_enabled) {
    return;
  }
  std::lock_guard lock(m_mutex);
  auto now = std::chrono::steady_clock::now();
  if (!m_started || progress.bytes_done < m_progress.bytes_done) {
    m_samples.clear();
  }
  bool first = !m_started;
  m_started = true;
  m_progress = progress;
  m_samples.emplace_back(now, progress.bytes_done);
  while (m_samples.size() > 2 && now - m_samples.front().first > k_rate_window) {
    m_samples.pop_front();
  }
  if (first && progress.bytes_total > 0) {
    draw_locked(); // at once; then the ticker redraws by time
  }
}

void ProgressBar::draw_locked()
{
  double rate = 0;
  if (m_samples.size() >= 2) {
    auto now = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(now - m_samples.front().first).count();
    if (seconds > 0.2) {
      rate = static_cast<double>(m_samples.back().second - m_samples.front().second) / seconds;
    }
  }
  auto line = render(m_label, m_progress, rate);
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  m_drawn = true;
}

void ProgressBar::tick()
{
  std::unique_lock lock(m_mutex);
  while (!m_stop) {
    m_wake.wait_for(lock, k_redraw_interval);
    if (!m_stop && m_started && m_progress.bytes_total > 0) {
      draw_locked();
    }
  }
}

void ProgressBar::finish()
{
  {
    std::lock_guard lock(m_mutex);
    if (m_stop) {
      return;
    }
    m_stop = true;
  }
  m_wake.notify_all();
  if (m_ticker.joinable()) {
    m_ticker.join();
  }
  if (m_enabled && m_drawn) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

} // namespace neuron_cache
