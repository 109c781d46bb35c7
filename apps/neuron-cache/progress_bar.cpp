#include "progress_bar.hpp"

#include <algorithm>
#include <cstdio>

namespace neuron_cache {

namespace {

constexpr auto k_redraw_interval = std::chrono::milliseconds(200);
constexpr auto k_rate_window = std::chrono::seconds(5);
constexpr int k_bar_width = 24;
constexpr int k_min_bar_width = 10;

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

std::string ProgressBar::render(const std::string& label, const hubcache::util::TransferProgress& progress,
                                double bytes_per_second, std::size_t width, bool with_bar)
{
  auto total = progress.bytes_total;
  auto done = std::min(progress.bytes_done, total);
  int percent = total == 0 ? 0 : static_cast<int>(done * 100 / total);
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "%3d%%", percent);
  const std::string amounts = std::string(buffer) + " " + human_size(done) + "/" + human_size(total);
  const std::string files = progress.files_total > 0 ? ", " + std::to_string(progress.files_done) + "/"
                                                         + std::to_string(progress.files_total) + " files"
                                                     : "";
  const std::string rate =
    bytes_per_second > 0 ? ", " + human_size(static_cast<std::uint64_t>(bytes_per_second)) + "/s" : "";
  const std::string eta = bytes_per_second > 0 && total > done
                            ? ", ETA " + format_duration(static_cast<double>(total - done) / bytes_per_second)
                            : "";
  int bar_width = with_bar ? k_bar_width : 0;
  bool show_rate = true, show_files = true, show_eta = true;
  auto compose = [&] {
    std::string line = label;
    if (bar_width > 0) {
      int filled = percent * bar_width / 100;
      line += " [" + std::string(static_cast<std::size_t>(filled), '#')
              + std::string(static_cast<std::size_t>(bar_width - filled), ' ') + "]";
    }
    return line + " " + amounts + (show_files ? files : "") + (show_rate ? rate : "") + (show_eta ? eta : "");
  };
  auto line = compose();
  // What goes first when the line is too wide: bar width, rate, files, the bar, the ETA.
  while (line.size() > width && bar_width > k_min_bar_width) {
    bar_width = std::max(k_min_bar_width, bar_width - static_cast<int>(line.size() - width));
    line = compose();
  }
  for (bool* part : {&show_rate, &show_files}) {
    if (line.size() > width) {
      *part = false;
      line = compose();
    }
  }
  if (line.size() > width && bar_width > 0) {
    bar_width = 0;
    line = compose();
  }
  if (line.size() > width) {
    show_eta = false;
    line = compose();
  }
  return fit_end(line, width);
}

ProgressBar::ProgressBar(const Output& output, std::string label)
  : m_output(output), m_style(output.progress_style()), m_label(std::move(label))
{
  if (m_style != Output::ProgressStyle::none) {
    m_ticker = std::thread([this] { tick(); });
  }
}

ProgressBar::~ProgressBar()
{
  finish();
}

void ProgressBar::update(const hubcache::util::TransferProgress& progress)
{
  if (m_style == Output::ProgressStyle::none) {
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
    draw_locked(); // at once; then the ticker draws by time
  }
}

double ProgressBar::rate_locked() const
{
  if (m_samples.size() < 2) {
    return 0;
  }
  auto now = std::chrono::steady_clock::now();
  double seconds = std::chrono::duration<double>(now - m_samples.front().first).count();
  if (seconds <= 0.2) {
    return 0;
  }
  return static_cast<double>(m_samples.back().second - m_samples.front().second) / seconds;
}

void ProgressBar::draw_locked()
{
  bool bar = m_style == Output::ProgressStyle::bar;
  auto width = m_output.terminal().stderr_width;
  // A bar never reaches the last column: a terminal that wraps there would stack the redraws.
  auto line = render(m_label, m_progress, rate_locked(), bar ? width - 1 : width, bar);
  m_output.progress(line, bar);
  m_drawn = true;
}

void ProgressBar::tick()
{
  auto interval = m_style == Output::ProgressStyle::bar
                    ? std::chrono::duration_cast<std::chrono::milliseconds>(k_redraw_interval)
                    : m_output.terminal().progress_interval;
  std::unique_lock lock(m_mutex);
  auto next = std::chrono::steady_clock::now() + interval;
  while (!m_stop) {
    m_wake.wait_until(lock, next);
    if (m_stop || std::chrono::steady_clock::now() < next) {
      continue;
    }
    next = std::chrono::steady_clock::now() + interval;
    if (m_started && m_progress.bytes_total > 0) {
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
  if (m_style == Output::ProgressStyle::bar && m_drawn) {
    m_output.progress("", true);
  }
}

} // namespace neuron_cache
