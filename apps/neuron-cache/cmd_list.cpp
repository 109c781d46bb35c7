// `neuron-cache list [REPO]`: the models a cache repo holds, or every configuration of one.
#include "commands.hpp"

#include <hubcache/error.hpp>
#include <hubcache/storage/repo_choice.hpp>
#include <hubcache/util/environment.hpp>
#include <hubcache/util/fs.hpp>
#include <registry/catalog.hpp>
#include <registry/legacy_registry.hpp>

#include <filesystem>

namespace neuron_cache {

namespace {

std::string join(const std::set<std::string>& values)
{
  std::string out;
  for (const auto& value : values) {
    out += (out.empty() ? "" : ", ") + value;
  }
  return out;
}

std::string optional_text(const std::optional<long long>& value)
{
  return value ? std::to_string(*value) : "-";
}

nlohmann::json optional_json(const std::optional<long long>& value)
{
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// Shell completion offers these ids; a failure here must never fail `list`.
void remember_models_for_completion(const Invocation& invocation, const registry::Catalog& catalog)
{
  try {
    const auto& env = invocation.env();
    std::filesystem::path cache_home;
    if (auto xdg = env.get_non_empty("XDG_CACHE_HOME")) {
      cache_home = *xdg;
    } else if (auto home = env.get_non_empty("HOME")) {
      cache_home = std::filesystem::path(*home) / ".cache";
    } else {
      return;
    }
    auto directory = cache_home / "neuron-cache" / "completion";
    std::filesystem::create_directories(directory);
    std::string content;
    for (const auto& model : catalog.models) {
      content += model.model_id + "\n";
    }
    hubcache::util::write_file_atomically(directory / "models.txt", content);
  } catch (const std::exception&) {
  }
}

int run_list(Invocation& invocation)
{
  auto positional = invocation.positional("REPO");
  auto option = invocation.value("repo-id");
  if (positional && option && *positional != *option) {
    throw UsageError("give the repo once, either as REPO or with --repo-id");
  }
  auto resolved = positional ? repo_from_argument(invocation, *positional, "REPO") : resolve_repo(invocation);
  const auto& spec = resolved.spec;
  auto repo = open_existing_repository(invocation, resolved);
  registry::CatalogOptions options;
  options.compiler_version = invocation.value("version");
  options.model_id = invocation.value("model");
  options.parallelism = static_cast<unsigned>(max_workers(invocation));
  options.legacy_registry = registry::read_legacy_registry(*repo); // optimum <= 0.0.18
  // One listing per compiler dir, several at once.
  auto index =
    registry::index_registry(registry::list_compiler_dirs(*repo, options.compiler_version, options.parallelism));
  warn_skipped_paths(invocation.out(), *repo);
  auto catalog = registry::build_catalog(
    index, [&] { return open_repository(invocation, spec); }, options);
  for (const auto& warning : catalog.warnings) {
    invocation.out().warning(warning);
  }
  if (!index.unexpected.empty()) {
    invocation.out().warning(count_of(index.unexpected.size(), "registry file") + " ignored at unexpected paths, e.g. "
                             + index.unexpected.front().path + " (" + index.unexpected.front().problem + ")");
  }

  std::set<std::string> compilers;
  for (const auto& configuration : catalog.configurations) {
    compilers.insert(configuration.compiler_version);
  }
  std::string scope = options.compiler_version ? " for neuronx-cc " + *options.compiler_version : "";

  Output::Table table;
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json data = {{"repo", spec.canonical()},
                         {"compiler_version", options.compiler_version ? nlohmann::json(*options.compiler_version)
                                                                       : nlohmann::json(nullptr)}};
  if (options.model_id) {
    table.headers = {"COMPILER VERSION", "REGISTRY", "TASK", "BATCH SIZE", "SEQUENCE LENGTH", "CORES", "DTYPE",
                     "INSTANCE TYPE",    "SIZE",     "ENTRY"};
    table.right_aligned = {false, false, false, true, true, true, false, false, true, false};
    for (const auto& configuration : catalog.configurations) {
      registry::EntryShape shape;
      nlohmann::json neuron = nullptr;
      std::optional<std::string> task;
      if (configuration.entry) {
        shape = registry::entry_shape(*configuration.entry);
        neuron = configuration.entry->neuron_config();
        task = configuration.entry->task;
      }
      table.rows.push_back({configuration.compiler_version, configuration.registry_version, task.value_or("-"),
                            optional_text(shape.batch_size), optional_text(shape.sequence_length),
                            optional_text(shape.num_cores), shape.dtype.value_or("-"),
                            shape.instance_type.value_or("-"),
                            configuration.size ? human_size(*configuration.size) : "-", configuration.paths.front()});
      rows.push_back(
        {{"model_id", configuration.model_id},
         {"model_type", configuration.model_type},
         {"compiler_version", configuration.compiler_version},
         {"registry_version", configuration.registry_version},
         {"task", task ? nlohmann::json(*task) : nlohmann::json(nullptr)},
         {"batch_size", optional_json(shape.batch_size)},
         {"sequence_length", optional_json(shape.sequence_length)},
         {"num_cores", optional_json(shape.num_cores)},
         {"dtype", shape.dtype ? nlohmann::json(*shape.dtype) : nlohmann::json(nullptr)},
         {"instance_type", shape.instance_type ? nlohmann::json(*shape.instance_type) : nlohmann::json(nullptr)},
         {"size", configuration.size ? nlohmann::json(*configuration.size) : nlohmann::json(nullptr)},
         {"hash", configuration.hash},
         {"paths", configuration.paths},
         {"neuron", neuron}});
    }
    table.footer = count_of(catalog.configurations.size(), "configuration") + " of " + *options.model_id + " across "
                   + count_of(compilers.size(), "compiler version") + scope;
    data["model_id"] = *options.model_id;
    data["configurations"] = std::move(rows);
    // -q: the entry paths, one per line.
    invocation.out().table(table, data, 9);
  } else {
    table.headers = {"MODEL", "ARCH", "COMPILER VERSIONS", "CONFIGURATIONS", "SIZE"};
    table.right_aligned = {false, false, false, true, true};
    for (const auto& model : catalog.models) {
      table.rows.push_back({model.model_id, join(model.model_types), join(model.compiler_versions),
                            std::to_string(model.configurations), model.size ? human_size(*model.size) : "-"});
      rows.push_back({{"model_id", model.model_id},
                      {"model_types", model.model_types},
                      {"compiler_versions", model.compiler_versions},
                      {"configurations", model.configurations},
                      {"size", model.size ? nlohmann::json(*model.size) : nlohmann::json(nullptr)}});
    }
    table.footer = count_of(catalog.models.size(), "model") + ", "
                   + count_of(catalog.configurations.size(), "configuration") + ", "
                   + count_of(compilers.size(), "compiler version") + " in " + spec.canonical() + scope;
    data["models"] = std::move(rows);
    invocation.out().table(table, data, 0);
    remember_models_for_completion(invocation, catalog);
  }
  return k_exit_ok;
}

} // namespace

CommandSpec make_list_command()
{
  CommandSpec command;
  command.name = "list";
  command.aliases = {"ls"};
  command.summary = "List the models a cache repo holds, or every configuration of one model.";
  command.description =
    "Without a filter: one line per model with its architecture, compiler versions, number of\n"
    "compiled configurations and size (when the repo holds its MODULE_<hash> folder). -v keeps one\n"
    "compiler version; -m shows every configuration of a model. -q prints model ids (with -m: entry\n"
    "paths), one per line, ready for 'neuron-cache lookup'.";
  command.positionals = {{"REPO", ValueKind::repo, "The cache repo to list (default: as --repo-id resolves).", false}};
  command.options = {
    {"m", "model", ValueKind::model, "MODEL", "List every configuration of this model id.", {}, {}},
    {"v",
     "version",
     ValueKind::text,
     "COMPILER_VERSION",
     "Only this neuronx-cc version, or a prefix of it at a '.' or '+' (2.21).",
     {},
     {"compiler-version"}},
    repo_id_option(),
    max_workers_option(),
    token_option(),
  };
  for (auto& option : aws_options()) {
    command.options.push_back(std::move(option));
  }
  command.examples = {"neuron-cache list", "neuron-cache list /fsx/neuron-cache -v 2.21.33363.0",
                      "neuron-cache list -m meta-llama/Llama-3.1-8B-Instruct --json", "neuron-cache list -q | head -1"};
  command.run = run_list;
  return command;
}

} // namespace neuron_cache
