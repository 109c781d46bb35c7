#pragma once

#include "registry/entry.hpp"
#include "registry/layout.hpp"

#include <hubcache/storage/repository.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

// Finding registry entries in a cache repo from one listing, reading only candidates.
namespace registry {

// Every registry path of a repo listing, classified once.
struct RegistryIndex {
  std::vector<RegistryPath> entries;    // alias and digest paths
  std::vector<RegistryPath> unexpected; // under a 0_REGISTRY but in no known layout
  // "<compiler_dir>/MODULE_<x>" folder -> bytes of the files listed in it: folder sizes
  // are all a listing is read for beyond the registry (not every file's path).
  std::map<std::string, std::uint64_t, std::less<>> module_sizes;
  std::set<std::string> attribution_records; // add's records (layout.hpp), by path

  // Registry roots that hold at least one digest directory (optimum >= 0.4.5 layout).
  std::set<std::string> digest_roots;
};
RegistryIndex index_registry(const std::vector<hubcache::storage::RepoFile>& files);

// Total size of `<compiler_dir>/MODULE_<entry hash>/` (traced models keep their whole
// export there); nullopt when the repo has no such folder.
std::optional<std::uint64_t> module_size(const RegistryIndex& index, const std::string& compiler_dir,
                                         const std::string& entry_hash);
// Total size of these MODULE_* folders as the index lists them; nullopt when it lists
// none of them.
std::optional<std::uint64_t> folders_size(const RegistryIndex& index, const std::vector<std::string>& folders);

// The MODULE_* folders an attribution record (layout.hpp) names. A record is read as
// untrusted: only safe repo paths of the entry's own compiler dir count; a record that is
// not one gives none.
std::vector<std::string> attributed_modules(std::string_view record_text, const std::string& record_path,
                                            const std::string& compiler_dir);

// What lookup searches for: built from the model's config.json (or its diffusers
// components).
struct LookupTarget {
  std::string model_id;
  std::string model_type;
  bool multi_model = false;
  std::optional<std::string> task; // --task; unset = any task
  nlohmann::json config;           // cleaned config (single) or component configs (multi)
  // Single: the cleaned to_diff_dict() of the config (config_diff.hpp), what optimum
  // 0.2+ stores and compares; config above is the cleaned raw config.json.
  nlohmann::json diff_config;
  // False when diff_config rests on an approximation (a model type outside the
  // transformers class table...): optimum's digest may then differ, and only the raw
  // digest and the model's own alias can match. digest_caveat says why.
  bool digest_exact = true;
  std::string digest_caveat;
  std::map<std::string, std::string> digests; // arch digest -> task it was computed for
};

// Tasks optimum exports; without --task, digests are computed for each, since optimum's
// task inference needs the Python exporters.
const std::vector<std::string>& known_tasks();

// From a config.json object. Throws InvalidArgument when it has no model_type. Digests
// are computed from the config as transformers' to_diff_dict() gives it (optimum's) and
// from the raw config.json (entries written from it, e.g. by other tools). A
// text_config (multimodal models) also yields the digests optimum computes for
// text-generation from config.get_text_config().
LookupTarget make_lookup_target(const std::string& model_id, const std::optional<std::string>& task,
                                const nlohmann::json& config);
// For a model whose config cannot be read (a Hub id that is private, gone or offline):
// no architecture, so only the entries filed under its own name (alias paths of any
// model type) match.
LookupTarget make_alias_lookup_target(const std::string& model_id, const std::optional<std::string>& task);
// From a diffusers pipeline's component configs ({"unet": {...}, "text_encoder": {...}}).
LookupTarget make_multi_model_lookup_target(const std::string& model_id, const nlohmann::json& component_configs);

// The paths worth reading for `target`: its arch digest dirs, the alias dirs of its
// model id (and the digest dirs those aliases share file names with), and for legacy
// roots without digest dirs every alias of its model type. Never the whole registry.
std::vector<RegistryPath> select_candidates(const RegistryIndex& index, const LookupTarget& target,
                                            const std::optional<std::string>& compiler_version = std::nullopt);

struct LoadedEntry {
  RegistryPath location;
  CacheEntry entry;
  std::string content_hash; // sha512[:20] of the file bytes
  std::uint64_t size = 0;
};

struct LoadReport {
  std::vector<LoadedEntry> entries;
  std::vector<std::string> warnings; // malformed files, names that do not match content
};

// Opens a repository per worker: backends are not required to be thread-safe.
using RepositoryOpener = std::function<std::unique_ptr<hubcache::storage::Repository>()>;

// The index lookup needs, from listings of only the folders that can hold a match: for
// each compiler dir (filtered by `compiler_version`) and registry version, the target's
// arch-digest dirs, its model id's alias dir, and for roots without digest dirs (legacy
// layouts) every alias of its model type. A root where the model's own aliases name
// files that none of our digest dirs hold (a digest computed differently) is listed
// whole, so sibling digest dirs are still found. One level is listed at a time,
// `parallelism` listings at once, on the one (thread-safe) repository. Files at
// unexpected paths outside these folders are not seen.
RegistryIndex index_registry_for(hubcache::storage::Repository& repo, const LookupTarget& target,
                                 const std::optional<std::string>& compiler_version, unsigned parallelism = 8);

// Every file below the compiler dirs `list` reads (those matching `compiler_version`),
// one listing per compiler dir, `parallelism` at once.
std::vector<hubcache::storage::RepoFile> list_compiler_dirs(hubcache::storage::Repository& repo,
                                                            const std::optional<std::string>& compiler_version,
                                                            unsigned parallelism = 8);

// Reads and parses `paths` with up to `parallelism` workers. Malformed files and name /
// content hash mismatches become warnings (mismatching entries are still returned:
// their content is readable, only the name is off). Repository errors propagate.
LoadReport load_entries(const RepositoryOpener& open, const std::vector<RegistryPath>& paths, unsigned parallelism = 8);

enum class MatchReason { arch_digest, same_config, same_model_id };
std::string_view to_string(MatchReason reason);

// optimum 0.0.21 - 0.1.x's lookup_matched_entries: the whitelist removed from both
// configs, then only the keys both hold compared. True for registry versions in that range.
bool matches_by_key_intersection(std::string_view registry_version);
bool same_common_keys(const nlohmann::json& stored, const nlohmann::json& target);

// optimum's rules: same arch digest (>= 0.4.5), or same model type and cleaned config
// (has_same_arch, 0.2 - 0.4.4; multi-model: one config contains the other; 0.0.21 - 0.1.x:
// the keys both configs hold), or the target's own entries (same model id).
std::optional<MatchReason> match_entry(const LoadedEntry& loaded, const LookupTarget& target);

struct Filters {
  std::optional<std::string> task;
  std::optional<long long> batch_size;
  std::optional<long long> sequence_length;
  std::optional<long long> num_cores;
  std::optional<std::string> dtype;         // normalized with normalize_dtype
  std::optional<std::string> instance_type; // normalized with normalize_instance_type
  std::optional<std::string> compiler_version;
  std::optional<std::string> registry_version; // the optimum-neuron version that wrote it, exactly
  std::optional<std::string> mode;             // training | inference (optimum 0.0.19 - 0.1.x --mode); unset: all
};

// Whether an entry is a training or an inference one: the registry's mode level
// (0.0.19 - 0.1.x), else its neuron config's "mode", else inference (what optimum's
// exporters write).
std::string entry_mode(const LoadedEntry& loaded);

// optimum's INSTANCE_VALUE_MAP: inf2 and trn1n run trn1 code.
std::string normalize_instance_type(const std::string& instance_type);
// bf16 / torch.bfloat16 -> bfloat16, fp16 / f16 -> float16, fp32 -> float32.
std::string normalize_dtype(const std::string& dtype);

// The neuron-config fields filters and tables read, across entry generations
// (NxD decoders, traced models, transformers-neuronx).
struct EntryShape {
  std::optional<long long> batch_size;
  std::optional<long long> sequence_length;
  std::optional<long long> num_cores;
  std::optional<std::string> dtype;
  std::optional<std::string> instance_type;
};
EntryShape entry_shape(const CacheEntry& entry);

bool passes_filters(const LoadedEntry& loaded, const Filters& filters);

struct LookupMatch {
  LoadedEntry loaded;
  MatchReason reason = MatchReason::arch_digest;
};

// Deduplicates copies of one entry (alias + digest path of the same root) keeping the
// alias path, and sorts by compiler version, registry version, then as optimum's table:
// cores, batch size, sequence length, dtype.
std::vector<LookupMatch> deduplicate(std::vector<LookupMatch> matches);

// A whole lookup on one repo: the folders that can hold a match listed, candidates read,
// matched against `target` and filtered.
struct LookupOutcome {
  std::vector<LookupMatch> matches;      // deduplicated and sorted
  std::vector<LoadedEntry> filtered_out; // the model's entries the filters left out
  std::vector<std::string> warnings;     // malformed files, names that do not match content
  std::vector<RegistryPath> unexpected;  // registry files at paths no layout uses
};
LookupOutcome find_entries(hubcache::storage::Repository& repo, const RepositoryOpener& open,
                           const LookupTarget& target, const Filters& filters, unsigned parallelism = 8);

// Which compiled graphs the matched configurations use: add's attribution record of each
// entry (layout.hpp), else the entry's traced-model folder MODULE_<entry hash>; entries
// written by other tools name no graphs and are counted as unattributed.
struct Attribution {
  std::set<std::string> modules; // repo entry paths, neuronxcc-<v>/MODULE_...
  std::size_t attributed = 0;
  std::size_t unattributed = 0;
};
Attribution attribute_matches(hubcache::storage::Repository& repo, const std::vector<LookupMatch>& matches);

// What the repo caches for the model near a miss, from the entries that matched its
// architecture but not the filters: "batch 1, 2, 4 at sequence 4096 (8 cores)", groups
// joined with "; ", at most `limit` groups. Empty when there are none.
std::string nearby_summary(const std::vector<LoadedEntry>& entries, std::size_t limit = 6);

// Python's "{:^WIDTH}": text centred, the extra space of an odd padding on the right.
std::string centred(const std::string& text, std::size_t width);

// True when the matches were compiled for more than one task (multi-model entries have
// none and count as one): a table of them needs a task column.
bool tasks_mix(const std::vector<LookupMatch>& matches);

// optimum-neuron main's lookup output without rich: the title "Cached entries for MODEL",
// a header and one row per distinct (batch size, sequence length, tensor parallel,
// dtype, instance type), each cell centred in 16 characters, rows sorted as optimum does
// (tensor parallel, batch size, sequence length, dtype). Missing values show as "-".
// When tasks mix (optimum's own lookup has one task), a sixth column names each row's.
std::string optimum_table(const std::string& model_id, const std::vector<LookupMatch>& matches);

} // namespace registry
