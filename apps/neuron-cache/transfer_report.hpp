#pragma once

#include "output.hpp"

#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/store_copy.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/compilecache/transfer_report.hpp>
#include <hubcache/storage/repository.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

// The one transfer report push, pull and copies share (docs/schemas/transfer.schema.json),
// and the diagnostics that go with it.
namespace neuron_cache {

using TransferEntry = hubcache::compilecache::TransferEntry;

// Names the model of each entry whose compiled graph an `add` record of `repo` attributes
// to one (records read for the entries' compiler versions only, small files, at most a
// few thousand); entries no record names keep no model.
void attribute_models(hubcache::storage::Repository& repo, std::vector<TransferEntry>& entries);

// With --verbose, one line per entry on stderr: "pull PATH (3 files, 1.2 GB; model M)".
void detail_entries(const Output& out, const std::string& verb, const std::vector<TransferEntry>& entries);

// What the summary, the JSON document and the diagnostics are made of: the library's
// report of a push, pull or copy, and where it ran.
struct Transfer {
  std::string direction;
  bool dry_run = false;
  std::string repo;
  std::string cache_dir; // a local path or an s3:// URL
  hubcache::compilecache::RootSource cache_dir_source = hubcache::compilecache::RootSource::default_path;
  const hubcache::compilecache::TransferReport& report;
  double seconds = 0;

  // The summary's end: "; 3 already present; 2 skipped (…); 1 failed; 1.2s." and, on a dry
  // run, what would move ("Would push:" and one path a line) and its size by model.
  std::string summary_tail(const std::string& verb) const;
  // "By model:" and a line per model (entries, files, bytes), largest first; entries of
  // no known model last. Empty when no entry is planned.
  std::string by_model() const;
  nlohmann::json to_json() const;
};

// What a push or a copy moved through Xet, when it moved anything: the summary's
// " (Xet: 2.1 MB new, 0 B deduplicated, 29.1 MB already in the CAS)" and the JSON's "xet".
void add_xet_figures(const hubcache::compilecache::XetBytes& xet, std::string& human, nlohmann::json& data);

// A skip reason's name, as JSON and the summaries give it ("failed-in-repo").
std::string skip_reason_name(hubcache::compilecache::SkipReason reason);
// A library finding in words, with its subject; `path` is the entry's (its name carries the
// flags suffix a mismatch is worded with).
std::string finding_text(hubcache::compilecache::Finding finding, const std::string& subject, std::string_view path);
// What a skipped item's "detail" says: the library's facts, or for a reason it states none
// for, the words of the table.
std::string skip_detail(const hubcache::compilecache::Skipped& item);

// Diagnostics on stderr: one line per skip reason that has a fix, and every path only
// with --verbose, so a repeated push in CI stays quiet.
void report_skips(const Output& out, const std::vector<hubcache::compilecache::Skipped>& skipped);

// Items one a line.
std::string lines(const std::vector<std::string>& items);

} // namespace neuron_cache
