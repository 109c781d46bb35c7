#include "hubcache/compilecache/pull_guard.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/checked.hpp"
#include "hubcache/util/file_system.hpp"
#include "hubcache/util/process.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <system_error>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

namespace {

constexpr std::uint64_t k_block = 4096;

// The nearest existing directory at or above `path`: where a first pull's files will land.
stdfs::path existing_ancestor(stdfs::path path)
{
  std::error_code ec;
  while (!path.empty() && !stdfs::is_directory(path, ec)) {
    auto parent = path.parent_path();
    if (parent == path) {
      break;
    }
    path = std::move(parent);
  }
  return path.empty() ? stdfs::path(".") : path;
}

} // namespace

SpaceCheck space_for(const stdfs::path& root, std::uint64_t bytes, std::size_t files)
{
  SpaceCheck check;
  // Each file's last block is partly empty: counted whole, as the file system does.
  check.needed = util::saturating_add(bytes, (files > UINT64_MAX / k_block ? UINT64_MAX : files * k_block));
  auto place = existing_ancestor(root);
  check.free = util::free_bytes(place);
  check.file_system = util::file_system_of(place).name;
  return check;
}

SpaceCheck space_for_pull(const stdfs::path& root, const PullPlan& plan)
{
  return space_for(root, plan.bytes_planned, plan.files_planned);
}

SpaceCheck space_for_copy_scratch(const stdfs::path& scratch_parent, const CopyPlan& plan, const CopyOptions& options)
{
  std::uint64_t biggest_bytes = 0;
  std::size_t biggest_files = 0;
  for (const auto& copy : plan.copies) {
    biggest_bytes = std::max(biggest_bytes, copy.bytes);
    biggest_files = std::max(biggest_files, copy.to_copy.size());
  }
  // A batch closes before the entry that would pass a budget: at most the budget, or one
  // entry bigger than it alone.
  auto bytes = std::min(plan.bytes_planned, std::max(options.batch_bytes, biggest_bytes));
  auto files = std::min(plan.files_planned, std::max(options.batch_files, biggest_files));
  return space_for(scratch_parent, bytes, files);
}

bool is_no_space(const std::exception_ptr& error)
{
  try {
    std::rethrow_exception(error);
  } catch (const NoSpace&) {
    return true;
  } catch (const stdfs::filesystem_error& failure) {
    return failure.code() == std::errc::no_space_on_device || failure.code().value() == EDQUOT;
  } catch (...) {
    return false;
  }
}

bool is_interruption(const std::exception_ptr& error)
{
  try {
    std::rethrow_exception(error);
  } catch (const Interrupted&) {
    return true;
  } catch (...) {
    return false;
  }
}

void throw_if_interrupted()
{
  if (util::interrupt_signal() != 0) {
    throw Interrupted("interrupted");
  }
}

int interrupting_signal()
{
  return util::interrupt_signal();
}

} // namespace hubcache::compilecache
