// Whether a loaded registry entry is the one a lookup asks for, and which of several alike
// entries to keep: digests, multi-model architectures, shapes and filters.
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

std::string_view to_string(MatchReason reason)
{
  switch (reason) {
  case MatchReason::arch_digest: return "arch_digest";
  case MatchReason::same_config: return "same_config";
  case MatchReason::same_model_id: return "model_id";
  }
  return "unknown";
}

namespace {

bool contains_all(const nlohmann::json& container, const nlohmann::json& containee)
{
  if (!container.is_object() || !containee.is_object()) {
    return container == containee;
  }
  for (const auto& [key, value] : containee.items()) {
    if (!container.contains(key) || container[key] != value) {
      return false;
    }
  }
  return true;
}

bool same_multi_model_arch(const CacheEntry& entry, const LookupTarget& target)
{
  std::set<std::string> entry_components;
  for (const auto& [name, component] : entry.config.items()) {
    if (!is_unchecked_component(name)) {
      entry_components.insert(name);
    }
  }
  std::set<std::string> target_components;
  for (const auto& [name, component] : target.config.items()) {
    target_components.insert(name);
  }
  if (entry_components != target_components) {
    return false;
  }
  for (const auto& name : entry_components) {
    auto stored = entry.config[name];
    if (stored.is_object()) {
      stored.erase("neuron");
    }
    const auto& wanted = target.config[name];
    if (!contains_all(stored, wanted) && !contains_all(wanted, stored)) {
      return false;
    }
  }
  return true;
}

std::optional<long long> as_integer(const nlohmann::json& value)
{
  if (value.is_number_integer()) {
    return value.get<long long>();
  }
  if (value.is_number_float()) {
    double number = value.get<double>();
    // Only in range may a double be cast (1e300 would be undefined behaviour); 2^63 is exact.
    constexpr double limit = 9223372036854775808.0;
    if (number >= -limit && number < limit && number == std::trunc(number)) {
      return static_cast<long long>(number);
    }
    return std::nullopt;
  }
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    long long parsed = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (error == std::errc() && end == text.data() + text.size() && !text.empty()) {
      return parsed;
    }
  }
  return std::nullopt;
}

