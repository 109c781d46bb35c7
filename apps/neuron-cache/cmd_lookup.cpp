// `neuron-cache lookup MODEL`: which compiled configurations of a model the cache repo
// holds, across every compiler and registry version (optimum only sees its own).
#include "commands.hpp"
#include "lookup_optimum.hpp"

#include <hubcache/error.hpp>
#include <hubcache/hub/api.hpp>
#include <hubcache/storage/repo_choice.hpp>
#include <hubcache/util/environment.hpp>
#include <registry/json_text.hpp>
#include <registry/lookup.hpp>
#include <registry/model_source.hpp>

#include <sstream>

namespace neuron_cache {

std::vector<std::string> hub_model_files(Invocation& invocation, const std::string& model)
{
  hubcache::hub::HubApi api(hubcache::hub::HubConfig::from_environment(invocation.env(), invocation.value("token")));
  std::vector<std::string> files;
  for (auto& entry : api.list_tree(model, "main", "", true)) {
    if (entry.type == "file") {
      files.push_back(std::move(entry.path));
    }
  }
  return files;
}

registry::ModelConfigs hub_pipeline_configs(Invocation& invocation, const std::string& model)
{
  // optimum hashes every */config.json of the repo, keyed by its folder's name, whether
  // model_index.json lists the folder or not (SDXL base's vae_1_0).
  constexpr std::size_t k_max_components = 64; // a pipeline has a handful
  registry::ModelConfigs configs;
  configs.multi_model = true;
  configs.origin = model + "/model_index.json";
  configs.components = nlohmann::json::object();
  auto token = invocation.value("token");
  for (const auto& path : hub_model_files(invocation, model)) {
    if (!path.ends_with("/config.json")) {
      continue;
    }
    auto folder = path.substr(0, path.size() - std::string_view("/config.json").size());
    auto component = folder.substr(folder.rfind('/') + 1);
    if (configs.components.size() == k_max_components) {
      throw hubcache::InvalidArgument(model + " has more than " + std::to_string(k_max_components)
                                      + " component folders with a config.json: not a diffusers pipeline");
    }
    configs.components[component] = registry::parse_json(
      hubcache::hub::download_hub_file_text(invocation.env(), token, model, path), model + "/" + path);
  }
  return configs;
}

namespace {

// The model's configs, or nullopt when MODEL is a Hub id whose config cannot be fetched
// (private, gone, offline): the lookup then falls back to the entries filed under its name.
std::optional<registry::ModelConfigs> load_model_configs(Invocation& invocation, const std::string& model)
{
  auto local = hubcache::util::expand_user(model, invocation.env());
  if (auto configs = registry::read_local_model(local)) {
    return configs;
  }
  bool looks_like_path = model.empty() || model.front() == '/' || model.front() == '.' || model.front() == '~';
  if (looks_like_path || !hubcache::storage::is_valid_hub_repo_id(model)) {
    throw hubcache::InvalidArgument("model '" + model + "' is neither an existing local path nor a Hub model id",
                                    "give a model directory, a config.json file, or a Hub id such as org/name");
  }
  auto token = invocation.value("token");
  auto unreadable = [&](const std::string& why) {
    invocation.out().warning("cannot read the config of " + model + " (" + why
                             + "); showing only the entries filed under its name");
    return std::optional<registry::ModelConfigs>();
  };
  try {
    return registry::model_configs_from_text(
      hubcache::hub::download_hub_file_text(invocation.env(), token, model, "config.json"), model + "/config.json");
  } catch (const hubcache::EntryNotFound&) {
  } catch (const hubcache::RepoNotFound&) {
    return unreadable("not found on the Hub, or private and no token was given");
  } catch (const hubcache::AuthError& error) {
    return unreadable(error.what());
  } catch (const hubcache::RemoteError& error) {
    return unreadable(error.what());
  }
  // A diffusers pipeline: model_index.json names the components, each with a config.json.
  std::string index_text;
  try {
    index_text = hubcache::hub::download_hub_file_text(invocation.env(), token, model, "model_index.json");
  } catch (const hubcache::EntryNotFound&) {
    return unreadable("it has neither config.json nor model_index.json");
  }
  registry::parse_json(index_text, model + "/model_index.json"); // must be valid, as for a local pipeline
  return hub_pipeline_configs(invocation, model);
}

} // namespace

registry::LookupTarget lookup_target_for(Invocation& invocation, const std::string& model,
                                         const std::optional<std::string>& task)
{
  auto configs = load_model_configs(invocation, model);
  return configs ? registry::make_lookup_target(registry::model_id_of(model, *configs), task, *configs)
                 : registry::make_alias_lookup_target(model, task);
}

registry::Filters shape_filters(Invocation& invocation)
{
  registry::Filters filters;
  filters.task = invocation.value("task");
  filters.batch_size = invocation.integer("batch-size", 1);
  filters.sequence_length = invocation.integer("sequence-length", 1);
  filters.num_cores = invocation.integer("num-cores", 1);
  return filters;
}

nlohmann::json lookup_entry_json(const registry::LoadedEntry& loaded, registry::MatchReason reason)
{
  const auto& entry = loaded.entry;
  const auto& location = loaded.location;
  auto shape = registry::entry_shape(entry);
  return {{"model_id", entry.model_id},
          {"task", optional_json(entry.task)},
          {"model_type", entry.model_type},
          {"compiler_version", location.compiler_version},
          {"registry_version", location.registry_version},
          {"path", location.path},
          {"hash", loaded.content_hash},
          {"matched_by", std::string(registry::to_string(reason))},
          {"batch_size", optional_json(shape.batch_size)},
          {"sequence_length", optional_json(shape.sequence_length)},
          {"num_cores", optional_json(shape.num_cores)},
          {"dtype", optional_json(shape.dtype)},
          {"instance_type", optional_json(shape.instance_type)},
          {"neuron", entry.neuron_config()}};
}

namespace {

registry::Filters lookup_filters(Invocation& invocation)
{
  auto filters = shape_filters(invocation);
  filters.dtype = invocation.value("dtype");
  filters.instance_type = invocation.value("instance-type");
  filters.compiler_version = invocation.value("compiler-version");
  filters.registry_version = invocation.value("registry-version");
  if (auto mode = invocation.value("mode"); mode && *mode != "all") {
    filters.mode = *mode;
  }
  return filters;
}

// --table: one row per match (with the task when several tasks mix).
Output::Table matches_table(const std::vector<registry::LookupMatch>& matches, const std::string& model)
{
  Output::Table table;
  table.headers = {"BATCH SIZE", "SEQUENCE LENGTH", "CORES", "DTYPE", "INSTANCE TYPE", "COMPILER VERSION", "MODEL"};
  table.right_aligned = {true, true, true, false, false, false, false};
  const bool with_task = registry::tasks_mix(matches);
  if (with_task) { // rows of several tasks would otherwise look like duplicates
    table.headers.emplace_back("TASK");
    table.right_aligned.push_back(false);
  }
  for (const auto& match : matches) {
    auto shape = registry::entry_shape(match.loaded.entry);
    table.rows.push_back({optional_text(shape.batch_size), optional_text(shape.sequence_length),
                          optional_text(shape.num_cores), shape.dtype.value_or("-"), shape.instance_type.value_or("-"),
                          match.loaded.location.compiler_version, match.loaded.entry.model_id});
    if (with_task) {
      table.rows.back().push_back(match.loaded.entry.task.value_or("-"));
    }
  }
  table.footer = count_of(matches.size(), "cached entry", "cached entries") + " for " + model;
  return table;
}

// optimum-cli <= 0.3's format: a header, then one "key: value" block per entry.
std::string matches_blocks(const std::vector<registry::LookupMatch>& matches, const std::string& model)
{
  std::ostringstream human;
  human << "*** " << count_of(matches.size(), "entry", "entries") << " found in cache for " << model << " ***\n";
  for (const auto& match : matches) {
    human << "\n";
    auto neuron = match.loaded.entry.neuron_config();
    if (neuron.is_object()) {
      for (const auto& [key, value] : neuron.items()) {
        human << key << ": " << registry::python_str(value) << "\n";
      }
    }
  }
  return human.str();
}

int run_lookup(Invocation& invocation)
{
  if (invocation.has("optimum")) {
    return run_optimum_lookup(invocation);
  }
  auto model = *invocation.positional("MODEL");
  auto filters = lookup_filters(invocation);
  auto target = lookup_target_for(invocation, model, filters.task);
  if (!target.digest_exact) {
    invocation.out().detail("the architecture digest of " + model + " may differ from optimum's ("
                            + target.digest_caveat + "): entries of the same architecture under another name may "
                            + "be missed");
  }

  auto resolved = resolve_repo(invocation);
  auto repo = open_existing_repository(invocation, resolved);
  auto workers = static_cast<unsigned>(max_workers(invocation));
  // Only the folders that can hold a match are listed, several at once.
  auto outcome = registry::find_entries(
    *repo, [&] { return open_repository(invocation, resolved.spec); }, target, filters, workers);
  warn_skipped_paths(invocation.out(), *repo);
  for (const auto& warning : outcome.warnings) {
    invocation.out().warning(warning);
  }
  if (!outcome.unexpected.empty()) {
    invocation.out().warning(count_of(outcome.unexpected.size(), "registry file")
                             + " ignored at unexpected paths, e.g. " + outcome.unexpected.front().path + " ("
                             + outcome.unexpected.front().problem + ")");
  }
  const auto& matches = outcome.matches;
  nlohmann::json entries = nlohmann::json::array();
  std::string quiet;
  for (const auto& match : matches) {
    entries.push_back(lookup_entry_json(match.loaded, match.reason));
    quiet += match.loaded.location.path + "\n";
  }
  nlohmann::json data = {{"model", model}, {"repo", resolved.spec.canonical()}, {"entries", std::move(entries)}};

  if (matches.empty()) {
    // What the repo caches for the model beside what was asked: in the JSON too (null: nothing).
    auto nearby = registry::nearby_summary(outcome.filtered_out);
    data["nearby"] = nearby.empty() ? nlohmann::json(nullptr) : nlohmann::json(nearby);
    invocation.out().result("No cached entries found for " + model + ".", data, "");
    if (!nearby.empty()) {
      invocation.out().info("cached for " + model + ": " + nearby);
    }
    return k_exit_not_found;
  }
  if (invocation.has("table") && invocation.out().is_human()) {
    invocation.out().table(matches_table(matches, model), data, 0);
  } else if (!invocation.has("blocks")) { // optimum main's table
    invocation.out().result(registry::optimum_table(model, matches), data, quiet);
  } else {
    invocation.out().result(matches_blocks(matches, model), data, quiet);
  }
  return k_exit_ok;
}

// lookup's options, in help order: the filters, how to answer, then the repo's.
std::vector<OptionSpec> lookup_options()
{
  std::vector<OptionSpec> options = {
    {"", "task", ValueKind::text, "TASK", "Only entries compiled for this task (e.g. text-generation).", {}, {}},
    {"", "batch-size", ValueKind::integer, "N", "Only entries with this batch size.", {}, {}},
    {"", "sequence-length", ValueKind::integer, "N", "Only entries with this sequence length.", {}, {}},
    {"",
     "num-cores",
     ValueKind::integer,
     "N",
     "Only entries using this many Neuron cores (tensor parallel degree).",
     {},
     {"tensor-parallel-size"}},
    {"",
     "dtype",
     ValueKind::text,
     "DTYPE",
     "Only entries with this dtype (bfloat16, float16, bf16, fp16...).",
     {},
     {"auto-cast-type"}},
    {"",
     "instance-type",
     ValueKind::choice,
     "TYPE",
     "Only entries for this instance type.",
     {"trn1", "inf2", "trn1n", "trn2"},
     {}},
    // -v as in list (optimum-cli's list -v): the compiler version, not --verbose.
    {"v",
     "compiler-version",
     ValueKind::text,
     "VERSION",
     "Only entries of this neuronx-cc version, or a prefix of it at a '.' or '+' (2.21).",
     {},
     {}},
    {"",
     "registry-version",
     ValueKind::text,
     "VERSION",
     "Only entries written by this optimum-neuron version (the 0_REGISTRY/<version> folder).",
     {},
     {}},
    {"",
     "optimum",
     ValueKind::flag,
     "",
     "Give optimum-neuron main's own answer: its task, compiler pin and registry version only, exit 0 on a miss.",
     {},
     {}},
    {"",
     "mode",
     ValueKind::choice,
     "MODE",
     "Only training or inference entries (optimum 0.0.19 - 0.1.x); default all.",
     {"training", "inference", "all"},
     {}},
    {"",
     "table",
     ValueKind::flag,
     "",
     "Print a wide table (compiler version and model too) instead of optimum's.",
     {},
     {}},
    {"",
     "blocks",
     ValueKind::flag,
     "",
     "Print optimum <= 0.3's '*** N entries found ***' key: value blocks instead of its table.",
     {},
     {}},
    repo_id_option(),
    max_workers_option(),
    token_option(),
  };
  for (auto& option : aws_options()) {
    options.push_back(std::move(option));
  }
  return options;
}

} // namespace

CommandSpec make_lookup_command()
{
  CommandSpec command;
  command.name = "lookup";
  command.summary = "Show the cached compiled configurations of a model (exit 3 when there are none).";
  command.description =
    "MODEL is a local model directory (config.json, or model_index.json for diffusers), a config.json\n"
    "file, or a Hub model id. Every compiler and registry version in the repo is searched; only the\n"
    "registry files that can match are read. Filters compare exactly (--compiler-version: the version\n"
    "or a prefix ending at '.' or '+', e.g. 2.21); instance types inf2 and trn1n\n"
    "count as trn1 on both sides, as optimum-neuron compiles them. Exit status: 0 when something\n"
    "matches, 3 when nothing does, 1 on errors, 2 on usage errors.\n"
    "\n"
    "--optimum answers as optimum-cli neuron cache lookup (optimum-neuron main, 0.4.6.dev4) does, for\n"
    "scripts that compare: the task from --task or the Hub (a local directory needs --task), the\n"
    "first compiler dir starting with neuronxcc-2.21.33363.0 (-v picks another pin), registry\n"
    "version 0.4.6.dev4 (--registry-version picks another), one arch digest, filters on raw values\n"
    "(--num-cores compares tp_degree, --instance-type the stored target), its table, and exit 0 on\n"
    "a miss; where optimum-cli fails, exit 1.";
  command.positionals = {{"MODEL", ValueKind::model, "Model directory, config.json file or Hub model id.", true}};
  command.options = lookup_options();
  command.examples = {"neuron-cache lookup ./Llama-3.1-8B-Instruct",
                      "neuron-cache lookup ./config.json --batch-size 4 --instance-type trn1 --table",
                      "neuron-cache lookup ./bert-base-uncased --json --repo-id /fsx/neuron-cache",
                      "neuron-cache lookup ./model -q || echo 'not cached: compile it'"};
  command.run = run_lookup;
  return command;
}

} // namespace neuron_cache
