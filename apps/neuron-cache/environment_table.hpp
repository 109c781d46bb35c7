#pragma once

#include <string_view>
#include <vector>

namespace neuron_cache {

// One environment variable the program (or a library it uses) reads.
struct EnvironmentVariable {
  std::string_view name;
  std::string_view meaning;
  std::string_view default_value; // empty: unset means "not used"
};

// Every variable the program reads, in man-page order (as ccache's k_env_variable_table).
// The man page's ENVIRONMENT section and `config` are generated from it; a test checks
// that every variable the sources read is listed.
const std::vector<EnvironmentVariable>& environment_variables();

} // namespace neuron_cache
