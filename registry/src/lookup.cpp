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

RegistryIndex index_registry(const std::vector<hubcache::storage::RepoFile>& files)
{
  RegistryIndex index;
  // Sized for every file once: doubling a vector of tens of thousands of paths holds two
  // copies at its peak, while the unused tail of a big reservation is never touched (a
  // fresh mapping: address space, not memory).
  index.entries.reserve(files.size());
  for (const auto& file : files) {
    auto parsed = parse_registry_path(file.path);
    if (!parsed
        && file.path.find("/" + std::string(k_registry_dir) + "/" + std::string(k_attribution_version) + "/")
             != std::string::npos) {
      index.attribution_records.insert(file.path);
      continue;
    }
    if (!parsed) {
      // neuronxcc-<ver>/MODULE_<x>/...: counted for size lookups.
      auto slash = file.path.find('/');
      if (slash != std::string::npos && file.path.compare(slash + 1, 7, "MODULE_") == 0) {
        auto end = file.path.find('/', slash + 1);
        if (end != std::string::npos) {
          auto folder = std::string_view(file.path).substr(0, end);
          auto it = index.module_sizes.find(folder);
          if (it == index.module_sizes.end()) {
            it = index.module_sizes.emplace(std::string(folder), 0).first;
          }
          it->second += file.size;
        }
      }
      continue;
    }
    if (parsed->kind == RegistryPathKind::unexpected) {
      index.unexpected.push_back(std::move(*parsed));
      continue;
    }
    if (parsed->kind == RegistryPathKind::digest) {
      index.digest_roots.insert(parsed->registry_root);
    }
    index.entries.push_back(std::move(*parsed));
  }
  return index;
}

std::optional<std::uint64_t> module_size(const RegistryIndex& index, const std::string& compiler_dir,
                                         const std::string& entry_hash)
{
  return folders_size(index, {compiler_dir + "/MODULE_" + entry_hash});
}

std::optional<std::uint64_t> folders_size(const RegistryIndex& index, const std::vector<std::string>& folders)
{
  std::optional<std::uint64_t> total;
  for (const auto& folder : folders) {
    if (auto it = index.module_sizes.find(folder); it != index.module_sizes.end()) {
      total = total.value_or(0) + it->second;
    }
  }
  return total;
}

std::vector<std::string> attributed_modules(std::string_view record_text, const std::string& record_path,
                                            const std::string& compiler_dir)
{
  std::vector<std::string> modules;
  nlohmann::json record;
  try {
    record = parse_json(record_text, record_path);
  } catch (const hubcache::InvalidArgument&) {
    return modules;
  }
  if (!record.is_object() || !record.contains("modules") || !record["modules"].is_array()) {
    return modules;
  }
  const auto prefix = compiler_dir + "/MODULE_";
  for (const auto& module : record["modules"]) {
    if (module.is_string() && module.get_ref<const std::string&>().starts_with(prefix)
        && hubcache::storage::is_valid_path_in_repo(module.get_ref<const std::string&>())) {
      modules.push_back(module.get<std::string>());
    }
  }
  return modules;
}

const std::vector<std::string>& known_tasks()
{
  static const std::vector<std::string> tasks = {"text-generation",
                                                 "feature-extraction",
                                                 "fill-mask",
                                                 "text-classification",
                                                 "token-classification",
                                                 "question-answering",
                                                 "multiple-choice",
                                                 "sentence-similarity",
                                                 "text2text-generation",
                                                 "image-classification",
                                                 "object-detection",
                                                 "semantic-segmentation",
                                                 "image-segmentation",
                                                 "automatic-speech-recognition",
                                                 "audio-classification",
                                                 "audio-frame-classification",
                                                 "audio-xvector",
                                                 "zero-shot-image-classification",
                                                 "image-to-text",
                                                 "image-text-to-text",
                                                 "image-to-image",
                                                 "text-to-image",
                                                 "text-to-audio",
                                                 "depth-estimation",
                                                 "masked-im",
                                                 "mask-generation",
                                                 "text-generation-with-past"};
  return tasks;
}

