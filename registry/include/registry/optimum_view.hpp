#pragma once

#include "registry/lookup.hpp"
#include "registry/model_source.hpp"

#include <hubcache/storage/repository.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// optimum-neuron main's own lookup (`optimum-cli neuron cache lookup`, hub_cache.py at
// 213224e6), for scripts that compare: one compiler pin, one registry version, one task,
// one arch digest, one folder, filters on raw values, and its table or its failure.
// neuron-cache's default lookup (lookup.hpp) is wider on every one of these points.
namespace registry {

// What optimum-neuron main pins: its __version__ (the registry version it writes and
// reads) and the neuronx-cc version of its package metadata.
inline constexpr std::string_view k_optimum_main_registry_version = "0.4.6.dev4";
inline constexpr std::string_view k_optimum_main_compiler_version = "2.21.33363.0";

struct OptimumPins {
  std::string registry_version{k_optimum_main_registry_version};
  std::string compiler_version{k_optimum_main_compiler_version}; // a prefix of the compiler dir's name
};

// optimum's TasksManager.map_from_synonym ("causal-lm" -> "text-generation").
std::string optimum_task_synonym(const std::string& task);

// optimum's TasksManager.infer_task_from_model for a Hub id, from what the Hub says of it:
// `model_info` (the /api/models/<id> answer with pipeline_tag and transformersInfo),
// the repo's file paths, and its config.json (null when it has none). The library is
// inferred as optimum does (model_index.json: diffusers; sentence_* files:
// sentence_transformers; a config.json with pretrained_cfg/architecture: timm...), then
// the task from the pipeline tag, else transformersInfo's pipeline tag or auto model.
// nullopt where optimum raises (no task can be inferred).
std::optional<std::string> infer_optimum_task(const nlohmann::json& model_info, const std::vector<std::string>& files,
                                              const nlohmann::json& config);

// The one arch digest optimum main's lookup computes: sha256 of the model type, the task
// and to_diff_dict() minus the whitelist (of get_text_config() for text-generation), as
// a loaded config holds it; for a diffusers pipeline, of every component's raw config.
std::string optimum_arch_digest(const ModelConfigs& configs, const std::string& task);

// select_hub_cached_entries' filters: exact comparisons of the raw stored values.
struct OptimumFilters {
  std::optional<std::string> instance_type;      // == neuron["target"] (no inf2 -> trn1 mapping)
  std::optional<std::string> dtype;              // DTYPE_MAPPER.pt on both sides
  std::optional<long long> tensor_parallel_size; // == neuron["tp_degree"] only
  std::optional<long long> batch_size;
  std::optional<long long> sequence_length;
};

struct OptimumAnswer {
  std::string compiler_dir;  // the first root folder starting with neuronxcc-<pin>
  std::string registry_root; // <compiler_dir>/0_REGISTRY/<registry version>
  std::string arch_digest;
  std::vector<LoadedEntry> entries; // read from <registry_root>/<arch_digest>/, then filtered
};

// hub_registry_path + get_hub_cached_entries + select_hub_cached_entries. Throws
// EntryNotFound ("No hub cache registry found in REPO for neuronx-cc-PIN") when no root
// folder starts with neuronxcc-<pin>, and InvalidArgument where optimum raises on what
// it reads (a file that is not an entry, a dtype its mapping lacks). `repo_name` is for
// messages.
OptimumAnswer optimum_main_lookup(hubcache::storage::Repository& repo, const RepositoryOpener& open,
                                  const std::string& repo_name, const std::string& arch_digest, const OptimumPins& pins,
                                  const OptimumFilters& filters, unsigned parallelism = 8);

// optimum main's answer as it prints it without rich: "No cached entries found for
// MODEL." or its table of str() values (rows deduplicated, sorted by int(tp), int(batch),
// int(sequence), dtype). Throws InvalidArgument where optimum crashes (an entry without
// batch_size, sequence_length or target, or whose tensor parallel size is not an integer).
std::string optimum_main_output(const std::string& model_id, const std::vector<LoadedEntry>& entries);

} // namespace registry
