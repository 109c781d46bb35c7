// Where a neuron-cache binary came from: its version, the git commit it was built from
// ("<hex>-dirty" when tracked files differed from it, "unknown" outside a git checkout) and
// the day it was built (UTC, or SOURCE_DATE_EPOCH's). The definition is generated at build
// time (cmake/BuildInfo.cmake) and linked into the program only, so a new commit relinks
// neuron-cache but rebuilds no library or test.
#pragma once

namespace neuron_cache {

struct BuildInfo {
  const char* version;
  const char* commit;
  const char* date;
};

extern const BuildInfo k_build_info;

} // namespace neuron_cache
