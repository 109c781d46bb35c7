#include "transfer_report.hpp"

#include <registry/layout.hpp>
#include <registry/lookup.hpp>

#include <hubcache/error.hpp>
#include <hubcache/util/text.hpp>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace neuron_cache {

namespace {

namespace cc = hubcache::compilecache;

// The one wording table of skip reasons: the name JSON and the summaries use, what to do
// about it (empty when the skip is by design: locks and temp files are never published),
// and, for a reason the library states no facts for, what it means for the item (the
// JSON's "detail").
struct SkipWords {
  cc::SkipReason reason;
  std::string_view name;
  std::string_view hint;
  std::string_view detail = {};
};

constexpr SkipWords k_skip_words[] = {
  {cc::SkipReason::unrecognized, "unrecognized", "not part of a compile cache: move it elsewhere"},
  {cc::SkipReason::unreadable, "unreadable", "fix the file permissions", "cannot stat"},
  {cc::SkipReason::temp_file, "temp-file", "", "an unfinished write"},
  {cc::SkipReason::lock_file, "lock-file", "", "locks are never published"},
  {cc::SkipReason::invalid_name, "invalid-name", "rename it: the repo cannot hold that path", "not a valid repo path"},
  {cc::SkipReason::symlink_outside_root, "symlink-outside-root", "replace the link with the file it points to"},
  {cc::SkipReason::dangling_symlink, "dangling-symlink", "remove the dangling link", "the link target does not exist"},
  {cc::SkipReason::not_a_regular_file, "not-a-regular-file", "remove it from the compile cache",
   "device, socket or fifo"},
  {cc::SkipReason::failed, "failed", "remove them with: neuron-cache cleanup (the compiler would replay the failure)"},
  {cc::SkipReason::locked, "locked",
   "wait for the compiler, or clear stale locks: neuron-cache synchronize --clear-stale-locks 60"},
  {cc::SkipReason::incomplete, "incomplete",
   "a compile still running or interrupted: wait, or remove them with: neuron-cache cleanup --all"},
  {cc::SkipReason::flags_mismatch, "flags-mismatch",
   "the flags file does not match the entry's name: compile it again"},
  {cc::SkipReason::failed_in_repo, "failed-in-repo", "push it again from a host where it compiled"},
  {cc::SkipReason::incomplete_in_repo, "incomplete-in-repo", "push it again from a host where it compiled"},
  {cc::SkipReason::flags_mismatch_in_repo, "flags-mismatch-in-repo", "push it again from a host where it compiled"},
  {cc::SkipReason::local_entry_differs, "local-entry-differs", "the local entry is kept; delete it to take the repo's"},
  {cc::SkipReason::local_file_differs, "local-file-differs", "the local file is kept; delete it to take the repo's",
   "kept the local version"},
  {cc::SkipReason::locked_locally, "locked-locally", "a compiler on this host holds it: pull again when it is done"},
  {cc::SkipReason::appeared_during_pull, "appeared-during-pull", "a compiler created it meanwhile; nothing to do",
   "created locally while it was downloaded"},
  {cc::SkipReason::link_in_local_path, "link-in-local-path",
   "a symbolic link in the local cache is never written through: remove it and pull again"},
  {cc::SkipReason::failed_in_source, "failed-in-source", "the compiler failed on it there: nothing to copy"},
  {cc::SkipReason::incomplete_in_source, "incomplete-in-source",
   "a compile still running there, or interrupted: copy again later"},
  {cc::SkipReason::flags_mismatch_in_source, "flags-mismatch-in-source",
   "its flags file does not match its name there: compile it again"},
  {cc::SkipReason::target_entry_differs, "target-entry-differs",
   "the target's complete entry is kept; delete it there to take the source's"},
  {cc::SkipReason::target_file_differs, "target-file-differs",
   "the target's file is kept; delete it there to take the source's", "kept the target's version"},
  {cc::SkipReason::lock_held, "lock-held", ""},
  {cc::SkipReason::compiler_running, "compiler-running", "",
   "incomplete, and a neuronx-cc process is running on this host"},
  {cc::SkipReason::vanished, "vanished", "", "removed by someone else meanwhile"},
  {cc::SkipReason::taken, "taken", "", "a compiler locked it meanwhile; left in place"},
  {cc::SkipReason::error, "error", ""},
  {cc::SkipReason::stopped, "stopped", ""},
};

const SkipWords& words_of(cc::SkipReason reason)
{
  for (const auto& words : k_skip_words) {
    if (words.reason == reason) {
      return words;
    }
  }
  return k_skip_words[std::size(k_skip_words) - 2]; // error: every reason has its row
}

// Counts by name: the summaries list them in the names' order.
std::map<std::string, std::size_t> count_by_reason(const std::vector<cc::Skipped>& skipped)
{
  std::map<std::string, std::size_t> counts;
  for (const auto& item : skipped) {
    ++counts[skip_reason_name(item.reason)];
  }
  return counts;
}

// What to do about entries skipped for a reason (by its name): the program's next step, or
// empty when the skip is by design.
std::string skip_hint(const std::string& name)
{
  for (const auto& words : k_skip_words) {
    if (words.name == name) {
      return std::string(words.hint);
    }
  }
  return {};
}

// "7 skipped (1 failed, 2 incomplete, ...)": the counts for the summary line.
std::string skip_summary(const std::vector<cc::Skipped>& skipped)
{
  std::string text = std::to_string(skipped.size()) + " skipped";
  if (skipped.empty()) {
    return text;
  }
  text += " (";
  bool first = true;
  for (const auto& [reason, count] : count_by_reason(skipped)) {
    text += (first ? "" : ", ") + std::to_string(count) + " " + reason;
    first = false;
  }
  return text + ")";
}

nlohmann::json skipped_json(const std::vector<cc::Skipped>& skipped, bool with_hints)
{
  auto list = nlohmann::json::array();
  for (const auto& item : skipped) {
    nlohmann::json entry = {
      {"path", item.path}, {"reason", skip_reason_name(item.reason)}, {"detail", skip_detail(item)}};
    if (with_hints) {
      auto hint = std::string(words_of(item.reason).hint);
      entry["hint"] = hint.empty() ? nlohmann::json(nullptr) : nlohmann::json(hint);
    }
    list.push_back(entry);
  }
  return list;
}

nlohmann::json counts_json(const std::vector<cc::Skipped>& skipped)
{
  auto counts = nlohmann::json::object();
  for (const auto& [reason, count] : count_by_reason(skipped)) {
    counts[reason] = count;
  }
  return counts;
}

// What --verbose and the by-model lines say of an amount: "3 files, 1.2 GB".
std::string amount(std::size_t files, std::uint64_t bytes)
{
  return count_of(files, "file") + ", " + human_size(bytes);
}

// Add's records are small; one bigger than this is not one.
constexpr std::uint64_t k_max_record_bytes = 1 << 20;
// Beyond this many records, entries keep no model rather than the dry run reading on.
constexpr std::size_t k_max_records = 5000;

} // namespace

