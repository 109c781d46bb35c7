#pragma once

#include "hubcache/layout/names.hpp"
#include "hubcache/util/environment.hpp"

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The Neuron SDK's persistent compile cache on local disk: where it lives, what its
// entries look like, and which of them are complete. Layout (libneuronxla):
//   <root>/neuronxcc-<compiler version>/MODULE_<graph key>+<flags suffix>/{model.neff, ...}
//   <root>/neuronxcc-<compiler version>/MODULE_<hash>/...        exported model (optimum)
//   <root>/neuronxcc-<compiler version>/0_REGISTRY/...           optimum registry
namespace hubcache::compilecache {

inline constexpr std::string_view k_default_cache_root = "/var/tmp/neuron-compile-cache";
// md5("")[:8]: the suffix of entries compiled without flags.
inline constexpr std::string_view k_no_flags_suffix = "d41d8cd9";
using layout::k_registry_dir;
using layout::k_version_prefix;
// The private folder of a directory cache repo (marker, staging, index): a compile cache
// that is also a repo has it at its root.
inline constexpr std::string_view k_repo_private_dir = ".neuron-cache";

enum class RootSource { option, cc_flags, environment, default_path };
std::string to_string(RootSource source);

struct CacheRoot {
  std::filesystem::path path;
  RootSource source = RootSource::default_path;
};

// NEURON_CC_FLAGS split into words as neuronx-cc splits them (shlex); every reader of the
// flags uses this one splitter. InvalidArgument on an unterminated quote.
std::vector<std::string> split_cc_flags(std::string_view flags);

// The value of `--cache_dir=X` or `--cache_dir X` in a NEURON_CC_FLAGS string (shell
// quoting understood); the last one wins, as with any repeated compiler flag.
std::optional<std::string> cache_dir_from_cc_flags(std::string_view flags);

// Where the compile cache is: a local directory, or a store only transfers between stores
// can use: an S3 prefix (the Neuron SDK accepts NEURON_COMPILE_CACHE_URL=s3://bucket/prefix,
// as on SageMaker) or a Storage Bucket (hf://buckets/ns/name[/folder], as hf-mount serves it).
struct CacheLocation {
  CacheRoot root;                       // a local cache
  std::optional<std::string> store_url; // a store, as given: s3://bucket[/prefix] or hf://buckets/...
  RootSource source = RootSource::default_path;

