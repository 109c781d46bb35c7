// `neuron-cache synchronize`: push the local compile cache to the cache repo, or --pull
// the repo's entries into it.
#include "commands.hpp"
#include "progress_bar.hpp"
#include "pull_stops.hpp"
#include "sync_shared.hpp"
#include "transfer_report.hpp"

#include <hubcache/compilecache/cleanup.hpp>
#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/local_cache.hpp>
#include <hubcache/compilecache/local_transfer.hpp>
#include <hubcache/compilecache/store_copy.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/compilecache/usage.hpp>
#include <hubcache/error.hpp>
#include <hubcache/hub/config.hpp>
#include <hubcache/util/environment.hpp>
#include <hubcache/util/process.hpp>
#include <hubcache/util/text.hpp>
#include <registry/lookup.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <set>

#include <unistd.h>

namespace neuron_cache {

namespace cc = hubcache::compilecache;

// Where a push follows symlinks leaving the cache: the Hugging Face Hub cache, into which
// optimum's compile-time proxy links what it downloaded.
std::vector<std::filesystem::path> followed_directories(const Invocation& invocation)
{
  return {hubcache::hub::hf_hub_cache(invocation.env())};
}

double seconds_since(std::chrono::steady_clock::time_point start)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

namespace {

// A --compiler-version that matches none of the versions the repo holds: what it has
// instead, in the same words for a whole pull and a --model one ("0 entries of MODEL
// for 2.22; the repo has 2.21.33363.0+82129205"). `subject` is "0 entries" or
// "0 entries of MODEL".
hubcache::EntryNotFound no_entries_for_version(const std::string& subject, const std::string& version,
                                               const std::set<std::string>& versions, bool installed = false)
{
  if (versions.empty()) {
    return hubcache::EntryNotFound(subject + " for " + version + "; the repo holds no compiler version's entries",
                                   "check the repo with 'neuron-cache list'");
  }
  std::string list;
  for (const auto& held : versions) {
    list += (list.empty() ? "" : ", ") + held;
  }
  if (installed) {
    // Graphs of another compiler version are of no use to this host's: never advise pulling them.
    return hubcache::EntryNotFound(subject + " for the installed neuronx-cc " + version + ", which graphs of " + list
                                     + " cannot serve",
                                   "compile and publish them with this neuronx-cc (neuron-cache add), or use a "
                                   "neuronx-cc the repo serves");
  }
  return hubcache::EntryNotFound(subject + " for " + version + "; the repo has " + list,
                                 "pass --compiler-version with one of them");
}

// A whole pull (or copy) filtered by --compiler-version: an error when the filter matches
// no version of the repo, as for --model, rather than a silent "0 entries".
void check_version_held(const std::optional<std::string>& filter, const std::set<std::string>& versions)
{
  if (!filter) {
    return;
  }
  for (const auto& version : versions) {
    if (cc::version_matches(version, *filter)) {
      return;
    }
  }
  throw no_entries_for_version("0 entries", *filter, versions);
}

// --pull --model: the entries of the model's matching configurations, from the registry
// and add's attribution records. Sets options.only_entries; reports what it could not
// attribute, and what the repo has when nothing matches (then throws). Returns the
// model's id, as the registry files it.
std::string select_model_entries(Invocation& invocation, hubcache::storage::Repository& repo, cc::PullOptions& options,
                                 const hubcache::storage::RepoSpec& spec)
{
  auto model = *invocation.value("model");
  auto filters = shape_filters(invocation);
  bool installed = !options.compiler_version;
  if (installed) {
    // The graphs this host's compiler can use.
    options.compiler_version = cc::installed_compiler_version();
  }
  filters.compiler_version = options.compiler_version;
  auto target = lookup_target_for(invocation, model, filters.task);
  auto workers = static_cast<unsigned>(max_workers(invocation));
  auto opener = [&] { return open_repository(invocation, spec); };
  auto outcome = registry::find_entries(repo, opener, target, filters, workers);
  for (const auto& warning : outcome.warnings) {
    invocation.out().warning(warning);
  }
  if (outcome.matches.empty()) {
    std::string asked = model;
    if (filters.compiler_version) {
      // What other compiler versions hold, with the same shape filters.
      auto any_version = filters;
      any_version.compiler_version.reset();
      auto elsewhere = registry::find_entries(repo, opener, target, any_version, workers);
      std::set<std::string> versions;
      for (const auto& match : elsewhere.matches) {
        versions.insert(match.loaded.location.compiler_version);
      }
      if (!versions.empty()) {
        throw no_entries_for_version("0 entries of " + model, *filters.compiler_version, versions,
                                     installed && options.compiler_version.has_value());
      }
    }
    auto nearby = registry::nearby_summary(outcome.filtered_out);
    throw hubcache::EntryNotFound("no configuration of " + model + " in " + repo.spec() + " matches"
                                    + (nearby.empty() ? std::string() : "; cached: " + nearby),
                                  "check the model id and the filters with 'neuron-cache lookup " + model + "'");
  }
  auto attribution = registry::attribute_matches(repo, outcome.matches);
  if (attribution.unattributed > 0) {
    invocation.out().warning(
      count_of(attribution.unattributed, "matching configuration") + " of " + model
      + " cannot be attributed to compiled graphs (their registry entries were written by other tools); "
        "their graphs are not pulled");
  }
  invocation.out().info(count_of(attribution.attributed, "configuration") + " of " + model + ": "
                        + count_of(attribution.modules.size(), "compiled graph") + " to install");
  options.only_entries = std::move(attribution.modules);
  return target.model_id.empty() ? model : target.model_id;
}

// A download larger than --max-size (default 20 GB) asks on a terminal, else needs --yes.
void confirm_download_size(Invocation& invocation, std::uint64_t bytes)
{
  if (invocation.has("yes")) {
    return;
  }
  std::uint64_t limit = 20'000'000'000ULL;
  if (auto text = invocation.value("max-size")) {
    try {
      limit = cc::parse_size(*text);
    } catch (const hubcache::InvalidArgument& error) {
      throw UsageError(std::string("--max-size: ") + error.what());
    }
  }
  if (bytes <= limit) {
    return;
  }
  auto question =
    "The pull would download " + human_size(bytes) + ", more than --max-size " + human_size(limit) + ". Continue?";
  if (::isatty(STDIN_FILENO) != 0 && invocation.out().is_human()) {
    if (confirm(question)) {
      return;
    }
    throw hubcache::InvalidArgument("pull cancelled",
                                    "narrow it with --model, --compiler-version or the shape filters");
  }
  throw hubcache::InvalidArgument("the pull would download " + human_size(bytes) + ", more than --max-size "
                                    + human_size(limit),
                                  "pass --yes to download it anyway, a larger --max-size, or narrow it with --model");
}

// Each entry's model: --model's for all, else (a dry run: what would this fetch?) the one
// add's records name.
void name_models(hubcache::storage::Repository& repo, const std::optional<std::string>& model, bool dry_run,
                 std::vector<TransferEntry>& entries)
{
  if (model) {
    for (auto& entry : entries) {
      entry.model = *model;
    }
  } else if (dry_run && !entries.empty()) {
    attribute_models(repo, entries);
  }
}

// A pull's summary, JSON document and diagnostics; its exit code.
int print_pull(Invocation& invocation, const cc::CacheRoot& root, const hubcache::storage::Repository& repo,
               const cc::PullOptions& options, const cc::TransferReport& report, double seconds)
{
  Transfer transfer{"pull", options.dry_run, repo.spec(), root.path.string(), root.source, report, seconds};
  std::string human;
  if (options.dry_run) {
    human = "Dry run: would pull " + count_of(report.planned.size(), "entry", "entries") + " ("
            + human_size(report.bytes_planned) + ") from " + repo.spec() + " into " + root.path.string();
  } else {
    human = "Pulled " + count_of(report.transferred.size(), "entry", "entries") + " ("
            + count_of(report.files_transferred, "file") + ", " + human_size(report.bytes_transferred) + ") from "
            + repo.spec() + " into " + root.path.string();
  }
  if (!report.replaced.empty()) {
    human += " (" + std::to_string(report.replaced.size()) + (options.dry_run ? " would replace" : " replaced")
             + " a failed local entry)";
  }
  human += transfer.summary_tail("pull");
  auto data = transfer.to_json();
  data["compiler_version"] = options.compiler_version ? nlohmann::json(*options.compiler_version) : nlohmann::json();
  data["other_repo_files"] = report.other_files;
  data["replaced"] = report.replaced;
  if (auto stopped = report_stopped_pull(invocation, root.path, report, human, data)) {
    return *stopped;
  }
  for (const auto& error : report.errors) {
    invocation.out().warning("not installed: " + error.path + ": " + skip_detail(error));
  }
  invocation.out().result(human, data, lines(options.dry_run ? report.planned : report.transferred));
  report_skips(invocation.out(), report.skipped);
  return report.errors.empty() ? k_exit_ok : k_exit_error;
}

// The pull is one library call (pull_into); the command asks, tells and prints.
int run_pull(Invocation& invocation, const cc::CacheRoot& root, hubcache::storage::Repository& repo,
             const hubcache::storage::RepoSpec& spec)
{
  auto start = std::chrono::steady_clock::now();
  cc::PullOptions options;
  options.compiler_version = invocation.value("compiler-version");
  options.dry_run = invocation.has("dry-run");
  options.replace_failed = invocation.has("replace-failed");
  options.workers = max_workers(invocation);
  std::optional<std::string> model;
  if (invocation.has("model")) {
    model = select_model_entries(invocation, repo, options, spec);
  }

  std::optional<ProgressBar> bar;
  cc::PullSteps steps;
  steps.confirm = [&](const cc::PullPlan& plan) {
    confirm_download_size(invocation, plan.bytes_planned);
    confirm_free_space(invocation, root.path, plan);
  };
  steps.waiting = [&](const cc::PullLockHolder& holder) {
    invocation.out().notice("waiting for " + holder.describe());
  };
  steps.planned = [&](std::vector<TransferEntry>& entries) {
    name_models(repo, model, options.dry_run, entries);
    detail_entries(invocation.out(), options.dry_run ? "would pull" : "pull", entries);
    if (!options.dry_run) {
      bar.emplace(invocation.out(), "Downloading");
    }
  };
  steps.progress = [&](const hubcache::util::TransferProgress& progress) { bar->update(progress); };
  steps.finished = [&](const cc::TransferReport& report) {
    bar.reset(); // its last line before the warnings
    warn_skipped_paths(invocation.out(), repo);
    if (!options.only_entries) { // --model said what the repo has already
      check_version_held(options.compiler_version, report.compiler_versions);
    }
  };
  cc::LocalCache local(root.path, invocation.env(), options.dry_run);
  auto report = cc::pull_into(repo, local, options, steps);
  return print_pull(invocation, root, repo, options, report, seconds_since(start));
}

// A positive whole number from the environment, else `fallback`.
std::uint64_t batch_setting(const Invocation& invocation, const std::string& name, std::uint64_t fallback)
{
  auto text = invocation.env().get_non_empty(name);
  if (!text) {
    return fallback;
  }
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || value == 0) {
    throw hubcache::InvalidArgument(name + " is not a positive whole number: " + hubcache::util::escape_control(*text),
                                    "unset it or give a number");
  }
  return value;
}

// A copy's options from the command line and the environment; `from` names the source
// in the commit message.
cc::CopyOptions copy_options(const Invocation& invocation, const std::string& from)
{
  cc::CopyOptions options;
  options.compiler_version = invocation.value("compiler-version");
  options.workers = max_workers(invocation);
  options.scratch_parent = hubcache::util::scratch_parent(invocation.env());
  options.batch_bytes = batch_setting(invocation, "NEURON_CACHE_COPY_BATCH_BYTES", options.batch_bytes);
  options.batch_files = batch_setting(invocation, "NEURON_CACHE_COPY_BATCH_FILES", options.batch_files);
  options.commit_message = "Copying compile cache entries from " + from;
  return options;
}

// A copy's summary, JSON document and diagnostics.
int print_copy(Invocation& invocation, const Transfer& transfer, const std::string& from, const std::string& to,
               const std::optional<std::string>& compiler_version)
{
  const auto& report = transfer.report;
  std::string human;
  if (transfer.dry_run) {
    human = "Dry run: would copy " + count_of(report.planned.size(), "entry", "entries") + " ("
            + count_of(report.files_planned, "file") + ", " + human_size(report.bytes_planned) + ") from " + from
            + " to " + to;
  } else if (report.transferred.empty() && report.errors.empty()) {
    human = "Nothing to copy: " + to + " already has every complete entry of " + from;
  } else {
    human = "Copied " + count_of(report.transferred.size(), "entry", "entries") + " ("
            + count_of(report.files_transferred, "file") + ", " + human_size(report.bytes_transferred) + ") from "
            + from + " to " + to + " in " + count_of(report.commits, "commit");
  }
  human += transfer.summary_tail("copy");
  for (const auto& error : report.errors) {
    invocation.out().warning("not copied: " + error.path + ": " + skip_detail(error));
  }
  auto data = transfer.to_json();
  data["compiler_version"] = compiler_version ? nlohmann::json(*compiler_version) : nlohmann::json();
  data["other_repo_files"] = report.other_files;
  data["commits"] = report.commits;
  add_xet_figures(report.xet, human, data);
  if (auto code = report_interrupted_publish(invocation, report, human, data)) {
    return *code;
  }
  invocation.out().result(human, data, lines(transfer.dry_run ? report.planned : report.transferred));
  report_skips(invocation.out(), report.skipped);
  return report.errors.empty() ? k_exit_ok : k_exit_error;
}

// --cache-dir s3://… (or NEURON_COMPILE_CACHE_URL=s3://…, as on SageMaker) or
// hf://buckets/…: a push copies that store's entries into the repo, a pull copies the
// repo's into it, each store in its own layout, through local scratch space a batch at a
// time (a bucket target publishes each batch files, markers, registry: publish_order.hpp).
int run_store_copy(Invocation& invocation, const cc::CacheLocation& location,
                   const hubcache::storage::ResolvedRepo& resolved, bool pull)
{
  for (const std::string name : {"clean-failed", "clear-stale-locks", "replace-failed"}) {
    if (invocation.has(name)) {
      throw UsageError("--" + name + " works on a local compile cache, not on " + location.display());
    }
  }
  auto start = std::chrono::steady_clock::now();
  bool dry_run = invocation.has("dry-run");
  auto cache_spec = hubcache::storage::parse_repo_spec(*location.store_url);
  if (cache_spec.canonical() == resolved.spec.canonical()) {
    throw UsageError("the compile cache and the cache repo are the same store (" + cache_spec.canonical()
                     + "): name another --repo-id or --cache-dir");
  }
  auto repo = open_existing_repository(invocation, resolved);
  auto cache = open_repository(invocation, cache_spec);
  auto origin =
    "from " + (location.source == cc::RootSource::option ? std::string("--cache-dir") : cc::to_string(location.source));
  if (!pull && !cache->exists()) {
    throw hubcache::RepoNotFound("the compile cache " + location.display() + " (" + origin
                                   + ") holds no Neuron compile cache entries",
                                 "check the URL: a compile cache holds neuronxcc-<version>/ folders");
  }

  auto options = copy_options(invocation, pull ? repo->spec() : location.display());
  std::optional<std::string> model;
  if (pull && invocation.has("model")) {
    cc::PullOptions selection;
    selection.compiler_version = options.compiler_version;
    model = select_model_entries(invocation, *repo, selection, resolved.spec);
    options.compiler_version = selection.compiler_version;
    options.only_entries = std::move(selection.only_entries);
  }
  auto& source = pull ? *repo : *cache;
  auto& target = pull ? *cache : *repo;
  cc::CopyRecords records(cc::CopyRecords::default_path(source.spec(), target.spec(), invocation.env()));
  options.records = &records;
  auto plan = cc::plan_copy(source, target, options);
  warn_skipped_paths(invocation.out(), source);
  if (pull && !options.only_entries) {
    check_version_held(options.compiler_version, plan.compiler_versions);
  }
  if (pull && !dry_run) {
    confirm_download_size(invocation, plan.bytes_planned);
  }
  if (!dry_run) {
    confirm_copy_space(invocation, target, plan, options, pull);
  }
  cc::TransferReport report;
  if (dry_run) {
    report = cc::dry_run_report(std::move(plan));
    if (pull) {
      name_models(*repo, model, true, report.entries);
    }
    detail_entries(invocation.out(), "would copy", report.entries);
  } else {
    auto entries = cc::transfer_entries(plan);
    if (pull) {
      name_models(*repo, model, false, entries);
    }
    detail_entries(invocation.out(), "copy", entries);
    if (pull && !plan.copies.empty() && !hubcache::storage::exists_yet(*cache)) {
      // Like the directory a local pull creates: the bucket (when missing and allowed) and the prefix's marker.
      cache->create({.is_private = true, .exist_ok = true});
      invocation.out().info("Made " + location.display() + " a compile cache");
    }
    ProgressBar bar(invocation.out(), "Copying");
    report = cc::apply_copy(source, target, std::move(plan), options,
                            [&](const hubcache::util::TransferProgress& progress) { bar.update(progress); });
    bar.finish();
    records.save();
    report.entries = std::move(entries);
  }
  if (pull || dry_run) {
    report.revision = pull ? repo->revision() : std::nullopt;
  }

  Transfer transfer{pull ? "pull" : "push", dry_run, repo->spec(),        location.display(),
                    location.source,        report,  seconds_since(start)};
  auto from = pull ? repo->spec() : location.display();
  auto to = pull ? location.display() : repo->spec();
  return print_copy(invocation, transfer, from, to, options.compiler_version);
}

enum class Direction { either, push, pull };

int run_synchronize(Invocation& invocation, Direction direction)
{
  bool pull = direction == Direction::pull || invocation.has("pull");
  if (pull && (invocation.has("clean-failed") || invocation.has("clear-stale-locks"))) {
    throw UsageError("--clean-failed and --clear-stale-locks apply to a push, not to --pull");
  }

  if (!pull && invocation.has("replace-failed")) {
    throw UsageError("--replace-failed applies to --pull");
  }
  for (const std::string name : {"model", "max-size", "yes"}) {
    if (!pull && invocation.has(name)) {
      throw UsageError("--" + name + " applies to --pull");
    }
  }
  for (const std::string name : {"task", "batch-size", "sequence-length", "num-cores"}) {
    if (invocation.has(name) && !invocation.has("model")) {
      throw UsageError("--" + name + " selects configurations of --model MODEL");
    }
  }
  invocation.integer("clear-stale-locks", 0);
  auto location = cc::locate_cache(invocation.value("cache-dir"), invocation.env());
  if (!pull && invocation.has("compiler-version") && !location.store_url) {
    throw UsageError("--compiler-version filters a --pull, or a push from an S3 or bucket compile cache");
  }
  auto resolved = resolve_repo(invocation);
  if (location.store_url) {
    return run_store_copy(invocation, location, resolved, pull);
  }
  const auto& root = location.local();
  auto repo = open_existing_repository(invocation, resolved);
  return pull ? run_pull(invocation, root, *repo, resolved.spec) : run_push(invocation, root, *repo);
}

// synchronize's options, in help order; push and pull take theirs from these (one_direction).
std::vector<OptionSpec> synchronize_options()
{
  std::vector<OptionSpec> options = {
    repo_id_option(),
    cache_dir_option(),
    {"", "pull", ValueKind::flag, "", "Download the repo's entries into the local cache instead of pushing.", {}, {}},
    {"",
     "compiler-version",
     ValueKind::text,
     "VERSION",
     "With --pull (or a push from an S3 cache): only entries of this neuronx-cc version (full, or a prefix like "
     "2.15).",
     {},
     {}},
    {"",
     "replace-failed",
     ValueKind::flag,
     "",
     "With --pull: a complete repo entry replaces a local failed one (else skipped as differing).",
     {},
     {}},
    {"",
     "model",
     ValueKind::model,
     "MODEL",
     "With --pull: only the graphs of this model's cached configurations (Hub id or local directory, as lookup); "
     "--compiler-version then defaults to the installed neuronx-cc.",
     {},
     {}},
    {"", "task", ValueKind::text, "TASK", "With --model: only configurations of this task.", {}, {}},
    {"", "batch-size", ValueKind::integer, "N", "With --model: only configurations of this batch size.", {}, {}},
    {"",
     "sequence-length",
     ValueKind::integer,
     "N",
     "With --model: only configurations of this sequence length.",
     {},
     {}},
    {"",
     "num-cores",
     ValueKind::integer,
     "N",
     "With --model: only configurations using this many Neuron cores.",
     {},
     {"tensor-parallel-size"}},
    {"",
     "max-size",
     ValueKind::text,
     "SIZE",
     "With --pull: ask (on a terminal) or refuse before downloading more than SIZE (default 20G).",
     {},
     {}},
    {"y", "yes", ValueKind::flag, "", "With --pull: download even beyond --max-size without asking.", {}, {}},
    {"", "dry-run", ValueKind::flag, "", "Print what would be transferred and change nothing.", {}, {}},
    {"",
     "clean-failed",
     ValueKind::flag,
     "",
     "Before pushing, delete failed entries (model.log without model.neff) from the local cache.",
     {},
     {}},
    {"",
     "clear-stale-locks",
     ValueKind::integer,
     "MINUTES",
     "Before pushing, delete *.lock files older than MINUTES, unless a neuronx-cc process runs on this host.",
     {},
     {}},
    max_workers_option(),
    no_xet_option(),
    token_option(),
  };
  for (auto& option : aws_options()) {
    options.push_back(std::move(option));
  }
  return options;
}

} // namespace

