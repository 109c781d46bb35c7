#include "remembered_lines.hpp"

#include "hubcache/error.hpp"
#include "hubcache/util/fd.hpp"

#include <optional>

namespace hubcache::compilecache {

namespace stdfs = std::filesystem;

bool for_each_line(const stdfs::path& file, const std::function<bool(std::string_view)>& on_line)
{
  std::optional<util::Fd> fd;
  try {
    fd = util::open_regular_file_if_exists(file);
  } catch (const Error&) {
    return false;
  }
  if (!fd) {
    return false;
  }
  std::string carry;
  bool going = true;
  try {
    auto read = util::read_chunks(*fd, file, [&](const char* data, std::size_t size) {
      std::string_view chunk(data, size);
      while (going && !chunk.empty()) {
        auto end = chunk.find('\n');
        if (end == std::string_view::npos) {
          carry.append(chunk);
          return;
        }
        if (carry.empty()) {
          going = on_line(chunk.substr(0, end));
        } else {
          carry.append(chunk.substr(0, end));
          going = on_line(carry);
          carry.clear();
        }
        chunk.remove_prefix(end + 1);
      }
    });
    if (read > util::k_default_read_limit) {
      return false;
    }
  } catch (const Error&) {
    return false;
  }
  return going && carry.empty();
}

} // namespace hubcache::compilecache