  // The path or URL, as shown to users.
  std::string display() const;
  // The local root; NotSupported for a store.
  const CacheRoot& local() const;
};

// Decides where the cache is as the Neuron SDK does: the option, then --cache_dir in
// NEURON_CC_FLAGS, then NEURON_COMPILE_CACHE_URL, then /var/tmp/neuron-compile-cache.
// A file:// prefix is stripped.
CacheLocation locate_cache(const std::optional<std::string>& option, const util::Environment& env);
// The same for what works on a local cache only: an s3:// or hf://buckets/ cache throws NotSupported.
CacheRoot resolve_cache_root(const std::optional<std::string>& option, const util::Environment& env);

// First 8 hex digits of the md5 of the flags file's bytes: the `+<suffix>` of an entry.
std::string flags_suffix(std::string_view flags_file_bytes);

struct ModuleName {
  std::string key;                         // graph key, decimal or hex
  std::optional<std::string> flags_suffix; // absent for exported models (no '+')
};
// `MODULE_<key>` or `MODULE_<key>+<8 hex>`; nullopt for anything else.
std::optional<ModuleName> parse_module_name(std::string_view name);

enum class EntryKind { module, exported_model, registry };
enum class EntryState { success, failed, locked, incomplete, flags_mismatch, unsafe };
// File-set generations of a module entry (neuron-compile-cache.md §1.2):
// A compile_flags.txt + model.hlo.pb + model.neff; B compile_flags.txt +
// model.hlo_module.pb + model.neff; C compile_flags.json + model.hlo_module.pb +
// model.neff + model.done.
enum class Generation { unknown, a, b, c };
std::string to_string(EntryKind kind);
std::string to_string(EntryState state);
std::string to_string(Generation generation);

// Names never published nor installed: temp files of any writer, compiler locks.
bool is_lock_name(std::string_view file_name);
bool is_temp_file_name(std::string_view file_name);

struct EntryFileInfo {
  std::string name; // relative to the entry directory
  std::uint64_t size = 0;
};
// What is wrong with an entry or an item, as a fact: the CLI words each (skip_detail in
// apps/neuron-cache/transfer_report.cpp), with its subject where it has one.
enum class Finding {
  none,
  // An entry's state (classify_module_files, check_flags_suffix, the scan).
  lock_present,       // subject: the lock's name
  compile_failed,     // model.log without model.neff
  file_missing,       // subject: the file (model.neff, model.hlo.pb, model.hlo_module.pb)
  neff_empty,         //
  no_flags_nor_done,  // nothing tells a finished gen A/B entry from an interrupted gen C one
  unfinished,         // gen C without model.done
  suffix_needs_flags, // subject: the name's flags suffix (no flags file)
  suffix_differs,     // subject: the flags file's md5 prefix
  dangling_link,      // subject: the link's name in the entry
  link_leaves_root,   // subject: the link's name in the entry
  // An item of a local cache that is no part of one, or a link out of it.
  not_a_version_dir,
  not_an_entry,
  points_outside, // subject: the link's target
  // A local (pull) or target (copy) entry against the repo's or source's.
  not_a_directory,
  only_here,        // subject: the file only this side has
  file_differs,     // subject: the file
  locked_meanwhile, // a compiler locked it while the pull ran
  // A link on the way to where a pull would write; subject: that path.
  link_on_the_way,
};

// A finding and its subject; `finding == none` on success.
struct EntryFinding {
  Finding finding = Finding::none;
  std::string subject;
  explicit operator bool() const { return finding != Finding::none; }
};

struct Classification {
  EntryState state = EntryState::incomplete;
  Generation generation = Generation::unknown;
  EntryFinding why; // none on success
};
// State of a module entry from its file names and sizes (the flags suffix is checked
// separately, it needs the flags file's content). Shared by the local scan and the
// validation of repo entries before a pull.
Classification classify_module_files(const std::vector<EntryFileInfo>& files);
// The flags file a module entry of this generation has, or "" when it has none.
std::string flags_file_name(const std::vector<EntryFileInfo>& files);
// None when `flags_bytes` (nullopt: no flags file) gives the entry's suffix, else why not.
EntryFinding check_flags_suffix(const ModuleName& name, const std::optional<std::string>& flags_bytes);

// A file to publish: its repo path and where to read it (symlinks inside the root resolved).
// `source` is a plain string: a std::filesystem::path keeps a list of its components,
// several hundred bytes a file, and a scan holds every file of the cache.
struct LocalFile {
  std::string path;
  // Where to read the file when it is not `<root>/<path>` (a symlink's target); empty for
  // the others, most files: a scan holds every file of the cache, not its path twice.
  // Read through source_of().
  std::string source;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t inode = 0;
};

struct Entry {
  EntryKind kind = EntryKind::module;
  std::string path;             // repo-relative directory, e.g. neuronxcc-2.15.128.0+56dc5a86/MODULE_1+d41d8cd9
  std::string compiler_version; // 2.15.128.0+56dc5a86
  EntryState state = EntryState::success;
  Generation generation = Generation::unknown;
  EntryFinding why;                              // none for a complete entry
  std::vector<LocalFile> files;                  // publishable files (no locks, no temp files)
  std::vector<std::filesystem::path> lock_files; // *.lock found in the entry
  // Files below the entry left out of `files` (locks, temp files, odd names): still disk
  // space that removing the entry frees.
  std::uint64_t unlisted_bytes = 0;
  std::size_t unlisted_files = 0;
  // Newest modification time of the entry (its files and directory) and newest access
  // time of its files, flags files excepted (the scan itself reads those), in ns.
  std::int64_t newest_mtime_ns = 0;
  std::int64_t newest_atime_ns = 0;