std::string finding_text(cc::Finding finding, const std::string& subject, std::string_view path)
{
  using F = cc::Finding;
  switch (finding) {
  case F::none: return subject;
  case F::lock_present: return "a compiler holds " + subject;
  case F::compile_failed: return "compilation failed (model.log without model.neff)";
  case F::file_missing: return "no " + subject;
  case F::neff_empty: return "model.neff is empty";
  case F::no_flags_nor_done: return "no compile_flags file and no model.done";
  case F::unfinished: return "no model.done (compilation unfinished or interrupted)";
  case F::suffix_needs_flags:
    return "no compile_flags file, but the name's flags suffix is " + subject + " (not "
           + std::string(cc::k_no_flags_suffix) + ")";
  case F::suffix_differs: {
    auto plus = path.rfind('+');
    auto suffix = plus == std::string_view::npos ? std::string_view("?") : path.substr(plus + 1);
    return "flags suffix " + std::string(suffix) + " does not match the flags file (md5 prefix " + subject + ")";
  }
  case F::dangling_link: return subject + " is a dangling symlink";
  case F::link_leaves_root: return subject + " is a symlink leaving the cache root";
  case F::not_a_version_dir: return "not a neuronxcc-<version> directory";
  case F::not_an_entry: return "not a MODULE_* entry or 0_REGISTRY directory";
  case F::points_outside: return "points to " + subject;
  case F::not_a_directory: return "not a directory locally";
  case F::only_here: return subject + " exists locally but not in the repo";
  case F::file_differs: return subject + " differs from the repo's";
  case F::locked_meanwhile: return "a compiler locked it during the pull";
  case F::link_on_the_way:
    return hubcache::util::escape_control(subject)
           + " is a symbolic link or not a directory; nothing is written through it";
  }
  return subject;
}

