// How lookup's answers read: the "cached nearby" summary, optimum's own table.
#include "registry/lookup.hpp"

#include "registry/config_diff.hpp"
#include "registry/json_text.hpp"

#include <hubcache/error.hpp>
#include <hubcache/util/hash.hpp>
#include <hubcache/util/thread_pool.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <exception>
#include <iterator>
#include <mutex>
#include <thread>
#include <tuple>

namespace registry {

namespace {

std::string join_numbers(const std::set<long long>& values)
{
  std::string out;
  for (auto value : values) {
    out += (out.empty() ? "" : ", ") + std::to_string(value);
  }
  return out;
}

std::string text_of(const std::optional<long long>& value)
{
  return value ? std::to_string(*value) : "-";
}

} // namespace

std::string centred(const std::string& text, std::size_t width)
{
  // The extra space of an odd padding goes to the right, as Python's does.
  if (text.size() >= width) {
    return text;
  }
  auto padding = width - text.size();
  return std::string(padding / 2, ' ') + text + std::string(padding - padding / 2, ' ');
}

std::string nearby_summary(const std::vector<LoadedEntry>& entries, std::size_t limit)
{
  // (sequence length, cores) -> batch sizes
  std::map<std::pair<long long, long long>, std::set<long long>> groups;
  for (const auto& loaded : entries) {
    auto shape = entry_shape(loaded.entry);
    if (shape.batch_size) {
      groups[{shape.sequence_length.value_or(-1), shape.num_cores.value_or(-1)}].insert(*shape.batch_size);
    }
  }
  std::string text;
  std::size_t shown = 0;
  for (const auto& [key, batches] : groups) {
    if (shown == limit) {
      text += "; ...";
      break;
    }
    const auto& [sequence, cores] = key;
    text += (text.empty() ? "" : "; ") + std::string("batch ") + join_numbers(batches);
    if (sequence >= 0) {
      text += " at sequence " + std::to_string(sequence);
    }
    if (cores >= 0) {
      text += " (" + std::to_string(cores) + (cores == 1 ? " core)" : " cores)");
    }
    ++shown;
  }
  return text;
}

bool tasks_mix(const std::vector<LookupMatch>& matches)
{
  std::set<std::string> tasks;
  for (const auto& match : matches) {
    tasks.insert(match.loaded.entry.task.value_or(""));
  }
  return tasks.size() > 1;
}

std::string optimum_table(const std::string& model_id, const std::vector<LookupMatch>& matches)
{
  const bool with_task = tasks_mix(matches);
  struct Row {
    std::optional<long long> tp, batch, sequence;
    std::string dtype, instance, task;
    std::vector<std::string> cells(bool with_task) const
    {
      std::vector<std::string> cells = {text_of(batch), text_of(sequence), text_of(tp), dtype, instance};
      if (with_task) {
        cells.push_back(task);
      }
      return cells;
    }
  };
  std::vector<Row> rows;
  std::set<std::vector<std::string>> seen;
  for (const auto& match : matches) {
    auto shape = entry_shape(match.loaded.entry);
    Row row{shape.num_cores,
            shape.batch_size,
            shape.sequence_length,
            shape.dtype.value_or("-"),
            shape.instance_type.value_or("-"),
            match.loaded.entry.task.value_or("-")};
    if (seen.insert(row.cells(with_task)).second) {
      rows.push_back(std::move(row));
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::make_tuple(a.tp.value_or(0), a.batch.value_or(0), a.sequence.value_or(0), a.dtype, a.task)
           < std::make_tuple(b.tp.value_or(0), b.batch.value_or(0), b.sequence.value_or(0), b.dtype, b.task);
  });
  std::string text = "Cached entries for " + model_id + "\n";
  std::vector<std::string> headers = {"batch size", "sequence length", "tensor parallel", "dtype", "instance type"};
  if (with_task) {
    headers.emplace_back("task");
  }
  for (const auto& header : headers) {
    text += centred(header, 16);
  }
  text += "\n";
  for (const auto& row : rows) {
    for (const auto& cell : row.cells(with_task)) {
      text += centred(cell, 16);
    }
    text += "\n";
  }
  return text;
}

} // namespace registry
