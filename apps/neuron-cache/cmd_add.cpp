// `neuron-cache add`: populate the cache repo by running a compilation, for one model
// configuration or for every configuration of a YAML manifest (CI jobs).
#include "commands.hpp"
#include "errors.hpp"

#include <addjobs/add_job.hpp>
#include <addjobs/add_manifest.hpp>
#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/usage.hpp>
#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/process.hpp>
#include <hubcache/util/text.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace neuron_cache {

namespace {

namespace add = addjobs;

// Options that describe one configuration; with --manifest they come from the file.
const std::vector<std::string> k_configuration_options = {"model",
                                                          "task",
                                                          "precision",
                                                          "auto-cast-type",
                                                          "num-cores",
                                                          "train-batch-size",
                                                          "eval-batch-size",
                                                          "sequence-length",
                                                          "encoder-sequence-length",
                                                          "decoder-sequence-length",
                                                          "gradient-accumulation-steps",
                                                          "max-steps"};

add::Configuration configuration_from_options(const Invocation& invocation)
{
  for (const auto* required : {"model", "task", "num-cores", "train-batch-size"}) {
    if (!invocation.has(required)) {
      throw UsageError(std::string("--") + required
                       + (std::string_view(required) == "train-batch-size" ? " (or --batch-size)" : "")
                       + " is required (or give a YAML manifest with --manifest)");
    }
  }
  if (!invocation.has("precision") && !invocation.has("auto-cast-type")) {
    throw UsageError("--precision or --auto-cast-type is required (or give a YAML manifest with --manifest)");
  }
  add::Configuration configuration;
  configuration.task = *invocation.value("task");
  configuration.precision = invocation.value("precision").value_or("");
  configuration.auto_cast_type = invocation.value("auto-cast-type");
  configuration.num_cores = *invocation.integer("num-cores", 1);
  configuration.train_batch_size = *invocation.integer("train-batch-size", 1);
  configuration.eval_batch_size = invocation.integer("eval-batch-size", 1);
  configuration.sequence_length = invocation.integer("sequence-length", 1);
  configuration.encoder_sequence_length = invocation.integer("encoder-sequence-length", 1);
  configuration.decoder_sequence_length = invocation.integer("decoder-sequence-length", 1);
  configuration.gradient_accumulation_steps = invocation.integer("gradient-accumulation-steps", 1).value_or(1);
  configuration.max_steps = invocation.integer("max-steps", 1).value_or(10);
  try {
    configuration.validate();
  } catch (const hubcache::InvalidArgument& error) {
    throw UsageError(error.what());
  }
  return configuration;
}

[[noreturn]] void no_command()
{
  throw UsageError("no command to run: give it after '--' (e.g. neuron-cache add -m MODEL ... -- torchrun "
                   "--nproc_per_node {num_cores} train.py), as 'command' in the manifest, or as a template in $"
                   + std::string(add::k_command_env));
}

std::string status_word(add::JobStatus status)
{
  switch (status) {
  case add::JobStatus::added: return "added";
  case add::JobStatus::already_registered: return "already registered"; // the JSON's already-registered
  case add::JobStatus::planned: return "would run";
  case add::JobStatus::failed: return "FAILED";
  case add::JobStatus::interrupted: return "interrupted";
  case add::JobStatus::not_run: return "not run";
  }
  return "?";
}

std::string command_text(const std::vector<std::string>& words)
{
  std::string text;
  for (const auto& word : words) {
    text += (text.empty() ? "" : " ") + hubcache::util::quote_argument(word);
  }
  return text;
}

// What an add will do, decided and checked before anything compiles: the jobs (models
// loaded, commands chosen), the repo (open, writable) and the runner's settings.
struct AddPlan {
  std::optional<add::Manifest> manifest;
  std::vector<add::Job> jobs;
  hubcache::storage::ResolvedRepo repo_name;
  std::unique_ptr<hubcache::storage::Repository> repo;
  hubcache::compilecache::CacheRoot cache_root;
  unsigned parallelism = 1;
  bool continue_on_error = false;
  add::Settings settings; // callbacks are set by apply_add
};

// The command: after `--`, else the manifest's, else the environment's template. Every
// job must end up with one.
std::optional<std::vector<std::string>> default_command_for(Invocation& invocation,
                                                            const std::optional<add::Manifest>& manifest,
                                                            const hubcache::util::Environment& env)
{
  std::optional<std::vector<std::string>> command;
  if (!invocation.trailing().empty()) {
    command = invocation.trailing();
  } else if (manifest && manifest->command) {
    command = manifest->command;
  } else if (auto from_env = env.get_non_empty(std::string(add::k_command_env))) {
    command = add::command_words(*from_env);
  }
  if (!command && !manifest) {
    no_command();
  }
  if (!command && manifest) {
    for (const auto& model : manifest->models) {
      if (!model.command) {
        no_command();
      }
    }
  }
  return command;
}

// One job per configuration, each model loaded once.
std::vector<add::Job> jobs_for(Invocation& invocation, const std::optional<add::Manifest>& manifest,
                               const hubcache::util::Environment& env,
                               const std::optional<std::vector<std::string>>& default_command,
                               const std::optional<add::Configuration>& single_configuration)
{
  std::map<std::string, add::Model> models;
  auto load = [&](const std::string& spec) -> const add::Model& {
    auto found = models.find(spec);
    if (found == models.end()) {
      found = models.emplace(spec, add::load_model(spec, env, invocation.value("token"))).first;
    }
    return found->second;
  };
  std::optional<std::chrono::seconds> timeout;
  if (auto seconds = invocation.integer("timeout", 1)) {
    timeout = std::chrono::seconds(*seconds);
  } else if (manifest) {
    timeout = manifest->timeout;
  }
  std::vector<add::Job> jobs;
  if (!manifest) {
    jobs.push_back(add::Job{load(*invocation.value("model")), *single_configuration, *default_command, {}, timeout});
    return jobs;
  }
  for (const auto& model : manifest->models) {
    for (const auto& configuration : model.configurations) {
      jobs.push_back(add::Job{load(model.model), configuration,
                              invocation.trailing().empty() && model.command ? *model.command : *default_command,
                              manifest->environment, timeout});
    }
  }
  return jobs;
}

// A template without shape placeholders compiles one shape whatever the configuration
// says: the registry would record the configuration's shape, a guess. Once per template.
void warn_shapeless_templates(Invocation& invocation, const std::vector<add::Job>& jobs)
{
  std::set<std::vector<std::string>> warned;
  for (const auto& job : jobs) {
    if (!add::uses_shape_placeholders(job.command_template) && warned.insert(job.command_template).second) {
      std::string names;
      for (const auto& name : add::shape_placeholders()) {
        names += (names.empty() ? "{" : ", {") + name + "}";
      }
      invocation.out().warning("the command '" + command_text(job.command_template) + "' uses none of " + names
                               + ": the shapes registered for " + job.model.model_id
                               + " are the configuration's, not necessarily what it compiles");
    }
  }
}

AddPlan plan_add(Invocation& invocation)
{
  AddPlan plan;
  auto manifest_file = invocation.value("manifest");
  if (manifest_file) {
    for (const auto& option : k_configuration_options) {
      if (invocation.has(option)) {
        throw UsageError("--" + option + " cannot be used with --manifest: configurations come from the manifest");
      }
    }
    plan.manifest = add::parse_manifest(*manifest_file);
  } else {
    for (const auto* option : {"jobs", "continue-on-error"}) {
      if (invocation.has(option)) {
        throw UsageError(std::string("--") + option + " only applies to --manifest runs");
      }
    }
  }
  // One environment, computed once: the manifest's `env` over ours, as the commands will
  // see it. The registered check, the cache root, the recorded flags and the commands
  // all read it, so a re-run skips exactly what the first run compiled.
  const auto env = plan.manifest ? invocation.env().overlaid(plan.manifest->environment) : invocation.env();
  const auto& manifest = plan.manifest;
  plan.parallelism = static_cast<unsigned>(invocation.integer("jobs", 1).value_or(1));
  plan.continue_on_error = invocation.has("continue-on-error");
  // The configuration's options are checked before the repo is asked or a model loaded.
  std::optional<add::Configuration> single_configuration;
  if (!manifest) {
    single_configuration = configuration_from_options(invocation);
  }
  const auto default_command = default_command_for(invocation, manifest, env);

  // Where: repo and local compile cache root.
  plan.repo_name = resolve_repo(invocation, manifest ? manifest->repo : std::nullopt,
                                manifest ? "'repo' in " + *manifest_file : std::string());
  std::optional<std::string> cache_dir_option = invocation.value("cache-dir");
  if (!cache_dir_option && manifest) {
    cache_dir_option = manifest->cache_dir;
  }
  plan.cache_root = hubcache::compilecache::resolve_cache_root(cache_dir_option, env);

  // Preconditions, before anything compiles.
  plan.repo = open_repository(invocation, plan.repo_name.spec);
  if (add::check_preconditions(*plan.repo).public_default_repo) {
    invocation.out().warning("No custom cache repo is set: pushing to the public default " + plan.repo->spec()
                             + ". Create your own with 'neuron-cache create' or pick one with 'neuron-cache set'.");
  }
  plan.jobs = jobs_for(invocation, manifest, env, default_command, single_configuration);
  warn_shapeless_templates(invocation, plan.jobs);

  plan.settings.cache_root = plan.cache_root.path;
  plan.settings.cc_flags = env.get("NEURON_CC_FLAGS").value_or("");
  plan.settings.dry_run = invocation.has("dry-run");
  plan.settings.force = invocation.has("force");
  if (manifest) {
    plan.settings.compiler_version = manifest->compiler_version;
  }
  return plan;
}

// Runs the plan's jobs: each command's output passes through to stderr (prefixed with its
// configuration when jobs run side by side), progress as info lines.
std::vector<add::JobResult> apply_add(Invocation& invocation, AddPlan& plan)
{
  auto& out = invocation.out();
  auto settings = plan.settings;
  std::optional<hubcache::util::TemporaryDirectory> staging;
  if (plan.manifest && !settings.dry_run) {
    staging.emplace(hubcache::util::scratch_parent(invocation.env()) / "neuron-cache-add");
    settings.staging_directory = staging->path();
  }
  std::mutex print_mutex;
  if (plan.manifest) {
    // Piped, so the report keeps each command's last lines. A single add keeps the
    // terminal as it is.
    settings.on_line = [&print_mutex, &out, parallel = plan.parallelism > 1](
                         const add::Job& job, hubcache::util::ProcessStream, std::string_view line) {
      std::lock_guard lock(print_mutex);
      out.passthrough((parallel ? "[" + job.label() + "] " : std::string()) + std::string(line));
    };
  }
  std::size_t started = 0;
  settings.on_event = [&](const add::Job& job, const std::string& event) {
    std::lock_guard lock(print_mutex);
    if (event == "compiling") {
      ++started;
      out.info(plan.manifest
                 ? "[" + std::to_string(started) + "/" + std::to_string(plan.jobs.size()) + "] compiling " + job.label()
                 : "Compiling " + job.label() + " into " + plan.cache_root.path.string());
    } else if (event.starts_with("waiting for ")) {
      out.notice("[" + job.label() + "] " + event); // the local cache's pull lock
    } else {
      out.info("Pushing " + job.label() + " to " + plan.repo_name.spec.canonical());
    }
  };
  add::Runner runner(*plan.repo, std::move(settings));
  auto results = runner.run_all(plan.jobs, plan.parallelism, plan.continue_on_error);
  if (!plan.settings.dry_run) {
    // A compile is a use: the entries it made are recorded for cleanup's LRU order.
    hubcache::compilecache::UsageRecords records(
      hubcache::compilecache::UsageRecords::default_path(plan.cache_root.path, invocation.env()));
    auto now = hubcache::compilecache::unix_now();
    for (const auto& result : results) {
      for (const auto& entry : result.entries) {
        records.record(entry, now);
      }
    }
    records.save();
  }
  return results;
}

// A failed job's next step, in the program's words: the error table's for a library
// error, the runner's own otherwise.
std::string job_hint(const add::JobResult& result, const RunContext& context)
{
  if (result.error) {
    try {
      std::rethrow_exception(result.error);
    } catch (const std::exception& error) {
      return describe_error(error, context).hint;
    }
  }
  if (result.created_nothing) {
    return result.hint + "; if its graphs were already cached locally, push them with 'neuron-cache synchronize'";
  }
  return result.hint;
}

// How the jobs ended, counted by status.
struct AddTally {
  std::size_t added = 0, registered = 0, failed = 0, planned = 0, not_run = 0;

