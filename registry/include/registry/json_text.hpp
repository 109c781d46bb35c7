#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

// Text forms of JSON that are byte-identical to CPython's json module, because the
// registry file names are hashes of that text.
namespace registry {

// json.dumps(value, indent=2, sort_keys=True): ensure_ascii escapes, Python float repr,
// keys sorted by code point, "{}" / "[]" for empty containers, no trailing newline.
std::string dumps_indented(const nlohmann::json& value);
// json.dumps(value, sort_keys=True): one line, separators ", " and ": ".
std::string dumps_compact(const nlohmann::json& value);
// The same for a config held by a PretrainedConfig (what optimum hashes at export and on
// lookup): its id2label maps have int keys there, which sort_keys orders as numbers
// ("2" before "10"); a config read back from an entry file keeps them as strings.
std::string dumps_compact_live_config(const nlohmann::json& value);

// Python's repr(float): shortest round-trip digits, fixed notation for exponents in
// [-4, 16), else "1e-05" / "1e+16"; "Infinity", "-Infinity", "NaN" as json.dumps writes them.
std::string python_float_repr(double value);

// Python's str() of a JSON value, as optimum prints neuron-config values: True/False/None,
// strings bare at top level and quoted inside containers.
std::string python_str(const nlohmann::json& value);

// Parses JSON text keeping integers as integers and floats as floats; throws
// hubcache::InvalidArgument naming `what` (a file name) on malformed input.
nlohmann::json parse_json(std::string_view text, const std::string& what);

} // namespace registry
