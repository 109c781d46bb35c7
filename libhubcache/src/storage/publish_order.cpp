#include "hubcache/storage/publish_order.hpp"

#include "hubcache/layout/names.hpp"
#include "hubcache/storage/repository.hpp"

#include <array>

namespace hubcache::storage {

std::size_t publish_phase(std::string_view path)
{
  auto parts = path_components(path);
  bool versioned = parts.size() >= 3 && parts[0].starts_with(layout::k_version_prefix);
  if (versioned && parts[1] == layout::k_registry_dir) {
    return 3;
  }
  if (versioned && parts[1].starts_with("MODULE_")) {
    return parts.back() == "model.done" && parts.size() == 3 ? 1 : 0;
  }
  return 2;
}

std::string_view entry_folder(std::string_view path)
{
  auto first = path.find('/');
  auto second = first == std::string_view::npos ? first : path.find('/', first + 1);
  return path.substr(0, second);
}

std::vector<std::vector<std::size_t>> phased_batches(const std::vector<std::string_view>& paths,
                                                     std::size_t (*phase_of)(std::string_view), std::size_t max_batch)
{
  std::array<std::vector<std::size_t>, k_publish_phases> phases;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    phases[phase_of(paths[i])].push_back(i);
  }
  std::vector<std::vector<std::size_t>> batches;
  for (const auto& phase : phases) {
    for (std::size_t begin = 0; begin < phase.size(); begin += max_batch) {
      auto end = std::min(phase.size(), begin + max_batch);
      batches.emplace_back(phase.begin() + static_cast<std::ptrdiff_t>(begin),
                           phase.begin() + static_cast<std::ptrdiff_t>(end));
    }
  }
  return batches;
}

} // namespace hubcache::storage
