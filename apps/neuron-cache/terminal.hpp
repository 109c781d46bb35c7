#pragma once

#include <hubcache/util/environment.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace neuron_cache {

// What the program may draw where its output goes: decided once per run, from the file
// descriptors and the environment, so every command draws the same way.
struct Terminal {
  bool stdout_tty = false;
  bool stderr_tty = false;
  // TERM=dumb (or no TERM): a terminal that cannot move the cursor back, so nothing is
  // redrawn on it (no "\r", no erase sequences).
  bool dumb = true;
  // ANSI colours on stderr: a terminal that is not dumb, and NO_COLOR unset or empty
  // (https://no-color.org).
  bool colour = false;
  // Columns available: $COLUMNS when set, else the terminal's size, else 80 (piped).
  std::size_t stdout_width = 80;
  std::size_t stderr_width = 80;
  // Columns tables are fitted to: stdout's width on a terminal or with $COLUMNS set; 0
  // (never cut) when piped, so a script or a file gets every value whole.
  std::size_t table_width = 0;
  // How often a progress line is printed where no bar can be drawn (a CI log):
  // $NEURON_CACHE_PROGRESS_INTERVAL seconds, else 30 s.
  std::chrono::milliseconds progress_interval{30'000};
  // The text of a NEURON_CACHE_PROGRESS_INTERVAL that is not a number of seconds (it is
  // then ignored): for a warning.
  std::optional<std::string> invalid_interval;

  static Terminal detect(const hubcache::util::Environment& env);
};

inline constexpr std::size_t k_default_width = 80;
inline constexpr std::size_t k_min_width = 20;
inline constexpr std::size_t k_max_width = 1000;

// The width `columns` names ($COLUMNS: a whole number, clamped to 20..1000), or nullopt.
std::optional<std::size_t> parse_columns(const std::string& columns);
// Seconds as NEURON_CACHE_PROGRESS_INTERVAL gives them ("30", "0.05"): positive, at most a day.
std::optional<std::chrono::milliseconds> parse_interval(const std::string& seconds);

// `text` cut to `width` columns: its middle replaced by "..." (the start and the end of a
// path or an id say the most). Counts bytes; the program's tables and lines are ASCII
// apart from what repos name, which is escaped before it is drawn.
std::string fit_middle(const std::string& text, std::size_t width);
// `text` cut at `width` columns, its end replaced by "...".
std::string fit_end(const std::string& text, std::size_t width);
// `text` re-wrapped to `width` columns, continuation lines indented by `indent` spaces
// (the first line starts at column `first_column`). Words longer than the room are left
// whole on their own line.
std::string wrap_words(const std::string& text, std::size_t indent, std::size_t width, std::size_t first_column);
// Each line of `text` longer than `width` wrapped on its own, its continuation lines
// indented as the line is; shorter lines are left as they are.
std::string wrap_lines(const std::string& text, std::size_t width);

} // namespace neuron_cache
