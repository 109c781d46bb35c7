#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace hubcache::util {

namespace stdfs = std::filesystem;

// Infix that marks in-flight files. Scans skip names containing it, and sweeps may
// remove old ones: a process that died mid-write leaves only such names behind.
inline constexpr std::string_view k_temp_infix = ".tmp.nc.";

bool is_temp_name(std::string_view file_name);

// A name unique across hosts and processes sharing an NFS/Lustre directory:
// `<target name>.tmp.nc.<host>.<pid>.<random>`.
stdfs::path unique_temp_path(const stdfs::path& target);

// Writes a file under a unique temp name in the target directory and renames it into
// place on commit(). Without commit() the destructor removes the temp file, so a
// failed or interrupted write never publishes anything.
class AtomicFile {
public:
  explicit AtomicFile(stdfs::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view data);
  void write(const void* data, std::size_t size);
  // fsyncs, then renames over the target.
  void commit();
  // fsyncs and closes, leaving the temp file for the caller (e.g. to link(2) it).
  const stdfs::path& finish_without_rename();
  const stdfs::path& temp_path() const { return m_temp; }
  const stdfs::path& target() const { return m_target; }

private:
  void close_checked();

  stdfs::path m_target;
  stdfs::path m_temp;
  int m_fd = -1;
  bool m_done = false;
};

void write_file_atomically(const stdfs::path& target, std::string_view content);
std::string read_file(const stdfs::path& path);
// nullopt when the file does not exist; throws IoError on any other failure.
std::optional<std::string> read_file_if_exists(const stdfs::path& path);
// Copies `source` to `target` through a temp file + rename.
void copy_file_atomically(const stdfs::path& source, const stdfs::path& target);
// fsync a directory so a rename inside it is durable.
void sync_directory(const stdfs::path& directory);

// Creates `link_path` pointing at the existing `existing` file atomically, failing (false)
// if link_path already exists. Uses link(2), which is atomic on NFS too, and falls back
// to renameat2(RENAME_NOREPLACE) on filesystems without hard links.
bool create_exclusive_from(const stdfs::path& existing, const stdfs::path& link_path);

std::string host_name();

} // namespace hubcache::util