  explicit AddTally(const std::vector<add::JobResult>& results)
  {
    for (const auto& result : results) {
      added += result.status == add::JobStatus::added ? 1 : 0;
      registered += result.status == add::JobStatus::already_registered ? 1 : 0;
      failed += result.status == add::JobStatus::failed ? 1 : 0;
      planned += result.status == add::JobStatus::planned ? 1 : 0;
      not_run += result.status == add::JobStatus::not_run || result.status == add::JobStatus::interrupted ? 1 : 0;
    }
  }
};

nlohmann::json add_document(Invocation& invocation, const AddPlan& plan, const std::vector<add::JobResult>& results,
                            const AddTally& tally, int signal)
{
  nlohmann::json data = {{"repo", plan.repo_name.spec.canonical()},
                         {"cache_dir", plan.cache_root.path.string()},
                         {"dry_run", plan.settings.dry_run},
                         {"results", nlohmann::json::array()},
                         {"summary",
                          {{"added", tally.added},
                           {"already_registered", tally.registered},
                           {"failed", tally.failed},
                           {"would_run", tally.planned},
                           {"not_run", tally.not_run}}}};
  if (signal != 0) {
    data["interrupted_by"] = std::string("SIG") + (sigabbrev_np(signal) != nullptr ? sigabbrev_np(signal) : "?");
  }
  for (const auto& result : results) {
    auto item = result.to_json();
    if (auto hint = job_hint(result, invocation.context()); !hint.empty()) {
      item["hint"] = hint;
    }
    data["results"].push_back(item);
  }
  return data;
}

// One configuration given on the command line: one sentence, or its error.
int report_single_add(Invocation& invocation, const AddPlan& plan, const add::JobResult& result, nlohmann::json& data,
                      int interrupted_code)
{
  auto& out = invocation.out();
  const auto repo = plan.repo_name.spec.canonical();
  std::string human;
  switch (result.status) {
  case add::JobStatus::added:
    human =
      "Added " + result.label + " to " + repo + ": " + count_of(result.entries.size(), "compiled graph") + " (compiler "
      + result.compiler_version + ") and the registry entry " + result.registry_files.front()
      + (plan.repo_name.spec.kind == hubcache::storage::RepoKind::hub ? ", in one commit." : ", in one revision.");
    break;
  case add::JobStatus::already_registered:
    human =
      result.label + " is already registered in " + repo + "; nothing compiled (use --force to compile it again).";
    break;
  case add::JobStatus::planned:
    human = "Would run: " + command_text(result.command) + "\nwith NEURON_COMPILE_CACHE_URL="
            + plan.cache_root.path.string() + ", then push its new entries to " + repo + ".";
    break;
  default: {
    // A failed configuration is the command's error: one report, with the results in json.
    bool interrupted = result.status == add::JobStatus::interrupted;
    std::string message = interrupted ? "interrupted: " + result.message
                                      : "could not add " + result.label + " to the cache: " + result.message;
    int code = interrupted ? interrupted_code : k_exit_error;
    data["error"] = message;
    data["hint"] = job_hint(result, invocation.context());
    data["exit_code"] = code;
    out.result("", data, "");
    out.error_line(message, job_hint(result, invocation.context()));
    return code;
  }
  }
  out.result(human, data,
             result.status == add::JobStatus::added     ? result.registry_files.front()
             : result.status == add::JobStatus::planned ? command_text(result.command)
                                                        : "");
  return k_exit_ok;
}

Output::Table manifest_table(const AddPlan& plan, const std::vector<add::JobResult>& results, const AddTally& tally)
{
  Output::Table table;
  table.headers = {"STATUS", "MODEL", "TASK", "CONFIGURATION", "ENTRIES", "TIME"};
  table.right_aligned = {false, false, false, false, true, true};
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& result = results[i];
    table.rows.push_back({status_word(result.status), plan.jobs[i].model.model_id, plan.jobs[i].configuration.task,
                          plan.jobs[i].configuration.summary(),
                          result.status == add::JobStatus::added ? std::to_string(result.entries.size()) : "-",
                          human_duration(static_cast<double>(result.elapsed.count()) / 1000.0)});
  }
  table.footer = count_of(results.size(), "configuration") + ": " + std::to_string(tally.added) + " added, "
                 + std::to_string(tally.registered) + " already registered, "
                 + (tally.planned > 0 ? std::to_string(tally.planned) + " would run, " : "")
                 + std::to_string(tally.failed) + " failed"
                 + (tally.not_run > 0 ? ", " + std::to_string(tally.not_run) + " not run" : "") + ".";
  return table;
}

