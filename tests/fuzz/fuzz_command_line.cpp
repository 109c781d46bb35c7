// The shell-word splitter (NEURON_CC_FLAGS, manifest commands) and its inverse, the
// argument quoting used to show commands. Properties: only InvalidArgument (unterminated
// quotes); quoting the words and splitting again gives the same words; split_cc_flags is
// the same splitter; a --cache_dir found is one the flags give.
#include "fuzz_support.hpp"

#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/util/text.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  auto text = fuzz::text_of(data, size);

  // Any argument survives quoting.
  auto quoted = hubcache::util::quote_argument(text);
  auto back = hubcache::util::split_command_line(quoted);
  FUZZ_CHECK(back.size() == 1 && back[0] == text, "quote_argument does not round-trip: " + quoted);

  std::vector<std::string> words;
  bool split = fuzz::accepts([&] { words = hubcache::util::split_command_line(text); });
  std::vector<std::string> flags;
  bool split_flags = fuzz::accepts([&] { flags = hubcache::compilecache::split_cc_flags(text); });
  FUZZ_CHECK(split == split_flags && words == flags, "split_cc_flags differs from split_command_line");
  if (!split) {
    return 0;
  }
  std::string line;
  for (const auto& word : words) {
    line += (line.empty() ? "" : " ") + hubcache::util::quote_argument(word);
  }
  FUZZ_CHECK(hubcache::util::split_command_line(line) == words, "quoted words do not split back: " + line);

  if (auto cache_dir = hubcache::compilecache::cache_dir_from_cc_flags(text)) {
    bool given = false;
    for (std::size_t i = 0; i < words.size(); ++i) {
      given = given || words[i] == "--cache_dir=" + *cache_dir
              || (words[i] == "--cache_dir" && i + 1 < words.size() && words[i + 1] == *cache_dir);
    }
    FUZZ_CHECK(given, "a --cache_dir that is not in the flags: " + *cache_dir);
  }
  return 0;
}
