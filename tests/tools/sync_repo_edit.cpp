// sync_repo_edit: commits arbitrary changes to a directory cache repo, so tests can build
// repo states synchronize never produces itself (an entry without model.done, a failed
// entry, a lock file...). Goes through DirectoryRepository::commit like any writer.
//
// Usage: sync_repo_edit REPO_DIR [delete PATH]... [add PATH_IN_REPO LOCAL_FILE]...
#include <hubcache/error.hpp>
#include <hubcache/storage/directory_repository.hpp>

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << "usage: sync_repo_edit REPO_DIR [delete PATH]... [add PATH_IN_REPO LOCAL_FILE]...\n";
    return 2;
  }
  try {
    hubcache::storage::DirectoryRepository repo(args[0]);
    hubcache::storage::CommitRequest request;
    request.message = "sync_repo_edit";
    for (std::size_t i = 1; i < args.size();) {
      if (args[i] == "delete" && i + 1 < args.size()) {
        request.deletions.push_back({args[i + 1], false});
        i += 2;
      } else if (args[i] == "add" && i + 2 < args.size()) {
        request.additions.push_back({args[i + 1], hubcache::storage::FileSource::from_file(args[i + 2])});
        i += 3;
      } else {
        std::cerr << "sync_repo_edit: cannot understand '" << args[i] << "'\n";
        return 2;
      }
    }
    auto result = repo.commit(request);
    std::cout << result.revision << "\n";
  } catch (const hubcache::Error& error) {
    std::cerr << "sync_repo_edit: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
