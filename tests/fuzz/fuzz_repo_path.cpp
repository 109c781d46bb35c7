// Paths inside a repo, as listings from a shared repo give them: the path check every
// backend applies before installing a file, and the compile-cache entry names
// (MODULE_<key>[+<flags hash>]). Properties: the throwing and the boolean check agree; an
// accepted path cannot escape (no absolute path, no '..', no control characters); a
// parsed module name rebuilds the name.
#include "fuzz_support.hpp"

#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/storage/repository.hpp>

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  auto path = fuzz::text_of(data, size);
  bool valid = hubcache::storage::is_valid_path_in_repo(path);
  bool validated = fuzz::accepts([&] { hubcache::storage::validate_path_in_repo(path); });
  FUZZ_CHECK(valid == validated, "is_valid_path_in_repo and validate_path_in_repo disagree");
  if (valid) {
    std::filesystem::path relative{std::string(path)};
    FUZZ_CHECK(relative.is_relative() && !relative.has_root_path(), "an absolute path was accepted");
    for (const auto& part : relative) {
      FUZZ_CHECK(part != ".." && part != "." && part != ".git" && !part.empty(), "an escaping part was accepted");
    }
    FUZZ_CHECK(std::none_of(path.begin(), path.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }),
               "a control character was accepted");
    auto joined = (std::filesystem::path("/cache/root") / relative).lexically_normal();
    auto root_part = joined.string().substr(0, std::string("/cache/root/").size());
    FUZZ_CHECK(root_part == "/cache/root/", "the path escapes the directory it is installed in");
  }

  auto name = hubcache::compilecache::parse_module_name(path);
  if (name) {
    std::string rebuilt = "MODULE_" + name->key;
    if (name->flags_suffix) {
      rebuilt += "+" + *name->flags_suffix;
    }
    FUZZ_CHECK(rebuilt == path, "the module name does not rebuild: " + rebuilt);
    FUZZ_CHECK(hubcache::storage::is_valid_path_in_repo(path), "a module name is not a valid repo path");
  }
  return 0;
}