namespace {

std::string model_type_or_throw(const nlohmann::json& config, const std::string& what)
{
  if (!config.is_object()) {
    throw hubcache::InvalidArgument(what + " is not a JSON object", "give a transformers config.json");
  }
  auto model_type = config.contains("model_type") ? config["model_type"] : nlohmann::json();
  if (!model_type.is_string() || model_type.get_ref<const std::string&>().empty()) {
    throw hubcache::InvalidArgument(what + " has no model_type",
                                    "lookup needs a transformers config.json or a diffusers model_index.json");
  }
  return model_type.get<std::string>();
}

} // namespace

LookupTarget make_lookup_target(const std::string& model_id, const std::optional<std::string>& task,
                                const nlohmann::json& config)
{
  LookupTarget target;
  target.model_id = model_id;
  target.model_type = model_type_or_throw(config, "the config of " + model_id);
  target.task = task;
  target.config = clean_config(config);
  target.config.erase("neuron");
  auto diff = diff_dict(config);
  target.diff_config = clean_config(diff.config);
  target.digest_exact = diff.exact;
  target.digest_caveat = diff.caveat;
  target.diff_config.erase("neuron");
  std::vector<std::optional<std::string>> tasks;
  if (task) {
    tasks.emplace_back(*task);
  } else {
    for (const auto& known : known_tasks()) {
      tasks.emplace_back(known);
    }
    tasks.emplace_back(std::nullopt);
  }
  for (const auto& candidate : tasks) {
    for (const auto* cleaned : {&target.diff_config, &target.config}) {
      target.digests.emplace(single_model_arch_digest(target.model_type, candidate, *cleaned), candidate.value_or(""));
    }
    // optimum hashes the loaded config, whose id2label keys are ints (ordered as numbers).
    target.digests.emplace(single_model_arch_digest(target.model_type, candidate, target.diff_config, true),
                           candidate.value_or(""));
  }
  // optimum builds text-generation entries from config.get_text_config(): the text
  // sub-config as the composite class builds it.
  if (!task || *task == "text-generation") {
    if (auto text = text_config_diff_dict(config)) {
      auto text_diff = clean_config(text->config);
      target.digests.emplace(single_model_arch_digest(text->model_type, std::string("text-generation"), text_diff),
                             "text-generation");
      target.digests.emplace(
        single_model_arch_digest(text->model_type, std::string("text-generation"), text_diff, true), "text-generation");
      // entries written from the raw text config; find(), as operator[] of a const json
      // reads freed memory when the key is missing (the text config may be a class default)
      if (auto raw = config.find("text_config"); raw != config.end() && raw->is_object()) {
        target.digests.emplace(
          single_model_arch_digest(text->model_type, std::string("text-generation"), clean_config(*raw)),
          "text-generation");
      }
    }
  }
  return target;
}

LookupTarget make_alias_lookup_target(const std::string& model_id, const std::optional<std::string>& task)
{
  LookupTarget target;
  target.model_id = model_id;
  target.task = task;
  target.config = nullptr;
  return target;
}

LookupTarget make_multi_model_lookup_target(const std::string& model_id, const nlohmann::json& component_configs)
{
  LookupTarget target;
  target.model_id = model_id;
  target.multi_model = true;
  target.model_type = multi_model_type(component_configs);
  target.config = nlohmann::json::object();
  for (const auto& [name, component] : component_configs.items()) {
    if (!is_unchecked_component(name)) {
      auto cleaned = clean_config(component);
      if (cleaned.is_object()) { // a component's config.json may hold anything
        cleaned.erase("neuron");
      }
      target.config[name] = cleaned;
    }
  }
  target.digests.emplace(multi_model_arch_digest(target.model_type, component_configs), "");
  return target;
}

