#pragma once

#include "registry/lookup.hpp"

#include <hubcache/storage/repo_spec.hpp>
#include <hubcache/storage/repository.hpp>
#include <hubcache/util/environment.hpp>
#include <hubcache/util/process.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

// `add`: populate a cache repo by running a compilation (optimum-cli's `cache add`), for
// one configuration or many. The run fills a local compile cache; the SUCCESS entries it
// created and the registry entry describing the configuration are then pushed in one
// commit, so the repo never lists a configuration whose NEFFs are missing.
namespace addjobs {

// Registry version directory our entries go under (the level optimum fills with its own
// version). A name optimum never uses, so optimum's lookup never reads a training entry
// it would not understand; our lookup reads every registry version.
inline constexpr std::string_view k_registry_version = "neuron-cache-add-1";
inline constexpr std::string_view k_command_env = "NEURON_CACHE_ADD_COMMAND";

// The precisions a configuration may name: optimum's training ones (fp, bf16) and fp16,
// as inference models are often compiled.
const std::vector<std::string>& precisions();
// The auto-cast types optimum records (auto_cast_type in a registry entry's neuron
// config): bf16, fp16, tf32 (traced models) and fp32 (decoders).
const std::vector<std::string>& auto_cast_types();

// One compiled configuration, in optimum's `cache add` terms.
struct Configuration {
  std::string task;
  std::string precision; // one of precisions(); empty when only auto_cast_type says it
  // What the compiler casts fp32 operations to (--auto-cast-type), as an inference export
  // records it; also the dtype lookup shows when no precision is given.
  std::optional<std::string> auto_cast_type;
  long long num_cores = 0;
  long long train_batch_size = 0;
  std::optional<long long> eval_batch_size; // defaults to train_batch_size
  std::optional<long long> sequence_length;
  std::optional<long long> encoder_sequence_length;
  std::optional<long long> decoder_sequence_length;
  long long gradient_accumulation_steps = 1;
  long long max_steps = 10;

