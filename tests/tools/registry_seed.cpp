// Test-only: writes registry entries into a cache repo through the real Repository::commit
// (a directory repo, or a Hub repo via HF_ENDPOINT/HF_TOKEN), so lookup/list tests and
// benchmarks have data without compiling anything.
//
//   registry_seed REPO entry --model-id ID --task TASK --config FILE|JSON --neuron JSON
//                 --compiler-version V --registry-version R [--layout alias|digest|both|inference|training]
//                 [--module-size BYTES]
//   registry_seed REPO raw PATH_IN_REPO CONTENT|@FILE
//   registry_seed REPO synthetic ENTRIES [--layout alias|both]
#include <hubcache/error.hpp>
#include <hubcache/storage/factory.hpp>
#include <hubcache/storage/repo_spec.hpp>
#include <hubcache/util/environment.hpp>
#include <hubcache/util/fs.hpp>
#include <registry/entry.hpp>
#include <registry/json_text.hpp>
#include <registry/layout.hpp>

#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

std::map<std::string, std::string> parse_options(const std::vector<std::string>& args, std::size_t from)
{
  std::map<std::string, std::string> options;
  for (std::size_t i = from; i < args.size(); i += 2) {
    if (args[i].rfind("--", 0) != 0 || i + 1 >= args.size()) {
      throw hubcache::InvalidArgument("expected --option VALUE pairs, got '" + args[i] + "'");
    }
    options[args[i].substr(2)] = args[i + 1];
  }
  return options;
}

std::string required(const std::map<std::string, std::string>& options, const std::string& name)
{
  auto found = options.find(name);
  if (found == options.end()) {
    throw hubcache::InvalidArgument("missing --" + name);
  }
  return found->second;
}

nlohmann::json json_argument(const std::string& text)
{
  if (!text.empty() && (text.front() == '{' || text.front() == '[')) {
    return registry::parse_json(text, "argument");
  }
  return registry::parse_json(hubcache::util::read_file(text), text);
}

void add_entry(hubcache::storage::CommitRequest& request, const registry::CacheEntry& entry,
               const std::string& compiler, const std::string& registry_version, const std::string& layout)
{
  auto content = entry.serialize();
  if (layout == "alias" || layout == "both") {
    request.additions.push_back(
      {registry::registry_path(compiler, registry_version, entry), hubcache::storage::FileSource::from_bytes(content)});
  }
  if (layout == "digest" || layout == "both") {
    request.additions.push_back({registry::digest_registry_path(compiler, registry_version, entry),
                                 hubcache::storage::FileSource::from_bytes(content)});
  }
  if (layout == "inference" || layout == "training") {
    request.additions.push_back({registry::registry_root(compiler, registry_version) + "/" + layout + "/"
                                   + entry.model_type + "/" + entry.model_id + "/" + entry.hash() + ".json",
                                 hubcache::storage::FileSource::from_bytes(content)});
  }
}

void synthetic(hubcache::storage::CommitRequest& request, long entries, const std::string& layout)
{
  const std::vector<std::string> types = {"llama", "mistral", "qwen2", "granite"};
  const std::vector<std::string> compilers = {"2.21.33363.0+82129205", "2.20.2.0+75fd9e1a"};
  const int batches[] = {1, 2, 4, 8, 16};
  const int sequences[] = {1024, 2048, 4096, 8192};
  for (long i = 0; i < entries; ++i) {
    long model = i / 20;
    long variant = i % 20;
    auto model_type = types[static_cast<std::size_t>(model) % types.size()];
    nlohmann::json config = {{"model_type", model_type},
                             {"hidden_size", 1024 + 64 * model},
                             {"num_hidden_layers", 16 + model % 16},
                             {"rms_norm_eps", 1e-05},
                             {"rope_theta", 500000.0}};
    nlohmann::json neuron = {{"batch_size", batches[variant % 5]},
                             {"sequence_length", sequences[variant / 5]},
                             {"tp_degree", 2 << (model % 3)},
                             {"torch_dtype", "bfloat16"},
                             {"target", model % 2 == 0 ? "trn1" : "trn2"}};
    auto entry = registry::make_registry_entry("org" + std::to_string(model % 10) + "/model-" + std::to_string(model),
                                               std::string("text-generation"), config, neuron);
    add_entry(request, entry, compilers[static_cast<std::size_t>(model) % compilers.size()], "0.4.5", layout);
  }
}

int run(const std::vector<std::string>& args)
{
  if (args.size() < 2) {
    std::cerr << "usage: registry_seed REPO {entry|raw|synthetic} ...\n";
    return 2;
  }
  auto env = hubcache::util::Environment::process();
  auto repo = hubcache::storage::open_repository(hubcache::storage::parse_repo_spec(args[0]), env);
  if (!repo->exists()) {
    repo->create({.is_private = true, .exist_ok = true});
  }
  hubcache::storage::CommitRequest request;
  request.message = "registry_seed " + args[1];
  const auto& mode = args[1];
  if (mode == "entry") {
    auto options = parse_options(args, 2);
    auto task = options.count("task") != 0U ? std::optional(options["task"]) : std::nullopt;
    auto entry =
      registry::make_registry_entry(required(options, "model-id"), task, json_argument(required(options, "config")),
                                    json_argument(required(options, "neuron")));
    auto compiler = required(options, "compiler-version");
    auto layout = options.count("layout") != 0U ? options["layout"] : "alias";
    add_entry(request, entry, compiler, required(options, "registry-version"), layout);
    if (options.count("module-size") != 0U) {
      request.additions.push_back(
        {"neuronxcc-" + compiler + "/MODULE_" + entry.hash() + "/model.neuron",
         hubcache::storage::FileSource::from_bytes(std::string(std::stoul(options["module-size"]), 'x'))});
    }
    std::cout << entry.hash() << "\n";
  } else if (mode == "raw" && args.size() == 4) {
    // @FILE: content too large for one argument.
    auto content = args[3].starts_with("@") ? hubcache::util::read_file(args[3].substr(1)) : args[3];
    request.additions.push_back({args[2], hubcache::storage::FileSource::from_bytes(std::move(content))});
  } else if (mode == "synthetic" && args.size() >= 3) {
    auto options = parse_options(args, 3);
    synthetic(request, std::stol(args[2]), options.count("layout") != 0U ? options["layout"] : "both");
  } else {
    std::cerr << "registry_seed: unknown mode or wrong arguments\n";
    return 2;
  }
  repo->commit(request);
  return 0;
}

} // namespace

int main(int argc, char** argv)
{
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& error) {
    std::cerr << "registry_seed: " << error.what() << "\n";
    return 1;
  }
}
