// `neuron-cache list [REPO]`: the models a cache repo holds, or every configuration of one.
#include "commands.hpp"

#include <hubcache/error.hpp>
#include <hubcache/storage/repo_choice.hpp>
#include <hubcache/util/environment.hpp>
#include <hubcache/util/fs.hpp>
#include <registry/catalog.hpp>
#include <registry/graphs.hpp>
#include <registry/legacy_registry.hpp>

#include <filesystem>

namespace neuron_cache {

namespace {

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

// What list reads, once: the registry of the compiler dirs it shows and every graph there.
struct Listing {
  registry::CatalogOptions options;
  registry::RegistryIndex index;
  registry::Catalog catalog;
  registry::GraphMap graphs;
  std::uint64_t unregistered_bytes = 0;
  std::set<std::string> compilers; // every version with a configuration or a graph
};

Listing read_listing(Invocation& invocation, const hubcache::storage::RepoSpec& spec,
                     hubcache::storage::Repository& repo)
{
  Listing listing;
  auto& options = listing.options;
  options.compiler_version = invocation.value("version");
  options.model_id = invocation.value("model");
  options.parallelism = static_cast<unsigned>(max_workers(invocation));
  options.legacy_registry = registry::read_legacy_registry(repo); // optimum <= 0.0.18
  // One listing per compiler dir, several at once.
  listing.index =
    registry::index_registry(registry::list_compiler_dirs(repo, options.compiler_version, options.parallelism));
  warn_skipped_paths(invocation.out(), repo);
  listing.catalog = registry::build_catalog(
    listing.index, [&] { return open_repository(invocation, spec); }, options);
  for (const auto& warning : listing.catalog.warnings) {
    invocation.out().warning(warning);
  }
  const auto& unexpected = listing.index.unexpected;
  if (!unexpected.empty()) {
    invocation.out().warning(count_of(unexpected.size(), "registry file") + " ignored at unexpected paths, e.g. "
                             + unexpected.front().path + " (" + unexpected.front().problem + ")");
  }
  listing.graphs = registry::map_graphs(listing.index, repo, options.parallelism);
  for (const auto& configuration : listing.catalog.configurations) {
    listing.compilers.insert(configuration.compiler_version);
  }
  for (const auto& [folder, bytes] : listing.index.module_sizes) {
    listing.compilers.insert(registry::compiler_version_of(folder.substr(0, folder.find('/'))));
  }
  for (const auto& folder : listing.graphs.unregistered) {
    listing.unregistered_bytes += listing.index.module_sizes.find(folder)->second;
  }
  return listing;
}

std::string scope_text(const Listing& listing)
{
  return listing.options.compiler_version ? " for neuronx-cc " + *listing.options.compiler_version : "";
}

nlohmann::json list_header(const hubcache::storage::RepoSpec& spec, const Listing& listing)
{
  const auto& version = listing.options.compiler_version;
  return {
    {"repo", spec.canonical()},
    {"compiler_version", version ? nlohmann::json(*version) : nlohmann::json(nullptr)},
    {"unregistered_graphs", {{"count", listing.graphs.unregistered.size()}, {"size", listing.unregistered_bytes}}}};
}

void print_configurations(Invocation& invocation, const hubcache::storage::RepoSpec& spec, const Listing& listing)
{
  const auto& model_id = *listing.options.model_id;
  Output::Table table;
  table.headers = {"COMPILER VERSION", "REGISTRY", "TASK", "BATCH SIZE", "SEQUENCE LENGTH", "CORES", "DTYPE",
                   "INSTANCE TYPE",    "SIZE",     "ENTRY"};
  table.right_aligned = {false, false, false, true, true, true, false, false, true, false};
  nlohmann::json rows = nlohmann::json::array();
  std::set<std::string> compilers;
  for (const auto& configuration : listing.catalog.configurations) {
    compilers.insert(configuration.compiler_version);
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
                          optional_text(shape.num_cores), shape.dtype.value_or("-"), shape.instance_type.value_or("-"),
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
  table.footer = count_of(listing.catalog.configurations.size(), "configuration") + " of " + model_id + " across "
                 + count_of(compilers.size(), "compiler version") + scope_text(listing);
  auto data = list_header(spec, listing);
  data["model_id"] = model_id;
  data["configurations"] = std::move(rows);
  // -q: the entry paths, one per line.
  invocation.out().table(table, data, 9);
}

// A second footer line: "20 unregistered graphs (1.2 GB): no model registers them; ...".
std::string unregistered_text(const Listing& listing)
{
  if (listing.graphs.unregistered.empty()) {
    return "";
  }
  return "\n" + count_of(listing.graphs.unregistered.size(), "unregistered graph") + " ("
         + human_size(listing.unregistered_bytes)
         + "): no model registers them; 'neuron-cache list --graphs' lists them.";
}

void print_models(Invocation& invocation, const hubcache::storage::RepoSpec& spec, const Listing& listing)
{
  Output::Table table;
  table.headers = {"MODEL", "ARCH", "COMPILER VERSIONS", "CONFIGURATIONS", "SIZE"};
  table.right_aligned = {false, false, false, true, true};
  table.empty_text = listing.graphs.unregistered.empty() ? "" : "No model registers any graph of the repo.";
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& model : listing.catalog.models) {
    table.rows.push_back({model.model_id, hubcache::util::join(model.model_types, ", "),
                          hubcache::util::join(model.compiler_versions, ", "), std::to_string(model.configurations),
                          model.size ? human_size(*model.size) : "-"});
    rows.push_back({{"model_id", model.model_id},
                    {"model_types", model.model_types},
                    {"compiler_versions", model.compiler_versions},
                    {"configurations", model.configurations},
                    {"size", model.size ? nlohmann::json(*model.size) : nlohmann::json(nullptr)}});
  }
  table.footer = count_of(listing.catalog.models.size(), "model") + ", "
                 + count_of(listing.catalog.configurations.size(), "configuration") + ", "
                 + count_of(listing.compilers.size(), "compiler version") + " in " + spec.canonical()
                 + scope_text(listing) + unregistered_text(listing);
  auto data = list_header(spec, listing);
  data["models"] = std::move(rows);
  invocation.out().table(table, data, 0);
}

// list --graphs: the graphs no registry entry names, with where a model may still use them.
void print_unregistered_graphs(Invocation& invocation, const hubcache::storage::RepoSpec& spec, const Listing& listing)
{
  Output::Table table;
  table.headers = {"GRAPH", "COMPILER VERSION", "SIZE"};
  table.right_aligned = {false, false, true};
  table.empty_text = "Every graph of the repo is named by a registry entry.";
  nlohmann::json rows = nlohmann::json::array();
  std::set<std::string> dirs;
  for (const auto& folder : listing.graphs.unregistered) {
    auto dir = folder.substr(0, folder.find('/'));
    auto bytes = listing.index.module_sizes.find(folder)->second;
    dirs.insert(dir);
    table.rows.push_back({folder, registry::compiler_version_of(dir), human_size(bytes)});
    rows.push_back({{"path", folder}, {"compiler_version", registry::compiler_version_of(dir)}, {"size", bytes}});
  }
  table.footer = count_of(listing.graphs.unregistered.size(), "unregistered graph") + " ("
                 + human_size(listing.unregistered_bytes) + ") in " + spec.canonical() + scope_text(listing);
  nlohmann::json shared = nlohmann::json::array();
  for (const auto& dir : listing.graphs.unattributed_dirs) {
    if (dirs.count(dir) != 0U) {
      shared.push_back(registry::compiler_version_of(dir));
      table.footer +=
        "\nRegistry entries of " + dir + " name no graphs (optimum's own do not): some of its graphs may be theirs.";
    }
  }
  auto data = list_header(spec, listing);
  data["graphs"] = std::move(rows);
  data["unattributed_compiler_versions"] = std::move(shared);
  invocation.out().table(table, data, 0);
}

int run_list(Invocation& invocation)
{
  auto positional = invocation.positional("REPO");
  auto option = invocation.value("repo-id");
  if (positional && option && *positional != *option) {
    throw UsageError("give the repo once, either as REPO or with --repo-id");
  }
  if (invocation.has("graphs") && invocation.has("model")) {
    throw UsageError("--graphs lists the graphs no model registers; it does not go with --model");
  }
  auto resolved = positional ? repo_from_argument(invocation, *positional, "REPO") : resolve_repo(invocation);
  auto repo = open_existing_repository(invocation, resolved);
  auto listing = read_listing(invocation, resolved.spec, *repo);
  if (invocation.has("graphs")) {
    print_unregistered_graphs(invocation, resolved.spec, listing);
  } else if (listing.options.model_id) {
    print_configurations(invocation, resolved.spec, listing);
  } else {
    print_models(invocation, resolved.spec, listing);
    remember_models_for_completion(invocation, listing.catalog);
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
  command.description = "Without a filter: one line per model with its architecture, compiler versions, number of\n"
                        "compiled configurations and size (when the repo holds its MODULE_<hash> folder); the footer\n"
                        "counts the graphs no registry entry names, which --graphs lists. -v keeps one compiler\n"
                        "version; -m shows every configuration of a model. -q prints model ids (with -m: entry paths,\n"
                        "with --graphs: graph folders), one per line, ready for 'neuron-cache lookup'.";
  command.positionals = {{"REPO", ValueKind::repo, "The cache repo to list (default: as --repo-id resolves).", false}};
  command.options = {
    {"m", "model", ValueKind::model, "MODEL", "List every configuration of this model id.", {}, {}},
    {"",
     "graphs",
     ValueKind::flag,
     "",
     "List the compiled graphs no registry entry names (no model registers).",
     {},
     {}},
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
                      "neuron-cache list -m meta-llama/Llama-3.1-8B-Instruct --json", "neuron-cache list -q | head -1",
                      "neuron-cache list /fsx/neuron-cache --graphs"};
  command.run = run_list;
  return command;
}

} // namespace neuron_cache
