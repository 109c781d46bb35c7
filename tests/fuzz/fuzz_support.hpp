#pragma once

// Shared by the libFuzzer targets in this directory. A target fails (abort, which
// libFuzzer reports with the input) on a sanitizer report, on an exception its parser's
// contract does not allow, and on a broken property (FUZZ_CHECK).

#include <hubcache/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unistd.h>
#include <vector>

namespace fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size)
{
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void fail(const char* file, int line, const std::string& what)
{
  std::fprintf(stderr, "%s:%d: fuzz property broken: %s\n", file, line, what.c_str());
  std::fflush(stderr);
  std::abort();
}

#define FUZZ_CHECK(condition, what)                                                                                    \
  do {                                                                                                                 \
    if (!(condition)) {                                                                                                \
      ::fuzz::fail(__FILE__, __LINE__, std::string(#condition ": ") + (what));                                         \
    }                                                                                                                  \
  } while (false)

// Runs `body`; the library's typed errors (hubcache::Error) are a parser's documented
// answer to bad input. Anything else escapes to std::terminate, which libFuzzer reports.
template <typename Body>
bool accepts(Body&& body)
{
  try {
    body();
    return true;
  } catch (const hubcache::Error&) {
    return false;
  }
}

// A private scratch directory for targets whose parser reads files, made once per process
// under $TMPDIR (tests/fuzz/run.sh points it into the build dir) and removed at exit.
inline const std::filesystem::path& scratch_dir()
{
  struct Scratch {
    std::filesystem::path path;
    Scratch()
    {
      auto base = std::filesystem::temp_directory_path() / "neuron-cache-fuzz-XXXXXX";
      std::string pattern = base.string();
      if (::mkdtemp(pattern.data()) == nullptr) {
        std::perror("mkdtemp");
        std::abort();
      }
      path = pattern;
    }
    ~Scratch()
    {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static Scratch scratch;
  return scratch.path;
}

// Splits an input into fields at '\n' (a record separator that keeps corpus files readable).
inline std::vector<std::string_view> fields(std::string_view text, std::size_t count)
{
  std::vector<std::string_view> out;
  while (out.size() + 1 < count) {
    auto newline = text.find('\n');
    if (newline == std::string_view::npos) {
      break;
    }
    out.push_back(text.substr(0, newline));
    text.remove_prefix(newline + 1);
  }
  out.push_back(text);
  while (out.size() < count) {
    out.emplace_back();
  }
  return out;
}

} // namespace fuzz