std::string skip_detail(const cc::Skipped& item)
{
  if (item.reason == cc::SkipReason::stopped) { // its detail is the failure that stopped the run
    return "the run stopped after an error of the repo (" + item.detail + ")";
  }
  if (item.reason == cc::SkipReason::target_entry_differs && item.finding == cc::Finding::file_differs) {
    return item.detail + " differs from the source's";
  }
  if (item.finding != cc::Finding::none) {
    return finding_text(item.finding, item.detail, item.path);
  }
  return item.detail.empty() ? std::string(words_of(item.reason).detail) : item.detail;
}

void add_xet_figures(const cc::XetBytes& xet, std::string& human, nlohmann::json& data)
{
  if (!xet.any()) {
    return;
  }
  data["xet"] = {
    {"new_bytes", xet.new_bytes}, {"deduplicated_bytes", xet.deduplicated_bytes}, {"stored_bytes", xet.stored_bytes}};
  human += " (Xet: " + human_size(xet.new_bytes) + " new, " + human_size(xet.deduplicated_bytes) + " deduplicated, "
           + human_size(xet.stored_bytes) + " already in the CAS)";
}

std::string skip_reason_name(cc::SkipReason reason)
{
  return std::string(words_of(reason).name);
}

void report_skips(const Output& out, const std::vector<cc::Skipped>& skipped)
{
  for (const auto& [reason, count] : count_by_reason(skipped)) {
    if (auto hint = skip_hint(reason); !hint.empty()) {
      out.info("  " + std::to_string(count) + " " + reason + ": " + hint);
    }
  }
  for (const auto& item : skipped) {
    out.detail("skipped " + item.path + ": " + skip_reason_name(item.reason)
               + (skip_detail(item).empty() ? "" : " (" + skip_detail(item) + ")"));
  }
}

std::string lines(const std::vector<std::string>& items)
{
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : "\n") + item;
  }
  return text;
}

void attribute_models(hubcache::storage::Repository& repo, std::vector<TransferEntry>& entries)
{
  std::set<std::string> versions;
  for (const auto& entry : entries) {
    if (!entry.model && !entry.compiler_version.empty()) {
      versions.insert(entry.compiler_version);
    }
  }
  std::map<std::string, std::set<std::string>> models_of; // module path -> model ids
  std::size_t records = 0;
  for (const auto& version : versions) {
    auto folder = registry::registry_root(version, std::string(registry::k_attribution_version));
    for (const auto& file : repo.list_files(folder + "/")) {
      if (!file.path.ends_with(".json") || file.size > k_max_record_bytes) {
        continue;
      }
      if (++records > k_max_records) {
        return;
      }
      std::string text;
      try {
        text = repo.read_file(file.path);
      } catch (const hubcache::EntryNotFound&) {
        continue;
      }
      auto record = nlohmann::json::parse(text, nullptr, false);
      if (!record.is_object() || !record.contains("model_id") || !record["model_id"].is_string()) {
        continue;
      }
      auto model = hubcache::util::escape_control(record["model_id"].get<std::string>());
      for (auto& module : registry::attributed_modules(text, file.path, "neuronxcc-" + version)) {
        models_of[module].insert(model);
      }
    }
  }
  for (auto& entry : entries) {
    if (auto found = models_of.find(entry.path); !entry.model && found != models_of.end()) {
      std::string joined; // a graph two models share names both
      for (const auto& model : found->second) {
        joined += (joined.empty() ? "" : ", ") + model;
      }
      entry.model = joined;
    }
  }
}

