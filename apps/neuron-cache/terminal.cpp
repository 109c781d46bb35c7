#include "terminal.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include <sys/ioctl.h>
#include <unistd.h>

namespace neuron_cache {

namespace {

std::optional<std::size_t> window_columns(int fd)
{
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) != 0 || size.ws_col == 0) {
    return std::nullopt;
  }
  return std::clamp<std::size_t>(size.ws_col, k_min_width, k_max_width);
}

} // namespace

std::optional<std::size_t> parse_columns(const std::string& columns)
{
  std::size_t value = 0;
  auto [end, error] = std::from_chars(columns.data(), columns.data() + columns.size(), value);
  if (error != std::errc() || end != columns.data() + columns.size() || value == 0) {
    return std::nullopt;
  }
  return std::clamp(value, k_min_width, k_max_width);
}

std::optional<std::chrono::milliseconds> parse_interval(const std::string& seconds)
{
  std::istringstream in(seconds);
  in.imbue(std::locale::classic());
  double value = 0;
  if (!(in >> value) || !in.eof() || !std::isfinite(value) || value <= 0 || value > 86'400) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(std::max<long long>(1, std::llround(value * 1000)));
}

Terminal Terminal::detect(const hubcache::util::Environment& env)
{
  Terminal terminal;
  terminal.stdout_tty = ::isatty(STDOUT_FILENO) != 0;
  terminal.stderr_tty = ::isatty(STDERR_FILENO) != 0;
  auto term = env.get_non_empty("TERM");
  terminal.dumb = !term || *term == "dumb";
  terminal.colour = terminal.stderr_tty && !terminal.dumb && !env.get_non_empty("NO_COLOR");
  // As Python's shutil.get_terminal_size: $COLUMNS first (a user's or a CI's choice),
  // then the terminal's size.
  auto columns = env.get_non_empty("COLUMNS");
  auto from_env = columns ? parse_columns(*columns) : std::nullopt;
  auto width_of = [&](int fd, bool tty) {
    if (from_env) {
      return *from_env;
    }
    auto size = tty ? window_columns(fd) : std::nullopt;
    return size.value_or(k_default_width);
  };
  terminal.stdout_width = width_of(STDOUT_FILENO, terminal.stdout_tty);
  terminal.stderr_width = width_of(STDERR_FILENO, terminal.stderr_tty);
  terminal.table_width = terminal.stdout_tty || from_env ? terminal.stdout_width : 0;
  if (auto interval = env.get_non_empty("NEURON_CACHE_PROGRESS_INTERVAL")) {
    if (auto parsed = parse_interval(*interval)) {
      terminal.progress_interval = *parsed;
    } else {
      terminal.invalid_interval = *interval;
    }
  }
  return terminal;
}

std::string fit_middle(const std::string& text, std::size_t width)
{
  if (text.size() <= width) {
    return text;
  }
  if (width <= 3) {
    return text.substr(0, width);
  }
  auto keep = width - 3;
  auto head = (keep + 1) / 2;
  return text.substr(0, head) + "..." + text.substr(text.size() - (keep - head));
}

std::string fit_end(const std::string& text, std::size_t width)
{
  if (text.size() <= width) {
    return text;
  }
  return width <= 3 ? text.substr(0, width) : text.substr(0, width - 3) + "...";
}

std::string wrap_words(const std::string& text, std::size_t indent, std::size_t width, std::size_t first_column)
{
  std::istringstream words(text);
  std::string word;
  std::string out;
  std::size_t column = first_column;
  bool first = true;
  while (words >> word) {
    if (!first && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    first = false;
  }
  return out;
}

std::string wrap_lines(const std::string& text, std::size_t width)
{
  std::string out;
  std::istringstream lines(text);
  std::string line;
  bool first = true;
  while (std::getline(lines, line)) {
    out += first ? "" : "\n";
    first = false;
    if (line.size() <= width) {
      out += line;
      continue;
    }
    auto indent = std::min(line.find_first_not_of(' '), line.size());
    out += std::string(indent, ' ') + wrap_words(line, indent, width, indent);
  }
  return out;
}

} // namespace neuron_cache