std::vector<RegistryPath> select_candidates(const RegistryIndex& index, const LookupTarget& target,
                                            const std::optional<std::string>& compiler_version)
{
  std::vector<RegistryPath> selected;
  std::set<std::string> selected_paths;
  // (registry root, file hash) of the target's own aliases: the digest dirs holding the
  // same file names are its architecture's dirs even when our digest differs.
  std::set<std::pair<std::string, std::string>> alias_hashes;
  auto take = [&](const RegistryPath& path) {
    if (selected_paths.insert(path.path).second) {
      selected.push_back(path);
    }
  };
  auto in_scope = [&](const RegistryPath& path) {
    return !compiler_version || compiler_version_matches(path.compiler_version, *compiler_version);
  };
  for (const auto& path : index.entries) {
    if (!in_scope(path)) {
      continue;
    }
    if (path.kind == RegistryPathKind::digest) {
      if (target.digests.count(path.arch_digest) != 0U) {
        take(path);
      }
      continue;
    }
    if (target.model_type.empty()) { // config unknown: the entries filed under its name only
      if (path.model_id == target.model_id) {
        take(path);
        alias_hashes.emplace(path.registry_root, path.file_hash);
      }
      continue;
    }
    if (path.model_type != target.model_type) {
      continue;
    }
    if (path.model_id == target.model_id) {
      take(path);
      alias_hashes.emplace(path.registry_root, path.file_hash);
    } else if (index.digest_roots.count(path.registry_root) == 0U) {
      take(path); // legacy root: no digest dirs, so compare configs like optimum < 0.4.5
    }
  }
  if (!alias_hashes.empty()) {
    std::set<std::pair<std::string, std::string>> sibling_dirs;
    for (const auto& path : index.entries) {
      if (path.kind == RegistryPathKind::digest && alias_hashes.count({path.registry_root, path.file_hash}) != 0U) {
        sibling_dirs.emplace(path.registry_root, path.arch_digest);
      }
    }
    for (const auto& path : index.entries) {
      if (path.kind == RegistryPathKind::digest && in_scope(path)
          && sibling_dirs.count({path.registry_root, path.arch_digest}) != 0U) {
        take(path);
      }
    }
  }
  return selected;
}

namespace {

// Runs `listing(i)` for i in [0, count) on up to `parallelism` threads, concatenating
// the results in index order.
template <typename Result>
std::vector<Result> parallel_listings(std::size_t count, unsigned parallelism,
                                      const std::function<std::vector<Result>(std::size_t)>& listing)
{
  std::vector<std::vector<Result>> parts(count);
  hubcache::util::parallel_for(count, parallelism, [&](std::size_t i) { parts[i] = listing(i); });
  std::vector<Result> all;
  for (auto& part : parts) {
    std::move(part.begin(), part.end(), std::back_inserter(all));
  }
  return all;
}

std::vector<std::string> compiler_dirs(hubcache::storage::Repository& repo, const std::optional<std::string>& version)
{
  std::vector<std::string> dirs;
  for (auto& name : repo.list_folders("")) {
    if (name.starts_with(k_compiler_dir_prefix)
        && (!version || compiler_version_matches(name.substr(k_compiler_dir_prefix.size()), *version))) {
      dirs.push_back(std::move(name));
    }
  }
  return dirs;
}

} // namespace

std::vector<hubcache::storage::RepoFile> list_compiler_dirs(hubcache::storage::Repository& repo,
                                                            const std::optional<std::string>& compiler_version,
                                                            unsigned parallelism)
{
  auto dirs = compiler_dirs(repo, compiler_version);
  return parallel_listings<hubcache::storage::RepoFile>(dirs.size(), parallelism,
                                                        [&](std::size_t i) { return repo.list_files(dirs[i]); });
}

