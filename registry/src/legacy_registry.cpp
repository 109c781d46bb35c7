#include "registry/legacy_registry.hpp"

#include "registry/json_text.hpp"
#include "registry/lookup.hpp"

#include <hubcache/error.hpp>

namespace registry {

std::optional<std::string> read_legacy_registry(hubcache::storage::Repository& repo)
{
  auto file = repo.stat(k_legacy_registry_file);
  if (!file) {
    return std::nullopt;
  }
  if (file->size > k_max_legacy_registry_size) {
    throw hubcache::InvalidArgument(std::string(k_legacy_registry_file) + " of " + repo.describe() + " is "
                                    + std::to_string(file->size) + " bytes, more than a registry holds; not read");
  }
  try {
    auto text = repo.read_file(k_legacy_registry_file);
    if (text.find_first_not_of(" \t\r\n{}") == std::string::npos) {
      return std::nullopt; // "{}": created, never filled
    }
    return text;
  } catch (const hubcache::EntryNotFound&) {
    return std::nullopt;
  }
}

namespace {

std::optional<long long> integer_of(const nlohmann::json& value)
{
  if (value.is_number_integer()) {
    return value.get<long long>();
  }
  return std::nullopt;
}

} // namespace

std::vector<Configuration> legacy_configurations(std::string_view text, std::vector<std::string>& warnings)
{
  std::vector<Configuration> configurations;
  nlohmann::json root;
  try {
    root = parse_json(text, std::string(k_legacy_registry_file));
  } catch (const hubcache::InvalidArgument& error) {
    warnings.push_back(std::string(error.what()) + "; its configurations are not listed");
    return configurations;
  }
  const std::string file(k_legacy_registry_file);
  if (!root.is_object()) {
    warnings.push_back(file + " is not a JSON object; its configurations are not listed");
    return configurations;
  }
  std::size_t skipped = 0;
  for (const auto& [version, models] : root.items()) {
    if (!models.is_object()) {
      ++skipped;
      continue;
    }
    for (const auto& [key, model] : models.items()) {
      if (!model.is_object() || !model.contains("features") || !model["features"].is_array()) {
        ++skipped;
        continue;
      }
      auto name = model.contains("model_name_or_path") && model["model_name_or_path"].is_string()
                    ? model["model_name_or_path"].get<std::string>()
                    : std::string("null");
      // optimum keys a model without a name by its hash and writes the name "null".
      std::string model_id = name == "null" || name.empty() ? key : name;
      for (const auto& feature : model["features"]) {
        if (!feature.is_object()) {
          ++skipped;
          continue;
        }
        nlohmann::json neuron = nlohmann::json::object();
        neuron["mode"] = "training";
        if (feature.contains("input_shapes") && feature["input_shapes"].is_array()) {
          neuron["input_shapes"] = feature["input_shapes"];
          for (const auto& input : feature["input_shapes"]) {
            // ["input_ids", [batch, sequence]]: the shapes lookup and list show.
            if (input.is_array() && input.size() == 2 && input[0] == "input_ids" && input[1].is_array()
                && input[1].size() == 2) {
              if (auto batch = integer_of(input[1][0])) {
                neuron["batch_size"] = *batch;
              }
              if (auto sequence = integer_of(input[1][1])) {
                neuron["sequence_length"] = *sequence;
              }
            }
          }
        }
        if (auto cores =
              feature.contains("num_neuron_cores") ? integer_of(feature["num_neuron_cores"]) : std::nullopt) {
          neuron["num_cores"] = *cores;
        }
        if (feature.contains("precision") && feature["precision"].is_string()) {
          neuron["torch_dtype"] = normalize_dtype(feature["precision"].get<std::string>());
        }
        std::string neuron_hash;
        if (feature.contains("neuron_hash") && feature["neuron_hash"].is_string()) {
          neuron_hash = feature["neuron_hash"].get<std::string>();
          neuron["neuron_hash"] = neuron_hash;
        }
        neuron["compiler_version"] = version;
        Configuration configuration;
        configuration.model_id = model_id;
        configuration.compiler_version = version;
        configuration.registry_version = std::string(k_legacy_registry_version);
        configuration.hash = neuron_hash.substr(0, 20);
        configuration.paths = {file};
        CacheEntry entry;
        entry.model_id = model_id;
        entry.task = "training";
        entry.neuron = std::move(neuron);
        configuration.entry = std::make_shared<const CacheEntry>(std::move(entry));
        configurations.push_back(std::move(configuration));
      }
    }
  }
  if (skipped > 0) {
    warnings.push_back(file + ": " + std::to_string(skipped)
                       + " parts are not in optimum <= 0.0.18's registry format; skipped");
  }
  return configurations;
}

} // namespace registry