std::optional<nlohmann::json> first_of(const nlohmann::json& neuron, std::initializer_list<const char*> keys)
{
  if (!neuron.is_object()) {
    return std::nullopt;
  }
  for (const char* key : keys) {
    if (neuron.contains(key) && !neuron[key].is_null()) {
      return neuron[key];
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<MatchReason> match_entry(const LoadedEntry& loaded, const LookupTarget& target)
{
  const auto& entry = loaded.entry;
  if (loaded.location.kind == RegistryPathKind::digest && target.digests.count(loaded.location.arch_digest) != 0U) {
    return MatchReason::arch_digest;
  }
  if (target.digests.count(entry.arch_digest()) != 0U) {
    return MatchReason::arch_digest;
  }
  if (!target.model_type.empty() && entry.model_type == target.model_type) {
    bool same = target.multi_model
                  ? entry.entry_class == EntryClass::multi_model && same_multi_model_arch(entry, target)
                  : entry.entry_class == EntryClass::single_model
                      && (entry.config == target.diff_config || entry.config == target.config);
    if (!same && !target.multi_model && entry.entry_class == EntryClass::single_model
        && matches_by_key_intersection(loaded.location.registry_version)) {
      same = same_common_keys(entry.config, target.config);
    }
    if (same) {
      return MatchReason::same_config;
    }
  }
  if (entry.model_id == target.model_id) {
    return MatchReason::same_model_id;
  }
  return std::nullopt;
}

std::string normalize_instance_type(const std::string& instance_type)
{
  if (instance_type == "inf2" || instance_type == "trn1n") {
    return "trn1";
  }
  return instance_type;
}

std::string normalize_dtype(const std::string& dtype)
{
  std::string value = dtype;
  if (value.rfind("torch.", 0) == 0) {
    value = value.substr(6);
  }
  if (value == "bf16" || value == "bfloat16") {
    return "bfloat16";
  }
  if (value == "fp16" || value == "f16" || value == "float16" || value == "half") {
    return "float16";
  }
  if (value == "fp32" || value == "f32" || value == "float32" || value == "float") {
    return "float32";
  }
  return value;
}

EntryShape entry_shape(const CacheEntry& entry)
{
  EntryShape shape;
  auto neuron = entry.neuron_config();
  if (auto value = first_of(neuron, {"batch_size", "static_batch_size"})) {
    shape.batch_size = as_integer(*value);
  }
  if (auto value = first_of(neuron, {"sequence_length", "static_sequence_length"})) {
    shape.sequence_length = as_integer(*value);
  }
  if (auto value = first_of(neuron, {"tp_degree", "tensor_parallel_size", "num_cores"})) {
    shape.num_cores = as_integer(*value);
  }
  if (auto value = first_of(neuron, {"torch_dtype", "dtype", "auto_cast_type"}); value && value->is_string()) {
    shape.dtype = normalize_dtype(value->get<std::string>());
  }
  if (auto value = first_of(neuron, {"target"}); value && value->is_string()) {
    shape.instance_type = normalize_instance_type(value->get<std::string>());
  }
  return shape;
}

bool passes_filters(const LoadedEntry& loaded, const Filters& filters)
{
  const auto& entry = loaded.entry;
  if (filters.compiler_version
      && !compiler_version_matches(loaded.location.compiler_version, *filters.compiler_version)) {
    return false;
  }
  if (filters.mode && entry_mode(loaded) != *filters.mode) {
    return false;
  }
  if (filters.registry_version && loaded.location.registry_version != *filters.registry_version) {
    return false;
  }
  // Multi-model entries have no task: they serve every task of their pipeline.
  if (filters.task && entry.task && *entry.task != *filters.task) {
    return false;
  }
  auto shape = entry_shape(entry);
  auto integer_ok = [](const std::optional<long long>& wanted, const std::optional<long long>& actual) {
    return !wanted || (actual && *actual == *wanted);
  };
  auto text_ok = [](const std::optional<std::string>& wanted, const std::optional<std::string>& actual) {
    return !wanted || (actual && *actual == *wanted);
  };
  return integer_ok(filters.batch_size, shape.batch_size) && integer_ok(filters.sequence_length, shape.sequence_length)
         && integer_ok(filters.num_cores, shape.num_cores)
         && text_ok(filters.dtype ? std::optional(normalize_dtype(*filters.dtype)) : std::nullopt, shape.dtype)
         && text_ok(filters.instance_type ? std::optional(normalize_instance_type(*filters.instance_type))
                                          : std::nullopt,
                    shape.instance_type);
}

std::string entry_mode(const LoadedEntry& loaded)
{
  if (!loaded.location.mode.empty()) {
    return loaded.location.mode;
  }
  auto neuron = loaded.entry.neuron_config();
  if (neuron.is_object()) {
    if (auto mode = neuron.find("mode"); mode != neuron.end() && mode->is_string()) {
      return mode->get<std::string>();
    }
  }
  return "inference";
}

std::vector<LookupMatch> deduplicate(std::vector<LookupMatch> matches)
{
  auto key = [](const LookupMatch& match) {
    return std::tie(match.loaded.location.compiler_dir, match.loaded.location.registry_version,
                    match.loaded.content_hash);
  };
  // Alias paths first so they win among copies of the same entry.
  std::stable_sort(matches.begin(), matches.end(), [&](const LookupMatch& a, const LookupMatch& b) {
    if (key(a) != key(b)) {
      return key(a) < key(b);
    }
    return a.loaded.location.kind == RegistryPathKind::alias && b.loaded.location.kind != RegistryPathKind::alias;
  });
  std::vector<LookupMatch> unique;
  for (auto& match : matches) {
    if (!unique.empty() && key(unique.back()) == key(match)) {
      continue;
    }
    unique.push_back(std::move(match));
  }
  // Within a compiler and registry version, optimum's table order: cores, batch, sequence, dtype.
  auto order = [](const LookupMatch& match) {
    auto shape = entry_shape(match.loaded.entry);
    return std::make_tuple(match.loaded.location.compiler_version, match.loaded.location.registry_version,
                           shape.num_cores.value_or(0), shape.batch_size.value_or(0), shape.sequence_length.value_or(0),
                           shape.dtype.value_or(""), match.loaded.location.path);
  };
  std::sort(unique.begin(), unique.end(),
            [&](const LookupMatch& a, const LookupMatch& b) { return order(a) < order(b); });
  return unique;
}

LookupOutcome find_entries(hubcache::storage::Repository& repo, const RepositoryOpener& open,
                           const LookupTarget& target, const Filters& filters, unsigned parallelism)
{
  LookupOutcome outcome;
  auto index = index_registry_for(repo, target, filters.compiler_version, parallelism);
  auto candidates = select_candidates(index, target, filters.compiler_version);
  auto report = load_entries(open, candidates, parallelism);
  outcome.warnings = std::move(report.warnings);
  outcome.unexpected = std::move(index.unexpected);
  for (auto& loaded : report.entries) {
    if (auto reason = match_entry(loaded, target); reason && passes_filters(loaded, filters)) {
      outcome.matches.push_back({std::move(loaded), *reason});
    } else if (reason) {
      outcome.filtered_out.push_back(std::move(loaded));
    }
  }
  outcome.matches = deduplicate(std::move(outcome.matches));
  return outcome;
}

Attribution attribute_matches(hubcache::storage::Repository& repo, const std::vector<LookupMatch>& matches)
{
  Attribution attribution;
  std::map<std::string, std::set<std::string>> folders; // compiler dir -> its sub-folders
  for (const auto& match : matches) {
    const auto& location = match.loaded.location;
    bool found = false;
    try {
      auto path = attribution_path(location.compiler_version, location.file_hash);
      for (auto& module : attributed_modules(repo.read_file(path), path, location.compiler_dir)) {
        attribution.modules.insert(std::move(module));
        found = true;
      }
    } catch (const hubcache::EntryNotFound&) {
    } catch (const hubcache::InvalidArgument&) {
    }
    if (!found) {
      // Traced models: optimum keeps the export in MODULE_<entry hash>.
      auto known = folders.find(location.compiler_dir);
      if (known == folders.end()) {
        auto names = repo.list_folders(location.compiler_dir);
        known = folders.emplace(location.compiler_dir, std::set<std::string>(names.begin(), names.end())).first;
      }
      if (known->second.count("MODULE_" + location.file_hash) != 0U) {
        attribution.modules.insert(location.compiler_dir + "/MODULE_" + location.file_hash);
        found = true;
      }
    }
    ++(found ? attribution.attributed : attribution.unattributed);
  }
  return attribution;
}

} // namespace registry
