// `neuron-cache create [NAME]`: make an empty cache repo and set it locally.
#include "commands.hpp"

#include <hubcache/error.hpp>
#include <hubcache/storage/repo_choice.hpp>

namespace neuron_cache {

namespace {

constexpr const char* k_default_repo_name = "optimum-neuron-cache";

int run_create(Invocation& invocation)
{
  auto positional = invocation.positional("NAME");
  auto option = invocation.value("name");
  if (positional && option && *positional != *option) {
    throw UsageError("give the repo name once, either as NAME or with --name");
  }
  std::string name = positional ? *positional : option.value_or(k_default_repo_name);
  auto spec = repo_from_argument(invocation, name, positional ? "NAME" : option ? "--name" : "default NAME").spec;
  bool is_public = invocation.has("public");
  bool set = !invocation.has("no-set");
  if (is_public && spec.kind == hubcache::storage::RepoKind::directory) {
    invocation.out().warning("--public has no effect on a directory repo; its file permissions decide who reads it");
  }
  if (is_public && spec.kind == hubcache::storage::RepoKind::s3) {
    invocation.out().warning("--public has no effect on an S3 repo; the bucket's policy decides who reads it");
  }

  const auto& env = invocation.env();
  auto config_file = hubcache::storage::choice_file_for(spec, env);
  // Refuse before creating anything we could not then register.
  if (set) {
    hubcache::storage::ensure_config_writable(config_file);
  }

  auto repo = open_repository(invocation, spec);
  // A bucket that does not exist yet is a repo that does not exist yet: create makes both.
  bool existed = invocation.has("exist-ok") && hubcache::storage::exists_yet(*repo);
  auto created = repo->create({.is_private = !is_public, .exist_ok = invocation.has("exist-ok")});
  warn_skipped_paths(invocation.out(), *repo); // what an adopted compile cache holds that is not served

  auto previous = hubcache::storage::recorded_repo_choice(env);
  if (set && previous && *previous != created) {
    invocation.out().warning("A custom cache repo was already registered: " + *previous + ". It will be overwritten to "
                             + created + ". Pass --no-set to create a repo without making it this host's default.");
  }
  if (set) {
    hubcache::storage::record_repo_choice(hubcache::storage::parse_repo_spec(created), created, env);
  }

  std::string visibility = spec.kind == hubcache::storage::RepoKind::directory ? "directory"
                           : spec.kind == hubcache::storage::RepoKind::s3      ? "s3"
                                                                               : (is_public ? "public" : "private");
  std::string human = (existed ? "Neuron cache already exists: " : "Neuron cache created: ") + created + " ["
                      + visibility + "].\n"
                      + (set ? "Neuron cache name set locally to " + created + " in " + config_file.string() + "."
                             : "Not set as this host's cache repo (--no-set); use it with --repo-id " + created + ".");
  invocation.out().result(human,
                          {{"repo", created},
                           {"created", !existed},
                           {"visibility", visibility},
                           {"set", set},
                           {"config_file", config_file.string()},
                           {"previous", previous ? nlohmann::json(*previous) : nlohmann::json(nullptr)}},
                          created);
  return k_exit_ok;
}

} // namespace

CommandSpec make_create_command()
{
  CommandSpec command;
  command.name = "create";
  command.summary = "Create an empty cache repo and set it as this host's cache repo.";
  command.description =
    "NAME is a Hub repo (org/name, or name under your own account; default optimum-neuron-cache)\n"
    "or a directory (/abs/path, ./rel/path or file:///abs/path) on local disk, NFS or FSx for Lustre, made a\n"
    "plain Neuron compile cache, s3://bucket/prefix (the bucket is made when missing and allowed), or a Storage\n"
    "Bucket hf://buckets/ns/name (private unless --public).\n"
    "Hub repos are recorded in optimum-neuron's file, others in neuron-cache's own (see 'set').";
  command.positionals = {{"NAME", ValueKind::repo, "The repo to create (same as --name).", false}};
  command.options = {
    {"n", "name", ValueKind::repo, "NAME", "The repo to create (default: optimum-neuron-cache on the Hub).", {}, {}},
    {"", "public", ValueKind::flag, "", "Make a Hub repo public (default: private).", {}, {}},
    {"", "exist-ok", ValueKind::flag, "", "Succeed when the repo already exists (still sets it).", {}, {}},
    {"",
     "no-set",
     ValueKind::flag,
     "",
     "Only create: keep this host's cache repo as it is (e.g. a repo for CI).",
     {},
     {}},
    token_option(),
  };
  for (auto& option : aws_options()) {
    command.options.push_back(std::move(option));
  }
  command.examples = {"neuron-cache create /fsx/neuron-cache-repo", "neuron-cache create -n my-org/neuron-cache",
                      "neuron-cache create my-org/neuron-cache-ci --no-set",
                      "neuron-cache create s3://my-bucket/neuron-cache",
                      "neuron-cache create /fsx/neuron-cache-repo --exist-ok --json"};
  command.run = run_create;
  return command;
}

} // namespace neuron_cache