  std::uint64_t bytes() const; // every file below the entry
  std::size_t file_count() const;
};

// Why an entry or file was not moved (or, by cleanup, not removed): a fact the CLI words
// (apps/neuron-cache/transfer_report.cpp names each and says what to do about it).
enum class SkipReason {
  // Found by the scan of a local cache (a push).
  unrecognized,
  unreadable,
  temp_file,
  lock_file,
  invalid_name,
  symlink_outside_root,
  dangling_symlink,
  not_a_regular_file,
  failed, // the entry's state (EntryState)
  locked,
  incomplete,
  flags_mismatch,
  // A pull: the repo's entry, or what the local cache holds of it.
  failed_in_repo,
  incomplete_in_repo,
  flags_mismatch_in_repo,
  local_entry_differs,
  local_file_differs,
  locked_locally,
  appeared_during_pull,
  link_in_local_path,
  // A copy between stores: the source's entry, or what the target holds of it.
  failed_in_source,
  incomplete_in_source,
  flags_mismatch_in_source,
  target_entry_differs,
  target_file_differs,
  // Cleanup's: kept because a compiler may hold it, or changed meanwhile.
  lock_held,
  compiler_running,
  vanished,
  taken,
  // Something failed (an error), or a failure of the store stopped the run first (stopped:
  // the detail is that failure).
  error,
  stopped,
};

// The skip reason of an entry the scan found in `state` (not success).
SkipReason skip_reason_of(EntryState state);

struct Skipped {
  std::string path;
  SkipReason reason = SkipReason::error;
  // The facts: an error's text where `finding` is none, else the finding's subject; empty
  // where the reason says it all (the CLI words each).
  std::string detail;
  Finding finding = Finding::none;
};

struct Scan {
  std::filesystem::path root;
  std::vector<std::string> versions; // neuronxcc-* directory names, sorted
  std::vector<Entry> entries;        // every entry, whatever its state
  std::vector<Skipped> skipped;

  // Where to read a file of this scan.
  std::string source_of(const LocalFile& file) const;
};

// Where to read `file`, whose path is relative to `root` (see LocalFile::source).
std::string source_of(std::string_view root, const LocalFile& file);
// The same for any file known by its path below `root` and its own `source` (empty: none).
std::string source_of(std::string_view root, const std::string& source, std::string_view path);

// <base>/neuron-cache/<kind>-<key of the root's absolute path><extension>: what
// neuron-cache remembers about one compile cache, kept outside it (anything inside the
// root would be published). The base is ${XDG_CACHE_HOME:-~/.cache} for what may be lost
// (digests, listings), ${XDG_STATE_HOME:-~/.local/state} for what should last (usage).
enum class Keeping { cache, state };
std::filesystem::path remembered_file(const std::filesystem::path& cache_root, std::string_view kind,
                                      std::string_view extension, const util::Environment& env,
                                      Keeping keeping = Keeping::cache);

// Flags files found to give their entry's suffix, remembered across scans by a
// fingerprint of their path and stamp (util::stamp_fingerprint), so a scan of an
// unchanged cache reads none of them again. A missing or corrupt file remembers nothing.
class FlagsMemo {
public:
  FlagsMemo() = default; // remembers nothing, keeps nothing
  explicit FlagsMemo(std::filesystem::path file);
  // remembered_file(root, "flags", ".bin")
  static std::filesystem::path default_path(const std::filesystem::path& cache_root, const util::Environment& env);

  // Both are safe from several threads at once (a scan walks on several).
  // True when this file version was found good before.
  bool recall(std::uint64_t fingerprint);
  void remember(std::uint64_t fingerprint);
  // Keeps what this run recalled or learnt, and nothing else (atomically; failures are
  // ignored: it is a cache), when that changed.
  void save();

private:
  std::filesystem::path m_file;
  std::vector<std::uint64_t> m_known; // sorted, as loaded
  std::mutex m_mutex;
  std::vector<std::uint64_t> m_seen; // recalled or learnt by this run
};

// Walks the cache root. Throws IoError when the root is missing, not a directory or
// unreadable; anything odd below it is reported in `skipped`, never fatal. A symlink
// leaving the root is skipped (symlink-outside-root) unless it resolves to a regular file
// below one of `followed` (optimum's compile-time proxy links Hub downloads from
// $HF_HOME/hub into the cache): that file is read as the entry's. With a `memo`, flags
// files it recalls are not read again, and those found good are added to it.
Scan scan(const std::filesystem::path& root, const std::vector<std::filesystem::path>& followed = {},
          FlagsMemo* memo = nullptr);

// A name as it can be shown and put in JSON: bytes that are not UTF-8 become '?'.
std::string printable(std::string_view name);

// True when a neuronx-cc (or walrus_driver) process runs on this host. `proc` is the
// procfs mount, injectable for tests.
bool compiler_running(const std::filesystem::path& proc = "/proc");

} // namespace hubcache::compilecache