  long long effective_eval_batch_size() const { return eval_batch_size.value_or(train_batch_size); }
  // Throws InvalidArgument with optimum's messages for a sequence-length mix-up and
  // ours for values out of range.
  void validate() const;
  // "bs=4 seq=128 cores=2 bf16" (shapes as given; " cast=fp16" with an auto-cast type),
  // for labels and commit messages.
  std::string summary() const;
};

// The model a configuration belongs to: its id and its config.json.
struct Model {
  std::string spec;                               // as given: Hub id or directory
  std::string model_id;                           // the id the registry files it under
  std::optional<std::filesystem::path> directory; // local models
  nlohmann::json config;
};

// Reads config.json of a local directory, or of a Hub model through
// /resolve/main/config.json. A local directory's id is the `_name_or_path` of its config
// when that is a Hub-style id, else the directory name.
Model load_model(const std::string& spec, const hubcache::util::Environment& env,
                 const std::optional<std::string>& token);

// Compiler flags from a NEURON_CC_FLAGS value minus the wrapper's own options
// (--cache_dir, --retry_failed_compilation, --log_level...): what the registry records.
std::vector<std::string> compiler_flags(std::string_view cc_flags);
// NEURON_CC_FLAGS without --cache_dir, so NEURON_COMPILE_CACHE_URL decides the root.
std::string without_cache_dir(std::string_view cc_flags);

// The "neuron" dict of the registry entry: shapes, precision, cores, compiler version
// and flags. Keys are those lookup filters read (batch_size, sequence_length,
// num_cores, torch_dtype) plus the training ones.
nlohmann::json neuron_config(const Configuration& configuration, const std::string& model_id,
                             const std::string& compiler_version, const std::vector<std::string>& flags);
// True when a stored neuron config describes the same configuration (compiler version
// only compared when `compiler_version` is given).
bool same_configuration(const nlohmann::json& stored, const nlohmann::json& wanted,
                        const std::optional<std::string>& compiler_version);

// --- command templates ---------------------------------------------------------------

// Placeholder values for a job: model, model_id, task, batch_size, train_batch_size,
// eval_batch_size, sequence_length, encoder_sequence_length, decoder_sequence_length,
// num_cores, precision, auto_cast_type, gradient_accumulation_steps, max_steps, cache_dir
// (those the configuration leaves unset have none).
std::map<std::string, std::string> template_values(const Model& model, const Configuration& configuration,
                                                   const std::filesystem::path& cache_dir);
std::vector<std::string> known_placeholders();
// The `{name}` placeholders a template uses.
std::set<std::string> placeholders_in(const std::vector<std::string>& words);
// batch_size, train_batch_size, eval_batch_size, sequence_length and the encoder/decoder
// lengths: a template using none of them compiles the same shape for every
// configuration, so the shape registered for it is only what the configuration claims.
const std::vector<std::string>& shape_placeholders();
bool uses_shape_placeholders(const std::vector<std::string>& words);
// Expands `{name}` placeholders in each word; `{{` and `}}` give literal braces; braces
// around anything that is not an identifier are left alone (JSON arguments). Throws
// InvalidArgument for an unknown placeholder or one without a value.
std::vector<std::string> expand_command(const std::vector<std::string>& words,
                                        const std::map<std::string, std::string>& values);

// --- running -------------------------------------------------------------------------

struct Job {
  Model model;
  Configuration configuration;
  std::vector<std::string> command_template; // words, placeholders unexpanded
  // Extra variables for the command (a manifest's `env`). Decisions that depend on the
  // environment (flags, cache root) are taken once from Settings, which the caller
  // computes from the same overlay.
  std::map<std::string, std::string> environment;
  std::optional<std::chrono::seconds> timeout;
  std::string label() const; // "org/model text-generation bs=4 seq=128 cores=2 bf16"
};

enum class JobStatus { added, already_registered, planned, failed, interrupted, not_run };
std::string to_string(JobStatus status);

struct JobResult {
  JobStatus status = JobStatus::not_run;
  std::string label;
  std::string model_id;
  std::string message;              // why it failed / what was done
  std::string hint;                 // a next step that names no program
  std::exception_ptr error;         // the library error that failed it, if one did
  bool created_nothing = false;     // the command succeeded but left no new entry
  std::vector<std::string> command; // expanded
  std::vector<std::string> entries; // MODULE dirs pushed
  std::vector<std::string> registry_files;
  std::string compiler_version;
  std::optional<std::string> revision;
  std::vector<std::string> output_tail; // last lines of the command's output (piped runs)
  std::chrono::milliseconds elapsed{0};
  nlohmann::json to_json() const;
};

struct Settings {
  std::filesystem::path cache_root; // the local compile cache (shared root)
  // Manifest runs give each job its own root below this directory, so concurrent jobs
  // neither see each other's entries nor wait on each other's locks; the results are
  // then installed into cache_root. Empty: jobs compile straight into cache_root.
  std::optional<std::filesystem::path> staging_directory;
  // NEURON_CC_FLAGS as the command sees it (a manifest's `env` over the process's): the
  // registered check, the recorded flags and the command's own variable all use it.
  std::string cc_flags;
  bool dry_run = false;
  bool force = false;                          // run even when the configuration is registered
  std::optional<std::string> compiler_version; // pins matching of registered configurations
  std::chrono::milliseconds termination_grace{5000};
  // Piped output, e.g. prefixed with the job label; unset: the command writes to our stderr.
  std::function<void(const Job&, hubcache::util::ProcessStream, std::string_view)> on_line;
  std::function<void(const Job&, const std::string& event)> on_event; // "compiling", "pushing"...
};

// Runs jobs against one repo. Thread-safe: commits and repo reads are serialized
// (backends need not be thread-safe); commands run concurrently.
class CommitBatcher;

class Runner {
public:
  Runner(hubcache::storage::Repository& repo, Settings settings);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // True when the repo registers the configuration of `job` (the repo is listed once,
  // then only the model's own registry files are read; our commits are remembered).
  bool is_registered(const Job& job);
  JobResult run(const Job& job);
  // Runs up to `parallelism` jobs at a time; stops starting new ones after a failure
  // unless `continue_on_error`, and after an interrupt. Results in job order.
  std::vector<JobResult> run_all(const std::vector<Job>& jobs, unsigned parallelism, bool continue_on_error);

  const Settings& settings() const { return m_settings; }

private:
  JobResult execute(const Job& job, const std::filesystem::path& root, JobResult result);
  void load_registered(const std::string& model_id);

  hubcache::storage::Repository& m_repo;
  Settings m_settings;
  std::mutex m_repo_mutex;
  std::optional<registry::RegistryIndex> m_index; // the repo's registry paths, listed once
  std::set<std::string> m_loaded_models;
  // model_id -> neuron configs of its registered entries
  std::multimap<std::string, nlohmann::json> m_registered;
  // model_id -> configurations from add's attribution records (read with the listing)
  std::multimap<std::string, nlohmann::json> m_recorded;
  unsigned m_job_counter = 0;
  // Registrations finished close together share a commit (commit_batcher.hpp).
  std::unique_ptr<CommitBatcher> m_batcher;
};

// --- preconditions -------------------------------------------------------------------

struct PreconditionReport {
  bool public_default_repo = false; // pushing to the shared aws-neuron default
};
// Checked before anything compiles: the repo exists and we can write to it (for a Hub
// repo: a token first). Reports when the repo is the public default.
PreconditionReport check_preconditions(hubcache::storage::Repository& repo);

} // namespace addjobs
