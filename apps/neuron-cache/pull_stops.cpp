// How a pull fails early and stops short, in words: pull_stops.hpp.
#include "pull_stops.hpp"

#include "commands.hpp"
#include "output.hpp"

#include <hubcache/compilecache/pull_guard.hpp>
#include <hubcache/error.hpp>
#include <hubcache/storage/repo_spec.hpp>
#include <hubcache/storage/repository.hpp>

#include <unistd.h>

namespace neuron_cache {

namespace cc = hubcache::compilecache;

namespace {

constexpr const char* k_make_room = "make room (neuron-cache cleanup --max-size SIZE) or pull into a larger disk "
                                    "(--cache-dir DIR)";

std::string place_of(const std::filesystem::path& root, const cc::SpaceCheck& check)
{
  return root.string() + (check.file_system.empty() ? std::string() : " (" + check.file_system + ")");
}

// What a transfer short of room is called, and what to do about it.
struct Shortage {
  std::string noun;     // "pull", "copy"
  std::string verb;     // "pulling", "copying"
  std::string yes_does; // "pulls", "copies"
  std::string make_room;
  std::string narrow; // ", or pull less (...)"
  bool yes_allowed = true;
  std::string ask = "Go on anyway?";
};

// Refuses (or asks, on a terminal) when `check` says `place` lacks room; --yes goes ahead.
void confirm_room(Invocation& invocation, const std::filesystem::path& place, const cc::SpaceCheck& check,
                  const Shortage& words)
{
  if (check.enough()) {
    return;
  }
  auto shortage = "the " + words.noun + " needs " + human_size(check.needed) + " on " + place_of(place, check) + ", "
                  + human_size(*check.free) + " is free";
  if (words.yes_allowed && invocation.has("yes")) {
    invocation.out().warning(shortage + "; " + words.verb + " anyway (--yes)");
    return;
  }
  if (::isatty(STDIN_FILENO) != 0 && invocation.out().is_human()) {
    auto question = "The " + words.noun + " needs " + human_size(check.needed) + " on " + place_of(place, check)
                    + ", only " + human_size(*check.free) + " is free. " + words.ask;
    if (confirm(question)) {
      return;
    }
    throw hubcache::NoSpace(words.noun + " cancelled: " + shortage, words.make_room);
  }
  throw hubcache::NoSpace(shortage, words.make_room + words.narrow
                                      + (words.yes_allowed ? "; --yes " + words.yes_does + " anyway" : std::string()));
}

} // namespace

void confirm_free_space(Invocation& invocation, const std::filesystem::path& root, const cc::PullPlan& plan)
{
  confirm_room(
    invocation, root, cc::space_for_pull(root, plan),
    {"pull", "pulling", "pulls", k_make_room, ", or pull less (--model, --compiler-version)", true, "Pull anyway?"});
}

void confirm_copy_space(Invocation& invocation, const hubcache::storage::Repository& target, const cc::CopyPlan& plan,
                        const cc::CopyOptions& options, bool pull)
{
  if (plan.copies.empty()) {
    return;
  }
  auto scratch = options.scratch_parent.empty() ? std::filesystem::path("/tmp") : options.scratch_parent;
  confirm_room(invocation, scratch, cc::space_for_copy_scratch(scratch, plan, options),
               {"copy", "copying", "copies",
                "make room there or point TMPDIR at a larger disk (the copy stages a batch there)",
                ", or lower NEURON_CACHE_COPY_BATCH_BYTES", pull});
  auto spec = hubcache::storage::parse_repo_spec(target.spec());
  if (spec.kind == hubcache::storage::RepoKind::directory) {
    confirm_room(invocation, spec.directory, cc::space_for(spec.directory, plan.bytes_planned, plan.files_planned),
                 {"copy", "copying", "copies", "make room on it", ", or copy less (--compiler-version)", pull});
  }
}

std::optional<int> report_stopped_pull(Invocation& invocation, const std::filesystem::path& root,
                                       const cc::TransferReport& report, const std::string& human, nlohmann::json& data)
{
  if (report.interrupted_by == 0 && !report.no_space) {
    return std::nullopt;
  }
  auto installed =
    std::to_string(report.transferred.size()) + " of " + std::to_string(report.entries_planned) + " entries installed";
  nlohmann::json stopped = {{"reason", report.interrupted_by != 0 ? "interrupted" : "no-space"},
                            {"entries_installed", report.transferred.size()},
                            {"entries_planned", report.entries_planned}};
  std::string line;
  std::string hint;
  int exit_code = k_exit_error;
  if (report.interrupted_by != 0) {
    line = "Interrupted: " + installed + "; run the same command to finish.";
    exit_code = k_exit_signal_base + report.interrupted_by;
  } else {
    // Measured now: the staging of the entries left out is gone.
    auto left = report.files_planned > report.files_transferred ? report.files_planned - report.files_transferred : 0;
    auto bytes = report.bytes_planned > report.bytes_transferred ? report.bytes_planned - report.bytes_transferred : 0;
    auto check = cc::space_for(root, bytes, left);
    line = "no space left on " + place_of(root, check) + ": " + installed + "; the rest needs "
           + human_size(check.needed) + (check.free ? ", " + human_size(*check.free) + " is free" : std::string());
    hint = std::string(k_make_room) + ", then run the same command to finish";
    stopped["bytes_needed"] = check.needed;
    stopped["bytes_free"] = check.free ? nlohmann::json(*check.free) : nlohmann::json();
  }
  data["stopped"] = stopped;
  if (invocation.out().is_json()) {
    invocation.out().result(human, data, {});
  }
  if (hint.empty()) {
    invocation.out().notice(line);
  } else {
    invocation.out().error_line(line, hint);
  }
  return exit_code;
}

} // namespace neuron_cache
