#pragma once

#include "hubcache/util/fd.hpp"
#include "hubcache/util/stream_writer.hpp"
#include "hubcache/util/temp_owner.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace hubcache::util {

namespace stdfs = std::filesystem;

// In-flight files carry k_temp_infix (temp_owner.hpp). Scans skip names containing it, and
// sweeps may remove those whose writer is gone: a process that died mid-write leaves only
// such names behind.
bool is_temp_name(std::string_view file_name);

// `directory` + "/" + `relative` as a plain string (one allocation; no std::filesystem::path,
// which also keeps a list of components): for the tens of thousands of files of a push.
std::string join_path(std::string_view directory, std::string_view relative);

// A name unique across hosts and processes sharing an NFS/Lustre directory, naming its
// writer (temp_owner.hpp): `<target name>.tmp.nc.<host>.<pid>.<node>-<start>-<random>`.
stdfs::path unique_temp_path(const stdfs::path& target);
// 10 random characters of [0-9a-z]: the one maker of the random part of a unique name.
std::string random_suffix();

// A new file under a unique name next to `target` (see unique_temp_path), removed on
// destruction unless keep() was called: scratch files such as a request payload.
class TemporaryFile {
public:
  explicit TemporaryFile(const stdfs::path& target, int mode = 0600);
  ~TemporaryFile();
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  void write(std::string_view data) { write(data.data(), data.size()); }
  void write(const void* data, std::size_t size);
  // fsyncs (when `durable`) and closes, reporting errors that only show up there.
  void close(bool durable = true);
  // The file stays on disk after destruction (it was renamed or linked elsewhere).
  void keep();
  const stdfs::path& path() const { return m_path; }
  const Fd& fd() const { return m_fd; }

private:
  stdfs::path m_path;
  Fd m_fd;
  bool m_keep = false;
  int m_signal_slot = -1; // where the fatal-signal cleanup finds this file
};

// A new directory under a unique name next to `target` (see unique_temp_path), removed
// with its content on destruction: scratch space such as a transfer's staging. A directory
// left by a killed process is recognised by is_abandoned_temp_file.
class TemporaryDirectory {
public:
  explicit TemporaryDirectory(const stdfs::path& target);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const stdfs::path& path() const { return m_path; }

private:
  stdfs::path m_path;
};

// Makes SIGINT, SIGTERM and SIGHUP remove every live TemporaryFile (and AtomicFile temp)
// of this process before it dies, so an interrupted run leaves no partial files behind.
// Call once at start-up; an InterruptScope takes the signals over while it lives.
void remove_temp_files_on_fatal_signals();