RegistryIndex index_registry_for(hubcache::storage::Repository& repo, const LookupTarget& target,
                                 const std::optional<std::string>& compiler_version, unsigned parallelism)
{
  // Level 1 and 2: compiler dirs, then their registry versions.
  auto dirs = compiler_dirs(repo, compiler_version);
  auto roots = parallel_listings<std::string>(dirs.size(), parallelism, [&](std::size_t i) {
    auto registry = dirs[i] + "/" + std::string(k_registry_dir);
    std::vector<std::string> found;
    for (const auto& version : repo.list_folders(registry)) {
      found.push_back(registry + "/" + version);
    }
    return found;
  });
  // Level 3: what each registry version holds decides which folders to list whole.
  struct Root {
    std::string path;
    bool has_digest_dirs = false;
    std::vector<std::string> wanted;
  };
  std::vector<Root> described(roots.size());
  hubcache::util::parallel_for(roots.size(), parallelism, [&](std::size_t i) {
    auto& root = described[i];
    root.path = roots[i];
    auto children = repo.list_folders(root.path);
    std::set<std::string> names(children.begin(), children.end());
    for (const auto& name : children) {
      if (is_arch_digest(name)) {
        root.has_digest_dirs = true;
        if (target.digests.count(name) != 0U) {
          root.wanted.push_back(root.path + "/" + name);
        }
      }
    }
    if (target.model_type.empty()) {
      // Config unknown: the model's alias folder under every model type of the root.
      for (const auto& name : children) {
        if (!is_arch_digest(name) && name != "inference" && name != "training") {
          root.wanted.push_back(root.path + "/" + name + "/" + target.model_id);
        }
      }
      for (const char* mode : {"inference", "training"}) {
        if (names.count(mode) != 0U) {
          for (const auto& type : repo.list_folders(root.path + "/" + mode)) {
            root.wanted.push_back(root.path + "/" + mode + "/" + type + "/" + target.model_id);
          }
        }
      }
      return;
    }
    if (names.count(target.model_type) != 0U) {
      // Digest roots: only the model's own aliases; legacy roots: every alias of its type.
      root.wanted.push_back(root.path + "/" + target.model_type
                            + (root.has_digest_dirs ? "/" + target.model_id : std::string()));
    }
    for (const char* mode : {"inference", "training"}) {
      if (names.count(mode) != 0U) {
        root.wanted.push_back(root.path + "/" + mode + "/" + target.model_type);
      }
    }
  });
  std::vector<std::string> folders;
  for (const auto& root : described) {
    folders.insert(folders.end(), root.wanted.begin(), root.wanted.end());
  }
  // Level 4: the candidate folders, whole.
  auto files = parallel_listings<hubcache::storage::RepoFile>(folders.size(), parallelism, [&](std::size_t i) {
    if (!hubcache::storage::is_valid_path_in_repo(folders[i])) {
      return std::vector<hubcache::storage::RepoFile>{};
    }
    return repo.list_files(folders[i]);
  });
  auto index = index_registry(files);

  // A root where the model's aliases name files our digest dirs lack: its digest was
  // computed another way, so its sibling digest dirs are found by listing the root.
  std::set<std::string> listed_digest_files; // "<root>/<hash>"
  std::set<std::string> roots_to_list;
  for (const auto& path : index.entries) {
    if (path.kind == RegistryPathKind::digest) {
      listed_digest_files.insert(path.registry_root + "/" + path.file_hash);
    }
  }
  for (const auto& path : index.entries) {
    if (path.kind == RegistryPathKind::alias && path.model_id == target.model_id
        && listed_digest_files.count(path.registry_root + "/" + path.file_hash) == 0U) {
      for (const auto& root : described) {
        if (root.path == path.registry_root && root.has_digest_dirs) {
          roots_to_list.insert(root.path);
        }
      }
    }
  }
  if (!roots_to_list.empty()) {
    std::vector<std::string> whole(roots_to_list.begin(), roots_to_list.end());
    auto more = parallel_listings<hubcache::storage::RepoFile>(
      whole.size(), parallelism, [&](std::size_t i) { return repo.list_files(whole[i]); });
    std::set<std::string> seen;
    for (const auto& file : files) {
      seen.insert(file.path);
    }
    for (auto& file : more) {
      if (seen.insert(file.path).second) {
        files.push_back(std::move(file));
      }
    }
    index = index_registry(files);
  }
  for (const auto& root : described) {
    if (root.has_digest_dirs) {
      index.digest_roots.insert(root.path);
    }
  }
  return index;
}

LoadReport load_entries(const RepositoryOpener& open, const std::vector<RegistryPath>& paths, unsigned parallelism)
{
  std::vector<std::optional<LoadedEntry>> loaded(paths.size());
  std::vector<std::string> warnings(paths.size());
  // Reads may run from several threads on one repository (storage/repository.hpp).
  auto repo = open();
  hubcache::util::parallel_for(paths.size(), std::max(1U, parallelism), [&](std::size_t i) {
    const auto& location = paths[i];
    std::string text;
    try {
      text = repo->read_file(location.path);
    } catch (const hubcache::EntryNotFound&) {
      warnings[i] = location.path + ": listed but gone when read (a concurrent change?); skipped";
      return;
    } catch (const hubcache::InvalidArgument& error) { // too big to be a registry file
      warnings[i] = std::string(error.what()) + "; skipped";
      return;
    } catch (const hubcache::IoError& error) { // unreadable here: the rest of the repo still lists
      warnings[i] = std::string(error.what()) + "; skipped";
      return;
    }
    auto content_hash = hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha512, text).substr(0, 20);
    try {
      std::optional<std::string> legacy_id;
      if (location.kind == RegistryPathKind::alias) {
        legacy_id = location.model_id;
      }
      auto entry = CacheEntry::deserialize(text, location.path, legacy_id);
      if (content_hash != location.file_hash) {
        warnings[i] = location.path + ": file name does not match the hash of its content (" + content_hash
                      + "); entry used anyway";
      }
      loaded[i] = LoadedEntry{location, std::move(entry), content_hash, text.size()};
    } catch (const hubcache::InvalidArgument& error) {
      warnings[i] = std::string(error.what()) + "; skipped";
    }
  });
  LoadReport report;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (loaded[i]) {
      report.entries.push_back(std::move(*loaded[i]));
    }
    if (!warnings[i].empty()) {
      report.warnings.push_back(std::move(warnings[i]));
    }
  }
  return report;
}

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

