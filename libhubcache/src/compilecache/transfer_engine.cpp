#include "transfer_engine.hpp"

#include "hubcache/compilecache/pull_guard.hpp"
#include "hubcache/compilecache/transfer_errors.hpp"
#include "hubcache/util/thread_pool.hpp"

#include <algorithm>
#include <utility>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

TransferEngine::TransferEngine(std::vector<Item> items)
  : m_items(std::move(items)), m_failed(std::make_unique<std::atomic<bool>[]>(m_items.size())),
    m_remaining(std::make_unique<std::atomic<std::size_t>[]>(m_items.size()))
{
  for (std::size_t i = 0; i < m_items.size(); ++i) {
    m_remaining[i] = m_items[i].files->size();
  }
}

void TransferEngine::download(storage::Repository& source, std::size_t begin, std::size_t end, std::size_t workers,
                              const Hooks& hooks)
{
  std::vector<std::pair<std::size_t, std::size_t>> tasks; // (item, file), entry after entry
  for (auto i = begin; i < end; ++i) {
    for (std::size_t f = 0; f < m_items[i].files->size(); ++f) {
      tasks.emplace_back(i, f);
    }
  }
  util::parallel_for(tasks.size(), std::max<std::size_t>(workers, 1), [&](std::size_t task) {
    auto [item, file_index] = tasks[task];
    download_file(source, item, file_index, hooks);
    if (m_remaining[item].fetch_sub(1, std::memory_order_acq_rel) == 1 && hooks.on_item_done) {
      hooks.on_item_done(item);
    }
  });
}

void TransferEngine::download_file(storage::Repository& source, std::size_t item, std::size_t file_index,
                                   const Hooks& hooks)
{
  if (m_stopped || m_failed[item] || interrupting_signal() != 0) {
    return;
  }
  auto& file = (*m_items[item].files)[file_index];
  std::uint64_t told = 0;
  auto on_progress = [&](std::uint64_t done, std::uint64_t) {
    throw_if_interrupted();
    std::lock_guard lock(m_bytes_mutex);
    auto bytes = done > told ? done - told : 0;
    told = std::max(told, done);
    if (hooks.on_bytes) {
      hooks.on_bytes(bytes);
    }
  };
  try {
    auto destination = hooks.destination(item, file);
    stdfs::create_directories(destination.parent_path());
    auto written = source.download_listed(file, destination, on_progress, false);
    std::uint64_t told_in_all = 0;
    {
      std::lock_guard lock(m_bytes_mutex);
      told_in_all = told;
    }
    hooks.on_landed(item, file, std::move(written), told_in_all);
  } catch (...) {
    fail(item, std::current_exception());
  }
}

void TransferEngine::fail(std::size_t item, const std::exception_ptr& error)
{
  bool first = !m_failed[item].exchange(true);
  if (is_interruption(error)) {
    return; // not an error of the item: the run was asked to stop
  }
  std::lock_guard lock(m_mutex);
  m_no_space = m_no_space || is_no_space(error);
  if (first) {
    m_errors.push_back({*m_items[item].path, SkipReason::error, message_of(error)});
  }
  if (stops_the_run(error) && !m_stopped.exchange(true)) {
    m_stop_reason = message_of(error);
  }
}

std::vector<Skipped> TransferEngine::take_errors()
{
  std::lock_guard lock(m_mutex);
  return std::exchange(m_errors, {});
}

} // namespace hubcache::compilecache
