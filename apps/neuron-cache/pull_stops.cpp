// How a pull fails early and stops short, in words: pull_stops.hpp.
#include "pull_stops.hpp"

#include "commands.hpp"
#include "output.hpp"

#include <hubcache/compilecache/pull_guard.hpp>
#include <hubcache/error.hpp>

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

} // namespace

std::unique_ptr<cc::PullLock> lock_for_pull(Invocation& invocation, const std::filesystem::path& root,
                                            cc::PullPlan& plan, const std::function<cc::PullPlan()>& replan)
{
  if (invocation.has("dry-run") || plan.installs.empty()) {
    return nullptr;
  }
  bool waited = false;
  auto lock = std::make_unique<cc::PullLock>(root, [&](const cc::PullLockHolder& holder) {
    waited = true;
    std::string whose = holder.pid > 0 ? "the pull of pid " + std::to_string(holder.pid) : std::string("another pull");
    invocation.out().notice("waiting for " + whose + " on "
                            + (holder.this_host      ? std::string("this host")
                               : holder.host.empty() ? std::string("another host")
                                                     : "host " + holder.host));
  });
  if (waited) {
    plan = replan();
  }
  return lock;
}

void confirm_free_space(Invocation& invocation, const std::filesystem::path& root, const cc::PullPlan& plan)
{
  auto check = cc::space_for_pull(root, plan);
  if (check.enough()) {
    return;
  }
  auto shortage = "the pull needs " + human_size(check.needed) + " on " + place_of(root, check) + ", "
                  + human_size(*check.free) + " is free";
  if (invocation.has("yes")) {
    invocation.out().warning(shortage + "; pulling anyway (--yes)");
    return;
  }
  if (::isatty(STDIN_FILENO) != 0 && invocation.out().is_human()) {
    auto question = "The pull needs " + human_size(check.needed) + " on " + place_of(root, check) + ", only "
                    + human_size(*check.free) + " is free. Pull anyway?";
    if (confirm(question)) {
      return;
    }
    throw hubcache::NoSpace("pull cancelled: " + shortage, k_make_room);
  }
  throw hubcache::NoSpace(shortage, std::string(k_make_room)
                                      + ", or pull less (--model, --compiler-version); --yes pulls anyway");
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
