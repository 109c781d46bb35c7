#pragma once

#include "hubcache/compilecache/store_copy.hpp"
#include "hubcache/compilecache/sync.hpp"

#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>

// What keeps a pull from failing late: the free space it needs, known before anything
// moves; the first full disk ends the run (not one failure per entry); and an interrupt
// (Ctrl-C, SIGTERM) stops it between files, its staging removed, with what landed whole.
namespace hubcache::compilecache {

struct SpaceCheck {
  std::uint64_t needed = 0;
  std::optional<std::uint64_t> free; // nullopt: the file system would not say
  std::string file_system;           // "ext4/ext3", "tmpfs", ... of the cache
  bool enough() const { return !free || *free >= needed; }
};

// The space `plan` needs below `root` (or its nearest existing ancestor, before a first
// pull creates it): its bytes, each file rounded up to whole blocks of 4 KiB.
SpaceCheck space_for_pull(const std::filesystem::path& root, const PullPlan& plan);
// The same for bytes and files still to land (after a pull stopped on a full disk).
SpaceCheck space_for(const std::filesystem::path& root, std::uint64_t bytes, std::size_t files);

// The scratch space a store-to-store copy of `plan` needs below `scratch_parent`: it stages
// one batch at a time (CopyOptions' budgets, or one whole entry beyond them), never more
// than the plan.
SpaceCheck space_for_copy_scratch(const std::filesystem::path& scratch_parent, const CopyPlan& plan,
                                  const CopyOptions& options);

// True for a write the file system refused for want of space or quota.
bool is_no_space(const std::exception_ptr& error);
// True for the stop an interrupt caused in a download (throw_if_interrupted).
bool is_interruption(const std::exception_ptr& error);
// Throws Interrupted when SIGINT, SIGTERM or SIGHUP arrived while an InterruptScope was
// active: called from a download's progress, so a big file stops part way.
void throw_if_interrupted();
// The signal that interrupted this run, or 0.
int interrupting_signal();

} // namespace hubcache::compilecache
