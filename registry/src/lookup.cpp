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

namespace {

// A registry version folder (`neuronxcc-<v>/0_REGISTRY/<rv>`) and which of its folders
// may hold the target's entries.
struct RegistryRoot {
  std::string path;
  bool has_digest_dirs = false;
  std::vector<std::string> wanted;
};

// What a registry root holds decides which folders to list whole: the target's digest
// folders, and its alias folders (under every model type when the config is unknown).
RegistryRoot describe_root(hubcache::storage::Repository& repo, std::string path, const LookupTarget& target)
{
  RegistryRoot root;
  root.path = std::move(path);
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
    return root;
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
  return root;
}

// A root where the model's aliases name files our digest dirs lack: its digest was
// computed another way, so its sibling digest dirs are found by listing the root whole.
std::vector<std::string> roots_to_list_whole(const RegistryIndex& index, const std::vector<RegistryRoot>& roots,
                                             const LookupTarget& target)
{
  std::set<std::string> listed_digest_files; // "<root>/<hash>"
  std::set<std::string> whole;
  for (const auto& path : index.entries) {
    if (path.kind == RegistryPathKind::digest) {
      listed_digest_files.insert(path.registry_root + "/" + path.file_hash);
    }
  }
  for (const auto& path : index.entries) {
    if (path.kind == RegistryPathKind::alias && path.model_id == target.model_id
        && listed_digest_files.count(path.registry_root + "/" + path.file_hash) == 0U) {
      for (const auto& root : roots) {
        if (root.path == path.registry_root && root.has_digest_dirs) {
          whole.insert(root.path);
        }
      }
    }
  }
  return {whole.begin(), whole.end()};
}

} // namespace

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
  std::vector<RegistryRoot> described(roots.size());
  hubcache::util::parallel_for(roots.size(), parallelism,
                               [&](std::size_t i) { described[i] = describe_root(repo, roots[i], target); });
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
  if (auto whole = roots_to_list_whole(index, described, target); !whole.empty()) {
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

} // namespace registry
