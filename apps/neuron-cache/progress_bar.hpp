#pragma once

#include "output.hpp"

#include <hubcache/util/progress.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace neuron_cache {

// The progress of a long transfer (push, pull, copy) on stderr, in one layout:
//   Downloading [#########               ]  38% 1.2 GB/3.1 GB, 12/30 files, 45.0 MB/s, ETA 0:42
// As Output::progress_style() says: a bar redrawn in place 5 times a second, or (a CI
// log, a dumb terminal) the same line without the bar, printed when the transfer starts
// and then every Terminal::progress_interval (30 s). Either fits the width of stderr.
// Updates may come from any thread.
class ProgressBar {
public:
  ProgressBar(const Output& output, std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(const hubcache::util::TransferProgress& progress);
  void update(std::uint64_t done, std::uint64_t total) { update({done, total, 0, 0}); }
  void finish();

  // The line for `progress` at `bytes_per_second` (0: not known yet), at most `width`
  // columns: the bar narrows, then the rate, the file count, the bar and the ETA go.
  static std::string render(const std::string& label, const hubcache::util::TransferProgress& progress,
                            double bytes_per_second, std::size_t width, bool with_bar = true);

private:
  void draw_locked();
  void tick();
  double rate_locked() const;

  const Output& m_output;
  Output::ProgressStyle m_style;
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
