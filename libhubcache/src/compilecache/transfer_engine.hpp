#pragma once

#include "hubcache/compilecache/transfer_report.hpp"
#include "hubcache/storage/repository.hpp"

#include <atomic>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// The parallel downloads a pull (pull_apply's PullRun) and a copy between stores
// (store_copy's CopyRun) share. Internal to compilecache.
//
// The engine owns: the bounded worker pool over the files of a range of items (entries),
// one task per file, entry after entry; the interrupt checks at its safe points (before a
// file starts, and during one through its byte progress, so a big file stops part way);
// which item failed and its first error (an item fails whole; an interrupt is no error);
// and the stop of the whole run on a failure of a store itself (transfer_errors), with its
// reason.
//
// The callers own: what an item is and where its files land; what they keep of the bytes
// written (digests); their progress figures; what follows the files of an item (a pull
// installs each entry as it completes, a copy commits a batch once all its files are in);
// and their report, into which they take the engine's errors.
namespace hubcache::compilecache {

class TransferEngine {
public:
  // One entry to download: its path (for its error) and its files, whose digests the
  // callers update as they land.
  struct Item {
    const std::string* path;
    std::vector<storage::RepoFile>* files;
  };

  struct Hooks {
    // Where a file of an item lands (its folders are made).
    std::function<std::filesystem::path(std::size_t item, const storage::RepoFile& file)> destination;
    // Bytes newly read of some file; called one at a time.
    std::function<void(std::uint64_t bytes)> on_bytes;
    // A file landed, checked against its listing: the digests of the bytes written, and
    // how many of its bytes on_bytes was told of.
    std::function<void(std::size_t item, storage::RepoFile& file, util::FileDigests written, std::uint64_t told)>
      on_landed;
    // Every file of an item was tried: landed, failed or left after a stop (optional).
    std::function<void(std::size_t item)> on_item_done;
  };

  explicit TransferEngine(std::vector<Item> items);

  // Downloads the files of items [begin, end) from `source`, `workers` at a time, without
  // fsync (the callers make them durable as their publishing asks).
  void download(storage::Repository& source, std::size_t begin, std::size_t end, std::size_t workers,
                const Hooks& hooks);

  // The item fails whole, for `error` (also a failure after its files landed).
  void fail(std::size_t item, const std::exception_ptr& error);
  bool failed(std::size_t item) const { return m_failed[item]; }
  // True once a failure of a store stopped the run: no further file starts.
  bool stopped() const { return m_stopped; }
  // What stopped it; read after the workers are done.
  const std::string& stop_reason() const { return m_stop_reason; }
  // True when a failure was a full disk (or quota).
  bool no_space() const { return m_no_space; }
  // The first error of each item failed since the last call, in the order they came.
  std::vector<Skipped> take_errors();

private:
  void download_file(storage::Repository& source, std::size_t item, std::size_t file_index, const Hooks& hooks);

  std::vector<Item> m_items;
  std::unique_ptr<std::atomic<bool>[]> m_failed;
  std::unique_ptr<std::atomic<std::size_t>[]> m_remaining; // files of each item not tried yet
  std::atomic<bool> m_stopped{false};
  std::mutex m_mutex; // guards the errors, the stop reason, no_space
  std::vector<Skipped> m_errors;
  std::string m_stop_reason;
  bool m_no_space = false;
  std::mutex m_bytes_mutex; // on_bytes one at a time, and each file's count of bytes told
};

} // namespace hubcache::compilecache
