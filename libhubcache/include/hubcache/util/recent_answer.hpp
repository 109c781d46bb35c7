#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <utility>

namespace hubcache::util {

// A remote answer that serves again the calls made within a short while of it (a command
// asks a repo's info for exists, revision and its write check within milliseconds: one
// request, not three of the user's API quota). Only an answer `keep` accepts is kept;
// forget() after a change of one's own.
template <typename T>
class RecentAnswer {
public:
  explicit RecentAnswer(std::chrono::steady_clock::duration reuse = std::chrono::seconds(1)) : m_reuse(reuse) {}

  template <typename Fetch, typename Keep>
  T get(Fetch&& fetch, Keep&& keep)
  {
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(m_mutex);
      if (m_value && now - m_at < m_reuse) {
        return *m_value;
      }
    }
    T fresh = fetch();
    std::lock_guard lock(m_mutex);
    if (keep(fresh)) {
      m_value = fresh;
      m_at = now;
    } else {
      m_value.reset();
    }
    return fresh;
  }

  void forget()
  {
    std::lock_guard lock(m_mutex);
    m_value.reset();
  }

private:
  std::chrono::steady_clock::duration m_reuse;
  std::mutex m_mutex;
  std::optional<T> m_value;
  std::chrono::steady_clock::time_point m_at;
};

} // namespace hubcache::util