CommandSpec make_synchronize_command()
{
  CommandSpec command;
  command.name = "synchronize";
  command.aliases = {"sync"};
  command.summary = "Push the local Neuron compile cache to the cache repo, or --pull the repo into it.";
  command.description =
    "Push (default): uploads the complete entries of the local compile cache (model.neff and, since\n"
    "libneuronxla's model.done generation, model.done present; flags suffix matching the flags file),\n"
    "the optimum registry (0_REGISTRY) and exported-model directories, skipping what the repo\n"
    "already has: one commit, or on the Hub as many as its limits ask, each of whole entries, the\n"
    "registry last. Failed, locked and incomplete entries, locks, temp files and symlinks\n"
    "leaving the cache are never pushed; each is reported with its reason.\n"
    "--pull: downloads the repo's complete entries into the local cache; each entry appears whole\n"
    "(or, when completing a partial one, model.done last); entries locked by a compiler are left alone;\n"
    "--replace-failed replaces local failed entries the repo has complete. --model MODEL installs only\n"
    "the graphs of that model's cached configurations (as lookup finds them; add records which graphs\n"
    "each configuration produced). A pull beyond --max-size (20G) asks on a terminal, else needs --yes.\n"
    "Cache dir: --cache-dir, else --cache_dir in $NEURON_CC_FLAGS, else $NEURON_COMPILE_CACHE_URL,\n"
    "else /var/tmp/neuron-compile-cache. An s3://bucket/prefix cache (the Neuron SDK's S3 cache, as\n"
    "SageMaker jobs write it) or a hf://buckets/ns/name[/folder] Storage Bucket works too: a push\n"
    "copies its complete entries into the repo, a --pull copies the repo's into it, through $TMPDIR\n"
    "a batch at a time.";
  command.options = synchronize_options();
  command.examples = {"neuron-cache synchronize",
                      "neuron-cache synchronize --cache-dir s3://my-bucket/neuron-cache --repo-id my-org/neuron-cache",
                      "neuron-cache synchronize --repo-id /fsx/neuron-cache --dry-run",
                      "neuron-cache synchronize --pull --compiler-version 2.21",
                      "neuron-cache synchronize --pull --model meta-llama/Llama-3.1-8B --batch-size 4",
                      "neuron-cache synchronize --pull --replace-failed",
                      "neuron-cache synchronize --pull --max-workers 16",
                      "neuron-cache synchronize --clean-failed --clear-stale-locks 60 --json"};
  command.run = [](Invocation& invocation) { return run_synchronize(invocation, Direction::either); };
  return command;
}

