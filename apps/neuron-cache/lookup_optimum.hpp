#pragma once

#include "cli.hpp"

#include <registry/lookup.hpp>
#include <registry/model_source.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

// Pieces `lookup` and `lookup --optimum` share (cmd_lookup.cpp) and the optimum view
// itself (lookup_optimum.cpp).
namespace neuron_cache {

// Paths of every file of a Hub model repo (main).
std::vector<std::string> hub_model_files(Invocation& invocation, const std::string& model);
// A Hub diffusers pipeline's component configs: every <folder>/config.json of the repo,
// keyed by its folder's name, as optimum reads them.
registry::ModelConfigs hub_pipeline_configs(Invocation& invocation, const std::string& model);

// One element of `lookup --json`'s entries.
nlohmann::json lookup_entry_json(const registry::LoadedEntry& loaded, registry::MatchReason reason);

// `lookup --optimum MODEL`: optimum-neuron main's answer (registry/optimum_view.hpp).
int run_optimum_lookup(Invocation& invocation);

} // namespace neuron_cache
