#pragma once

#include "output.hpp"

#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/store_copy.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/storage/repository.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

// The one transfer report push, pull and copies share (docs/schemas/transfer.schema.json),
// and the diagnostics that go with it.
namespace neuron_cache {

// One entry a transfer moves, or would: the files of it that move and their size.
struct TransferEntry {
  std::string path;
  std::string compiler_version;
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  std::optional<std::string> model; // where known: --model, or add's attribution records
};

// The entries of a plan, taken before the transfer consumes it.
std::vector<TransferEntry> transfer_entries(const hubcache::compilecache::PushPlan& plan);
std::vector<TransferEntry> transfer_entries(const hubcache::compilecache::PullPlan& plan);
std::vector<TransferEntry> transfer_entries(const hubcache::compilecache::CopyPlan& plan);

// Names the model of each entry whose compiled graph an `add` record of `repo` attributes
// to one (records read for the entries' compiler versions only, small files, at most a
// few thousand); entries no record names keep no model.
void attribute_models(hubcache::storage::Repository& repo, std::vector<TransferEntry>& entries);

// With --verbose, one line per entry on stderr: "pull PATH (3 files, 1.2 GB; model M)".
void detail_entries(const Output& out, const std::string& verb, const std::vector<TransferEntry>& entries);

// What the summary, the JSON document and the diagnostics are made of: what was planned,
// transferred, skipped and why, what failed. Built from the library's PushResult,
// PullReport and CopyReport, whose shapes differ.
struct Transfer {
  std::string direction;
  bool dry_run = false;
  std::string repo;
  std::string cache_dir; // a local path or an s3:// URL
  hubcache::compilecache::RootSource cache_dir_source = hubcache::compilecache::RootSource::default_path;
  std::optional<std::string> revision;
  std::vector<std::string> planned;
  std::vector<std::string> transferred;
  std::vector<std::string> present;
  const std::vector<hubcache::compilecache::Skipped>* skipped = nullptr;
  std::vector<hubcache::compilecache::Skipped> errors;
  std::uint64_t files_planned = 0, files_transferred = 0;
  std::uint64_t bytes_planned = 0, bytes_transferred = 0;
  double seconds = 0;
  std::vector<TransferEntry> entries; // the planned ones, as far as the plan told them

  // The summary's end: "; 3 already present; 2 skipped (…); 1 failed; 1.2s." and, on a dry
  // run, what would move ("Would push:" and one path a line) and its size by model.
  std::string summary_tail(const std::string& verb) const;
  // "By model:" and a line per model (entries, files, bytes), largest first; entries of
  // no known model last. Empty when no entry is planned.
  std::string by_model() const;
  nlohmann::json to_json() const;
};

// Diagnostics on stderr: one line per skip reason that has a fix, and every path only
// with --verbose, so a repeated push in CI stays quiet.
void report_skips(const Output& out, const std::vector<hubcache::compilecache::Skipped>& skipped);

// Items one a line.
std::string lines(const std::vector<std::string>& items);

} // namespace neuron_cache
