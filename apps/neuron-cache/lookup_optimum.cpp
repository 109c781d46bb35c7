// `lookup --optimum MODEL`: what `optimum-cli neuron cache lookup MODEL` (optimum-neuron
// main) answers, for scripts that compare the two.
#include "lookup_optimum.hpp"
#include "commands.hpp"

#include <hubcache/error.hpp>
#include <hubcache/hub/api.hpp>
#include <hubcache/storage/repo_choice.hpp>
#include <hubcache/util/environment.hpp>
#include <registry/json_text.hpp>
#include <registry/optimum_view.hpp>

#include <algorithm>
#include <filesystem>

namespace neuron_cache {

namespace {

// /api/models/<id> with what optimum's task inference reads.
nlohmann::json hub_model_info(Invocation& invocation, const std::string& model)
{
  hubcache::hub::HubApi api(hubcache::hub::HubConfig::from_environment(invocation.env(), invocation.value("token")));
  hubcache::http::Request request;
  request.url = api.api_url(model, "");
  request.url.pop_back();
  request.url += "?expand=pipeline_tag&expand=transformersInfo&expand=config";
  request.headers = api.auth_headers();
  auto response = api.call(request, api.context("read the model info of " + model, model));
  return registry::parse_json(response.body, model + " model info");
}

struct OptimumModel {
  registry::ModelConfigs configs;
  std::string task;
};

// ModelCacheEntry.create's sources, and the task TasksManager.infer_task_from_model gives
// when --task is not given.
OptimumModel optimum_model(Invocation& invocation, const std::string& model, std::optional<std::string> task)
{
  OptimumModel result;
  auto local = hubcache::util::expand_user(model, invocation.env());
  std::error_code error;
  if (std::filesystem::exists(local, error)) {
    if (!std::filesystem::is_directory(local, error)) {
      throw hubcache::InvalidArgument(model + " is a file: optimum-cli's lookup takes a model directory or a Hub id");
    }
    if (!task) {
      throw hubcache::InvalidArgument("Cannot infer the task from a local directory yet, please specify the task "
                                      "manually (optimum-cli fails the same way)",
                                      "give --task");
    }
    result.configs = *registry::read_local_model(local);
    result.task = *task;
    return result;
  }
  if (!hubcache::storage::is_valid_hub_repo_id(model)) {
    throw hubcache::InvalidArgument("model '" + model + "' is neither an existing local path nor a Hub model id",
                                    "give a model directory or a Hub id such as org/name");
  }
  auto files = hub_model_files(invocation, model);
  auto has = [&](std::string_view name) { return std::find(files.begin(), files.end(), name) != files.end(); };
  if (has("config.json")) {
    result.configs = registry::model_configs_from_text(
      hubcache::hub::download_hub_file_text(invocation.env(), invocation.value("token"), model, "config.json"),
      model + "/config.json");
  } else if (has("model_index.json")) {
    result.configs = hub_pipeline_configs(invocation, model);
  } else {
    throw hubcache::InvalidArgument("Unable to evaluate model type for " + model
                                    + ": is it a diffusers or transformers model ?");
  }
  if (!task) {
    task = registry::infer_optimum_task(hub_model_info(invocation, model), files,
                                        result.configs.multi_model ? nlohmann::json() : result.configs.config);
    if (!task) {
      throw hubcache::InvalidArgument("Could not find the proper task name for the model " + model
                                        + " (the Hub gives it no pipeline tag; optimum-cli fails the same way)",
                                      "give --task");
    }
  }
  result.task = *task;
  return result;
}

} // namespace

int run_optimum_lookup(Invocation& invocation)
{
  for (const char* own : {"mode", "table", "blocks"}) {
    if (invocation.has(own)) {
      throw UsageError(std::string("--") + own + " is neuron-cache's own view; --optimum prints optimum-cli's table");
    }
  }
  registry::OptimumFilters filters;
  filters.dtype = invocation.value("dtype");
  if (filters.dtype && *filters.dtype != "bfloat16" && *filters.dtype != "float16") {
    throw UsageError("--dtype must be bfloat16 or float16 with --optimum (optimum-cli's choices)");
  }
  filters.instance_type = invocation.value("instance-type");
  filters.batch_size = invocation.integer("batch-size", 1);
  filters.sequence_length = invocation.integer("sequence-length", 1);
  filters.tensor_parallel_size = invocation.integer("num-cores", 1);
  registry::OptimumPins pins;
  if (auto version = invocation.value("compiler-version")) {
    pins.compiler_version = *version;
  }
  if (auto version = invocation.value("registry-version")) {
    pins.registry_version = *version;
  }

  auto model = *invocation.positional("MODEL");
  auto source = optimum_model(invocation, model, invocation.value("task"));
  auto digest = registry::optimum_arch_digest(source.configs, source.task);

  auto resolved = resolve_repo(invocation);
  auto repo = open_existing_repository(invocation, resolved);
  auto answer = registry::optimum_main_lookup(
    *repo, [&] { return open_repository(invocation, resolved.spec); }, resolved.spec.canonical(), digest, pins, filters,
    static_cast<unsigned>(max_workers(invocation)));
  warn_skipped_paths(invocation.out(), *repo);
  // Printed whatever the format, so every format fails where optimum-cli does.
  auto human = registry::optimum_main_output(model, answer.entries);

  nlohmann::json entries = nlohmann::json::array();
  std::string quiet;
  for (const auto& loaded : answer.entries) {
    entries.push_back(lookup_entry_json(loaded, registry::MatchReason::arch_digest));
    quiet += loaded.location.path + "\n";
  }
  nlohmann::json data = {{"model", model},
                         {"repo", resolved.spec.canonical()},
                         {"entries", std::move(entries)},
                         {"optimum",
                          {{"registry_version", pins.registry_version},
                           {"compiler_pin", pins.compiler_version},
                           {"compiler_dir", answer.compiler_dir},
                           {"task", source.configs.multi_model ? nlohmann::json(nullptr) : nlohmann::json(source.task)},
                           {"arch_digest", answer.arch_digest}}}};
  invocation.out().result(human, data, quiet);
  return k_exit_ok;
}

} // namespace neuron_cache