// A manifest run: a table of its configurations, the dry run's commands, and one error
// (the first failure, or the interrupt) for the whole run.
int report_manifest_add(Invocation& invocation, const AddPlan& plan, const std::vector<add::JobResult>& results,
                        const AddTally& tally, nlohmann::json& data, int signal, int interrupted_code)
{
  auto& out = invocation.out();
  // A failing run reports as every failing command does: the error object's fields in the
  // document (beside the per-job results) and one error line on stderr.
  std::string error_message, error_hint;
  int error_code = k_exit_ok;
  if (signal != 0) {
    error_message = "interrupted; nothing half-pushed";
    error_hint = "run the same command again to continue";
    error_code = interrupted_code;
  } else if (tally.failed > 0) {
    auto first = std::find_if(results.begin(), results.end(),
                              [](const add::JobResult& result) { return result.status == add::JobStatus::failed; });
    error_message = tally.failed == 1
                      ? "could not add " + first->label + " to the cache: " + first->message
                      : std::to_string(tally.failed) + " of " + count_of(results.size(), "configuration")
                          + " failed; the first: " + first->label + ": " + first->message;
    error_hint = tally.failed == 1 ? job_hint(*first, invocation.context()) : std::string();
    error_hint += (error_hint.empty() ? "" : "; ") + std::string("a re-run skips the configurations already added");
    error_code = k_exit_error;
  }
  if (error_code != k_exit_ok) {
    data["error"] = error_message;
    data["hint"] = error_hint;
    data["exit_code"] = error_code;
  }
  // A dry run's commands are its data: on stdout, after the table (alone with -q).
  std::string planned_human, planned_quiet;
  for (const auto& result : results) {
    if (result.status == add::JobStatus::planned) {
      planned_human += "would run for " + result.label + ": " + command_text(result.command) + "\n";
      planned_quiet += command_text(result.command) + "\n";
    }
  }
  if (out.is_json()) {
    out.result("", data, "");
  } else {
    if (planned_quiet.empty() || out.is_human()) {
      out.table(manifest_table(plan, results, tally), data, 1);
    }
    if (!planned_quiet.empty()) {
      out.result("\n" + planned_human, data, planned_quiet);
    }
  }
  // Each failure's details when there are several; one failure is the error line itself.
  if (tally.failed > 1 || signal != 0) {
    for (const auto& result : results) {
      if (result.status == add::JobStatus::failed) {
        auto hint = job_hint(result, invocation.context());
        out.warning(result.label + ": " + result.message + (hint.empty() ? "" : "; " + hint));
      }
    }
  }
  if (error_code != k_exit_ok) {
    out.error_line(error_message, error_hint);
  }
  return error_code;
}

