#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

// The order in which a store without commits (S3, a Storage Bucket) makes files visible, so
// that a reader at any moment sees each compile-cache entry either as before or whole:
// an entry's files, then its model.done (which says the entry is complete), then loose
// files, then the registry (which describes entries). Each phase starts only once the one
// before it is in place.
namespace hubcache::storage {

inline constexpr std::size_t k_publish_phases = 4;

// The phase (0..3) of a path in a cache repo.
std::size_t publish_phase(std::string_view path);

// The entry a path of phase 0 or 1 belongs to (`neuronxcc-<v>/MODULE_<key>`, a prefix of
// it): an entry's model.done may go once every file of the same entry folder landed.
std::string_view entry_folder(std::string_view path);

// Removals go the other way: the registry first, then the model.done markers, then the
// rest, so no reader ever sees a description or a marker outliving what it vouches for.
inline std::size_t removal_phase(std::string_view path)
{
  return k_publish_phases - 1 - publish_phase(path);
}

// The indices of `paths` as batches of at most `max_batch` each: phase by phase (by
// `phase_of`), a phase never sharing a batch with another, paths in their given order
// inside a phase.
std::vector<std::vector<std::size_t>> phased_batches(const std::vector<std::string_view>& paths,
                                                     std::size_t (*phase_of)(std::string_view), std::size_t max_batch);

} // namespace hubcache::storage
