#pragma once

// The test Hub's Storage Buckets, without HTTP: mutable, non-versioned sets of files named by
// their Xet file hash (hub-buckets-and-limits.md §1.2). A bucket's files are kept in memory
// and saved whole to <data>/buckets/<ns>/<name>.json after each change; the bytes of every
// Xet file a bucket token uploaded go to <data>/buckets/objects/<xet hash>, which the plain
// `resolve` route serves. Bucket ids and model repo ids are separate namespaces.

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

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
  void save(Bucket& bucket);

  // The bytes of a Xet file, when a bucket upload brought them; an empty file always.
  std::optional<stdfs::path> object(const std::string& xet_hash) const;
  void install_object(const stdfs::path& content, const std::string& xet_hash);

  BatchLie& lie() { return m_lie; }

private:
  stdfs::path file_of(const std::string& id) const { return m_root / (id + ".json"); }
  void load();

  stdfs::path m_root;
  std::mutex m_mutex;
  std::map<std::string, Bucket> m_buckets; // by id
  BatchLie m_lie;
};

inline constexpr std::string_view k_empty_xet_hash = "0000000000000000000000000000000000000000000000000000000000000000";

} // namespace testhub