void detail_entries(const Output& out, const std::string& verb, const std::vector<TransferEntry>& entries)
{
  if (!out.verbose()) {
    return;
  }
  for (const auto& entry : entries) {
    out.detail(verb + " " + entry.path + " (" + amount(entry.files, entry.bytes)
               + (entry.model ? "; model " + *entry.model : std::string()) + ")");
  }
}

std::string Transfer::summary_tail(const std::string& verb) const
{
  std::string text = "; " + std::to_string(report.present.size()) + " already present; " + skip_summary(report.skipped);
  if (!report.errors.empty()) {
    text += "; " + std::to_string(report.errors.size()) + " failed";
  }
  text += "; " + human_duration(seconds) + ".";
  if (dry_run && !report.planned.empty()) {
    std::unordered_map<std::string, const TransferEntry*> known;
    for (const auto& entry : report.entries) {
      known.emplace(entry.path, &entry);
    }
    text += "\nWould " + verb + ":";
    for (const auto& path : report.planned) {
      auto found = known.find(path);
      text +=
        "\n  " + path + (found == known.end() ? "" : " (" + amount(found->second->files, found->second->bytes) + ")");
    }
    text += by_model();
  }
  return text;
}

std::string Transfer::by_model() const
{
  struct Subtotal {
    std::size_t entries = 0, files = 0;
    std::uint64_t bytes = 0;
  };
  std::map<std::string, Subtotal> models;
  std::optional<Subtotal> unknown;
  for (const auto& entry : report.entries) {
    auto& subtotal = entry.model ? models[*entry.model] : (unknown ? *unknown : unknown.emplace());
    ++subtotal.entries;
    subtotal.files += entry.files;
    subtotal.bytes += entry.bytes;
  }
  if (models.empty()) {
    return {};
  }
  std::vector<std::pair<std::string, Subtotal>> sorted(models.begin(), models.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  if (unknown) {
    sorted.emplace_back("(no model recorded)", *unknown);
  }
  std::string text = "\nBy model:";
  for (const auto& [model, subtotal] : sorted) {
    text += "\n  " + model + ": " + count_of(subtotal.entries, "entry", "entries") + ", "
            + amount(subtotal.files, subtotal.bytes);
  }
  return text;
}

nlohmann::json Transfer::to_json() const
{
  std::set<std::string> moved(report.transferred.begin(), report.transferred.end());
  auto entry_list = nlohmann::json::array();
  for (const auto& entry : report.entries) {
    entry_list.push_back(
      {{"path", entry.path},
       {"compiler_version", entry.compiler_version.empty() ? nlohmann::json() : nlohmann::json(entry.compiler_version)},
       {"files", entry.files},
       {"bytes", entry.bytes},
       {"model", entry.model ? nlohmann::json(*entry.model) : nlohmann::json()},
       {"transferred", moved.contains(entry.path)}});
  }
  return {
    {"direction", direction},
    {"dry_run", dry_run},
    {"repo", repo},
    {"cache_dir", cache_dir},
    {"cache_dir_source", cc::to_string(cache_dir_source)},
    {"revision", report.revision ? nlohmann::json(*report.revision) : nlohmann::json(nullptr)},
    {"planned", report.planned},
    {"transferred", report.transferred},
    {"present", report.present},
    {"entries", entry_list},
    {"skipped", skipped_json(report.skipped, true)},
    {"skipped_by_reason", counts_json(report.skipped)},
    {"errors", skipped_json(report.errors, false)},
    {"files", {{"planned", report.files_planned}, {"transferred", report.files_transferred}}},
    {"bytes", {{"planned", report.bytes_planned}, {"transferred", report.bytes_transferred}}},
    {"seconds", seconds},
  };
}

} // namespace neuron_cache
