#pragma once

#include <filesystem>
#include <optional>

// What `cleanup --wipe` may empty. A wipe removes everything in a directory, and runs as
// root in CI with --yes: the directory must be a compile cache and nothing else, never a
// system directory or a home. The cache root comes from options, NEURON_CC_FLAGS and
// NEURON_COMPILE_CACHE_URL, so a typo or a hostile environment can name any directory.
namespace hubcache::compilecache {

// Throws IoError, naming the reason, unless `root` may be wiped:
// - its real path (links resolved) is not `/`, a system directory (/etc, /usr, /var, /home,
//   /tmp, /var/tmp, ...), nor `home` or one of its ancestors;
// - it holds only what a compile cache holds at its top: `neuronxcc-<version>` folders, the
//   `lock` file, in-flight and trash names of our writers, a directory repo's private folder.
void check_wipe_root(const std::filesystem::path& root, const std::optional<std::filesystem::path>& home);

} // namespace hubcache::compilecache
