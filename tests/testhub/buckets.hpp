#pragma once

// The test Hub's Storage Buckets, without HTTP: mutable, non-versioned sets of files named by
// their Xet file hash (hub-buckets-and-limits.md §1.2). A bucket's files are kept in memory;
// <data>/buckets/<ns>/<name>.json holds its state when made (or last loaded) and
// <name>.log the changes since, one line per path a batch touched, appended a batch at a
// time: a batch costs what it changes, not the bucket's size. The bytes of a Xet file are
// rebuilt from the CAS into <data>/buckets/objects/<xet hash> when first read through the
// plain `resolve` route. Bucket ids and model repo ids are separate namespaces.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http_util.hpp"

namespace testhub {

namespace stdfs = std::filesystem;

struct BucketFile {
  std::uint64_t size = 0;
  std::string xet_hash;
  std::int64_t mtime_ms = 0;
  std::string uploaded_at;
};

struct Bucket {
  std::string ns;
  std::string name;
  bool is_private = true;
  std::string created_at;
  std::string updated_at;
  std::map<std::string, BucketFile> files; // by path
  std::uint64_t generation = 0;            // one more on every change of `files`

  // The last tree listing built (routes_buckets.cpp): the pages of one listing are cut
  // from it while `files` does not change, not rebuilt for each.
  struct Tree {
    std::uint64_t generation = 0;
    std::string folder;
    bool recursive = false;
    std::vector<std::pair<std::string, const BucketFile*>> entries; // sorted; folders map to nullptr
  };
  std::shared_ptr<const Tree> tree;

  std::string id() const { return ns + "/" + name; }
};

// A test fault: the next `remaining` batch calls report success for the additions whose path
// contains `match` without applying them (a batch answer that lies).
struct BatchLie {
  std::string match;
  int remaining = 0;
};

class BucketStore {
public:
  explicit BucketStore(stdfs::path root);

  // Every call below must hold mutex().
  std::mutex& mutex() { return m_mutex; }
  Bucket* find(const std::string& id);
  // nullptr when it exists already.
  Bucket* create(const std::string& ns, const std::string& name, bool is_private);
  bool remove(const std::string& id);
  // Records the current state of `paths` (present or gone) in the bucket's change log.
  void record(Bucket& bucket, const std::vector<std::string>& paths);

  // The bytes of a Xet file once rebuilt (see object_path); an empty file always.
  std::optional<stdfs::path> object(const std::string& xet_hash) const;
  // Where the bytes of a valid Xet hash go.
  stdfs::path object_path(const std::string& xet_hash) const { return m_root / "objects" / xet_hash; }

  BatchLie& lie() { return m_lie; }

private:
  stdfs::path file_of(const std::string& id) const { return m_root / (id + ".json"); }
  stdfs::path log_of(const std::string& id) const { return m_root / (id + ".log"); }
  void load();
  void replay(Bucket& bucket);
  // Writes the whole state and starts an empty change log.
  void save(Bucket& bucket);

  stdfs::path m_root;
  std::mutex m_mutex;
  std::map<std::string, Bucket> m_buckets; // by id
  BatchLie m_lie;
};

inline constexpr std::string_view k_empty_xet_hash = "0000000000000000000000000000000000000000000000000000000000000000";

} // namespace testhub