namespace {

// synchronize's spec for one direction: its options but those of the other direction,
// their help without the "With --pull" that only synchronize needs.
CommandSpec one_direction(const std::string& name, const std::string& summary, const std::string& description,
                          Direction direction, const std::set<std::string>& other_direction_options)
{
  auto command = make_synchronize_command();
  command.name = name;
  command.aliases = {};
  command.summary = summary;
  command.description = description;
  std::erase_if(command.options,
                [&](const OptionSpec& option) { return other_direction_options.contains(option.long_name); });
  for (auto& option : command.options) {
    for (std::string from : {"With --pull (or a push from an S3 cache): ", "With --pull: "}) {
      if (option.help.starts_with(from)) {
        option.help = option.help.substr(from.size());
        option.help[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(option.help[0])));
      }
    }
  }
  std::erase_if(command.examples, [&](const std::string& example) {
    bool pulls = example.find("--pull") != std::string::npos;
    return (direction == Direction::pull) != pulls;
  });
  for (auto& example : command.examples) {
    for (std::string from : {"synchronize --pull", "synchronize"}) {
      if (auto at = example.find(from); at != std::string::npos) {
        example.replace(at, from.size(), name);
        break;
      }
    }
  }
  command.run = [direction](Invocation& invocation) { return run_synchronize(invocation, direction); };
  return command;
}

} // namespace