// A temp file or folder (see unique_temp_path) left by a writer that is gone: provably
// (util::is_abandoned), or of unknown liveness and unchanged for more than `unsure_age`.
// A link is judged as itself, never followed.
bool is_abandoned_temp_file(const stdfs::path& path, std::chrono::seconds unsure_age,
                            std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// Writes a file under a unique temp name in the target directory and renames it into
// place on commit(). Without commit() the destructor removes the temp file, so a
// failed or interrupted write never publishes anything.
class AtomicFile {
public:
  explicit AtomicFile(stdfs::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Before the first write: the bytes of a long stream (a download) of `expected_size`
  // bytes (0: unknown) go through a StreamWriter, written on a second thread and, when big,
  // past the page cache. Writes are then only sure to have landed once committed or
  // complete_writes() returns. A stream announced smaller than a block is written directly.
  void stream(std::uint64_t expected_size);
  void write(std::string_view data);
  void write(const void* data, std::size_t size) { write(std::string_view(static_cast<const char*>(data), size)); }
  // fsyncs, then renames over the target.
  void commit(bool durable = true);
  // fsyncs and closes, leaving the temp file for the caller (e.g. to link(2) it); it is
  // still removed on destruction.
  const stdfs::path& finish_without_rename();
  const stdfs::path& temp_path() const { return m_temp.path(); }
  const stdfs::path& target() const { return m_target; }

  // Every byte written so far is in the temp file once this returns (a stream's writer is
  // done); IoError when one could not be written.
  void complete_writes();

private:
  stdfs::path m_target;
  TemporaryFile m_temp;
  std::unique_ptr<StreamWriter> m_stream;
};

// What is read whole from outside (config, token, registry and JSON files) is bounded.
inline constexpr std::uint64_t k_default_read_limit = std::uint64_t{64} << 20;

// Opens a regular file for reading. Anything else (FIFO, device, socket, directory) is an
// IoError, so a hostile path can neither hang a reader nor stream forever.
Fd open_regular_file(const stdfs::path& path);
// nullopt when the file does not exist.
std::optional<Fd> open_regular_file_if_exists(const stdfs::path& path);

using ChunkConsumer = std::function<void(const char* data, std::size_t size)>;
// Reads `fd` to its end in chunks (EINTR-safe), handing each to `consume`; returns the
// byte count. `what` names the file in errors.
std::uint64_t read_chunks(const Fd& fd, const stdfs::path& what, const ChunkConsumer& consume,
                          std::size_t chunk_size = std::size_t{1} << 20);
std::uint64_t read_file_chunks(const stdfs::path& path, const ChunkConsumer& consume);
// Reads up to `size` bytes; fewer only at the end of the file.
std::size_t read_up_to(const Fd& fd, const stdfs::path& what, char* buffer, std::size_t size);

// `durable`: fsynced before the rename (false: only atomic, for scratch state such as the
// test Hub's, where a machine crash loses nothing anyone needs).
void write_file_atomically(const stdfs::path& target, std::string_view content, bool durable = true);
// The whole of a regular file of at most `max_size` bytes; IoError otherwise.
std::string read_file(const stdfs::path& path, std::uint64_t max_size = k_default_read_limit);
// nullopt when the file does not exist; throws IoError on any other failure.
std::optional<std::string> read_file_if_exists(const stdfs::path& path, std::uint64_t max_size = k_default_read_limit);
// The same for `name` in the open directory `dir_fd` (a final symlink is followed): a
// walk that holds the directory open spares the kernel a path lookup per file.
// `dir_path` names that directory in errors.
std::optional<std::string> read_file_at_if_exists(int dir_fd, const char* name, std::string_view dir_path,
                                                  std::uint64_t max_size = k_default_read_limit);

// Opens `name` in the directory `parent_fd` (AT_FDCWD: a path) as a directory, without
// following a final symlink; an invalid Fd with errno set when it cannot.
Fd open_directory_at(int parent_fd, const char* name);
// Hands every name of the open directory but "." and ".." to `visit`, with its d_type
// (DT_UNKNOWN where the filesystem does not say). Read with getdents64 in large blocks:
// a tree walk is all system calls. Returns 0, or the errno of a failed read.
int for_each_directory_item(const Fd& directory,
                            const std::function<void(std::string_view name, unsigned char type)>& visit);
// Copies `source` to `target` through a temp file + rename.
void copy_file_atomically(const stdfs::path& source, const stdfs::path& target);
// fsync a directory so a rename inside it is durable.
void sync_directory(const stdfs::path& directory);
// syncfs(2) of the filesystem holding `path`: one flush for many files written without
// fsync (staging before a publish), instead of one fsync each.
void sync_filesystem(const stdfs::path& path);

// rename(2) that fails (false) instead of replacing an existing `to`: renameat2 with
// RENAME_NOREPLACE, which Linux supports on local filesystems and NFS.
bool rename_no_replace(const stdfs::path& from, const stdfs::path& to);

// Creates `link_path` pointing at the existing `existing` file atomically, failing (false)
// if link_path already exists. Uses link(2), which is atomic on NFS too, and falls back
// to renameat2(RENAME_NOREPLACE) on filesystems without hard links.
bool create_exclusive_from(const stdfs::path& existing, const stdfs::path& link_path);

std::string host_name();

} // namespace hubcache::util