namespace {

std::string join_numbers(const std::set<long long>& values)
{
  std::string out;
  for (auto value : values) {
    out += (out.empty() ? "" : ", ") + std::to_string(value);
  }
  return out;
}

std::string text_of(const std::optional<long long>& value)
{
  return value ? std::to_string(*value) : "-";
}

} // namespace

std::string centred(const std::string& text, std::size_t width)
{
  // The extra space of an odd padding goes to the right, as Python's does.
  if (text.size() >= width) {
    return text;
  }
  auto padding = width - text.size();
  return std::string(padding / 2, ' ') + text + std::string(padding - padding / 2, ' ');
}

std::string nearby_summary(const std::vector<LoadedEntry>& entries, std::size_t limit)
{
  // (sequence length, cores) -> batch sizes
  std::map<std::pair<long long, long long>, std::set<long long>> groups;
  for (const auto& loaded : entries) {
    auto shape = entry_shape(loaded.entry);
    if (shape.batch_size) {
      groups[{shape.sequence_length.value_or(-1), shape.num_cores.value_or(-1)}].insert(*shape.batch_size);
    }
  }
  std::string text;
  std::size_t shown = 0;
  for (const auto& [key, batches] : groups) {
    if (shown == limit) {
      text += "; ...";
      break;
    }
    const auto& [sequence, cores] = key;
    text += (text.empty() ? "" : "; ") + std::string("batch ") + join_numbers(batches);
    if (sequence >= 0) {
      text += " at sequence " + std::to_string(sequence);
    }
    if (cores >= 0) {
      text += " (" + std::to_string(cores) + (cores == 1 ? " core)" : " cores)");
    }
    ++shown;
  }
  return text;
}

bool tasks_mix(const std::vector<LookupMatch>& matches)
{
  std::set<std::string> tasks;
  for (const auto& match : matches) {
    tasks.insert(match.loaded.entry.task.value_or(""));
  }
  return tasks.size() > 1;
}

std::string optimum_table(const std::string& model_id, const std::vector<LookupMatch>& matches)
{
  const bool with_task = tasks_mix(matches);
  struct Row {
    std::optional<long long> tp, batch, sequence;
    std::string dtype, instance, task;
    std::vector<std::string> cells(bool with_task) const
    {
      std::vector<std::string> cells = {text_of(batch), text_of(sequence), text_of(tp), dtype, instance};
      if (with_task) {
        cells.push_back(task);
      }
      return cells;
    }
  };
  std::vector<Row> rows;
  std::set<std::vector<std::string>> seen;
  for (const auto& match : matches) {
    auto shape = entry_shape(match.loaded.entry);
    Row row{shape.num_cores,
            shape.batch_size,
            shape.sequence_length,
            shape.dtype.value_or("-"),
            shape.instance_type.value_or("-"),
            match.loaded.entry.task.value_or("-")};
    if (seen.insert(row.cells(with_task)).second) {
      rows.push_back(std::move(row));
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::make_tuple(a.tp.value_or(0), a.batch.value_or(0), a.sequence.value_or(0), a.dtype, a.task)
           < std::make_tuple(b.tp.value_or(0), b.batch.value_or(0), b.sequence.value_or(0), b.dtype, b.task);
  });
  std::string text = "Cached entries for " + model_id + "\n";
  std::vector<std::string> headers = {"batch size", "sequence length", "tensor parallel", "dtype", "instance type"};
  if (with_task) {
    headers.emplace_back("task");
  }
  for (const auto& header : headers) {
    text += centred(header, 16);
  }
  text += "\n";
  for (const auto& row : rows) {
    for (const auto& cell : row.cells(with_task)) {
      text += centred(cell, 16);
    }
    text += "\n";
  }
  return text;
}

} // namespace registry