int report_add(Invocation& invocation, const AddPlan& plan, const std::vector<add::JobResult>& results)
{
  const AddTally tally(results);
  const int signal = hubcache::util::interrupt_signal();
  auto data = add_document(invocation, plan, results, tally, signal);
  const int interrupted_code = k_exit_signal_base + (signal != 0 ? signal : SIGINT);
  if (!plan.manifest) {
    return report_single_add(invocation, plan, results.front(), data, interrupted_code);
  }
  return report_manifest_add(invocation, plan, results, tally, data, signal, interrupted_code);
}

int run_add(Invocation& invocation)
{
  auto plan = plan_add(invocation);
  hubcache::util::InterruptScope interrupt_scope;
  auto results = apply_add(invocation, plan);
  return report_add(invocation, plan, results);
}

} // namespace

CommandSpec make_add_command()
{
  CommandSpec command;
  command.name = "add";
  command.positionals = {
    {"COMMAND", ValueKind::shell_command, "The compile or training command to run, after --.", false}};
  command.summary = "Compile a model configuration (or a manifest of them) and push the result to the cache repo.";
  command.description = "Runs COMMAND (your compile or short training run) with the compile cache at a local root\n"
                        "(NEURON_COMPILE_CACHE_URL; NEURON_CC_FLAGS is kept), then pushes the compiled graphs it\n"
                        "created and a registry entry for the configuration to the cache repo in one commit.\n"
                        "COMMAND may use placeholders: {model} {model_id} {task} {batch_size} {train_batch_size}\n"
                        "{eval_batch_size} {sequence_length} {encoder_sequence_length} {decoder_sequence_length}\n"
                        "{num_cores} {precision} {auto_cast_type} {gradient_accumulation_steps} {max_steps}\n"
                        "{cache_dir}; without COMMAND, the manifest's 'command' or $NEURON_CACHE_ADD_COMMAND is used.\n"
                        "Configurations already registered in the repo are skipped. Exit 1 when a configuration\n"
                        "failed, 128+N when interrupted by signal N.";
  command.options = {
    {"m", "model", ValueKind::model, "MODEL", "Hub model id or local model directory (with config.json).", {}, {}},
    {"", "task", ValueKind::text, "TASK", "Task, e.g. text-generation, text-classification.", {}, {}},
    {"",
     "precision",
     ValueKind::choice,
     "PRECISION",
     "fp, bf16 or fp16: the model's dtype (torch_dtype in the registry entry).",
     add::precisions(),
     {}},
    {"",
     "auto-cast-type",
     ValueKind::choice,
     "TYPE",
     "bf16, fp16, tf32 or fp32: what the compiler casts fp32 operations to, recorded as optimum's exports record "
     "it (auto_cast_type); without --precision, the dtype lookup shows.",
     add::auto_cast_types(),
     {}},
    {"", "num-cores", ValueKind::integer, "N", "Neuron cores the run uses.", {}, {}},
    {"",
     "train-batch-size",
     ValueKind::integer,
     "N",
     "Batch size: the training batch size, or an inference model's static batch size.",
     {},
     {"batch-size"}},
    {"", "eval-batch-size", ValueKind::integer, "N", "Evaluation batch size (default: the train batch size).", {}, {}},
    {"", "sequence-length", ValueKind::integer, "N", "Sequence length.", {}, {}},
    {"",
     "encoder-sequence-length",
     ValueKind::integer,
     "N",
     "Encoder sequence length (encoder-decoder models).",
     {},
     {}},
    {"",
     "decoder-sequence-length",
     ValueKind::integer,
     "N",
     "Decoder sequence length (encoder-decoder models).",
     {},
     {}},
    {"", "gradient-accumulation-steps", ValueKind::integer, "N", "Gradient accumulation steps (default 1).", {}, {}},
    {"", "max-steps", ValueKind::integer, "N", "Training steps of the run (default 10).", {}, {}},
    repo_id_option(),
    cache_dir_option("Local compile cache root (default: --cache_dir in NEURON_CC_FLAGS, NEURON_COMPILE_CACHE_URL, "
                     "/var/tmp/neuron-compile-cache)."),
    {"", "manifest", ValueKind::file, "FILE.yaml", "Add every configuration of a YAML manifest.", {}, {}},
    {"j", "jobs", ValueKind::integer, "N", "Manifest configurations compiled at a time (default 1).", {}, {}},
    {"", "dry-run", ValueKind::flag, "", "Show what would be compiled and pushed; change nothing.", {}, {}},
    {"", "continue-on-error", ValueKind::flag, "", "Keep going after a configuration fails (manifest).", {}, {}},
    {"", "force", ValueKind::flag, "", "Compile even configurations the repo already registers.", {}, {}},
    {"", "timeout", ValueKind::integer, "SECONDS", "Terminate a command running longer than this.", {}, {}},
    max_workers_option(),
    no_xet_option(),
    token_option(),
  };
  for (auto& option : aws_options()) {
    command.options.push_back(std::move(option));
  }
  command.examples = {"neuron-cache add -m bert-base-uncased --task text-classification --precision bf16 --num-cores 2 "
                      "--train-batch-size 16 --sequence-length 128 -- torchrun --nproc_per_node 2 train.py",
                      "neuron-cache add -m distilbert-base-uncased --task text-classification --batch-size 1 "
                      "--sequence-length 128 --num-cores 1 --auto-cast-type fp16 -- optimum-cli export neuron "
                      "--model {model} --task {task} --batch_size {batch_size} --sequence_length {sequence_length} "
                      "--auto_cast matmul --auto_cast_type {auto_cast_type} /tmp/out",
                      "neuron-cache add --manifest examples/add-manifest.yaml --jobs 2",
                      "neuron-cache add --manifest ci.yaml --dry-run --json"};
  command.run = run_add;
  return command;
}

} // namespace neuron_cache