CommandSpec make_push_command()
{
  return one_direction("push", "Push the local compile cache to the cache repo (synchronize).",
                       "Uploads the complete entries of the local compile cache, the optimum registry (0_REGISTRY)\n"
                       "and exported-model directories, skipping what the repo already has: synchronize in its\n"
                       "default direction. Failed, locked and incomplete entries, locks, temp files and symlinks\n"
                       "leaving the cache are never pushed; each is reported with its reason. An s3://bucket/prefix\n"
                       "or hf://buckets/ns/name cache dir copies its complete entries into the repo.",
                       Direction::push,
                       {"pull", "replace-failed", "model", "max-size", "yes", "task", "batch-size", "sequence-length",
                        "num-cores", "tensor-parallel-size"});
}

CommandSpec make_pull_command()
{
  return one_direction("pull", "Pull the cache repo into the local compile cache (synchronize in reverse).",
                       "Downloads the repo's complete entries into the local compile cache, as synchronize does in\n"
                       "reverse. Each entry appears whole (or, when completing a partial one, model.done last);\n"
                       "entries locked by a compiler are left alone. --model MODEL installs only the graphs of that\n"
                       "model's cached configurations. A pull beyond --max-size (20G) asks on a terminal, else\n"
                       "needs --yes.",
                       Direction::pull, {"pull", "clean-failed", "clear-stale-locks"});
}

} // namespace neuron_cache
