#pragma once

// The computations transformers config classes make in __init__ (the table names them,
// generate_class_table.py recognises their source text), and the Python semantics they
// and PretrainedConfig rely on. Private to the registry library.

#include <nlohmann/json.hpp>

#include <string_view>

namespace registry::config_rules {

// Python's `a == b` on JSON-loaded values: False == 0, True == 1, 1 == 1.0.
bool python_equal(const nlohmann::json& a, const nlohmann::json& b);
// Python's bool(value).
bool python_truthy(const nlohmann::json& value);

// The state of a config class's __init__ while it runs: its arguments (locals, after the
// config.json values), the attributes set so far, and the **kwargs left over.
struct InitState {
  nlohmann::json& arguments;
  nlohmann::json& attributes;
  const nlohmann::json& kwargs;
  bool exact = true; // false when a value has a form the rule cannot follow
};

// Applies the named rule; false when the rule is unknown to this build.
bool apply(std::string_view rule, InitState& state);

} // namespace registry::config_rules
