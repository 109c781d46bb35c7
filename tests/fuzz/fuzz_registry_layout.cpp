// Where `add` files a registry entry: registry_path and digest_registry_path, from model
// ids, model types, tasks and versions as users and compile caches give them. Properties:
// either InvalidArgument, or a valid repo path that parse_registry_path classifies back
// to the same model, type, versions and file name, so lookup finds what add wrote.
#include "fuzz_support.hpp"

#include <hubcache/storage/repository.hpp>
#include <registry/entry.hpp>
#include <registry/layout.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  // compiler version \n registry version \n model id \n model type \n task
  auto parts = fuzz::fields(fuzz::text_of(data, size), 5);
  std::string compiler_version(parts[0]);
  std::string registry_version(parts[1]);
  std::string model_id(parts[2]);
  std::string model_type(parts[3]);
  std::optional<std::string> task;
  if (!parts[4].empty()) {
    task = std::string(parts[4]);
  }
  registry::CacheEntry entry;
  if (!fuzz::accepts([&] {
        entry = registry::make_registry_entry(model_id, task, {{"model_type", model_type}, {"hidden_size", 64}},
                                              {{"batch_size", 1}, {"sequence_length", 128}});
      })) {
    return 0;
  }
  FUZZ_CHECK(entry.model_id == model_id && entry.model_type == model_type, "the entry changed its names");

  std::string alias;
  if (fuzz::accepts([&] { alias = registry::registry_path(compiler_version, registry_version, entry); })) {
    FUZZ_CHECK(hubcache::storage::is_valid_path_in_repo(alias), "registry_path made an invalid repo path: " + alias);
    auto parsed = registry::parse_registry_path(alias);
    FUZZ_CHECK(parsed && parsed->kind == registry::RegistryPathKind::alias, "not read back as an alias: " + alias);
    FUZZ_CHECK(parsed->model_id == model_id, "model id read back differs: " + alias);
    FUZZ_CHECK(parsed->model_type == model_type, "model type read back differs: " + alias);
    FUZZ_CHECK(parsed->compiler_version == compiler_version, "compiler version read back differs: " + alias);
    FUZZ_CHECK(parsed->registry_version == registry_version, "registry version read back differs: " + alias);
    FUZZ_CHECK(parsed->file_hash == entry.hash(), "file name read back differs: " + alias);
  }
  std::string digest;
  if (fuzz::accepts([&] { digest = registry::digest_registry_path(compiler_version, registry_version, entry); })) {
    FUZZ_CHECK(hubcache::storage::is_valid_path_in_repo(digest), "digest path is not a valid repo path: " + digest);
    auto parsed = registry::parse_registry_path(digest);
    FUZZ_CHECK(parsed && parsed->kind == registry::RegistryPathKind::digest, "not read back as a digest: " + digest);
    FUZZ_CHECK(parsed->arch_digest == entry.arch_digest(), "arch digest read back differs: " + digest);
    FUZZ_CHECK(parsed->compiler_version == compiler_version, "compiler version read back differs: " + digest);
    FUZZ_CHECK(parsed->registry_version == registry_version, "registry version read back differs: " + digest);
    FUZZ_CHECK(parsed->file_hash == entry.hash(), "file name read back differs: " + digest);
  }
  return 0;
}
