#include "hubcache/util/text.hpp"

#include "hubcache/error.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace hubcache::util {

std::string escape_control(std::string_view text, std::size_t limit)
{
  auto out = escape_control(text.substr(0, limit));
  if (text.size() > limit) {
    out += "...";
  }
  return out;
}

std::string errno_text(int error)
{
  return std::strerror(error);
}

std::string_view trim(std::string_view text)
{
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
    text.remove_suffix(1);
  }
  return text;
}

namespace {

// Length of the valid UTF-8 sequence starting at text[i] (2-4), or 0.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i)
{
  auto byte = [&](std::size_t at) { return static_cast<unsigned char>(text[at]); };
  unsigned char lead = byte(i);
  std::size_t length = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 && lead <= 0xDF ? 2 : 0;
  if (length == 0 || i + length > text.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      return 0;
    }
  }
  unsigned char second = byte(i + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) || (lead == 0xF0 && second < 0x90)
      || (lead == 0xF4 && second > 0x8F)) {
    return 0; // overlong, surrogate or beyond U+10FFFF
  }
  // C1 controls (U+0080..U+009F) act on terminals too.
  if (lead == 0xC2 && second < 0xA0) {
    return 0;
  }
  return length;
}

} // namespace

std::string escape_control(std::string_view text)
{
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\\\";
      ++i;
    } else if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (auto length = c >= 0x80 ? utf8_sequence_length(text, i) : 0; length > 0) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\\x";
      out.push_back(digits[c >> 4]);
      out.push_back(digits[c & 0xF]);
      ++i;
    }
  }
  return out;
}

std::vector<std::string> split_command_line(std::string_view text)
{
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) {
        words.push_back(std::move(word));
        word.clear();
        in_word = false;
      }
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 < text.size()) {
        if (text[i + 1] != '\n') {
          word += text[i + 1];
        }
        ++i;
      }
    } else if (c == '\'') {
      auto end = text.find('\'', i + 1);
      if (end == std::string_view::npos) {
        throw InvalidArgument("unterminated single quote in: " + std::string(text));
      }
      word.append(text.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      ++i;
      for (; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()
            && std::string_view("\"\\$`\n").find(text[i + 1]) != std::string_view::npos) {
          ++i;
          if (text[i] == '\n') {
            continue;
          }
        }
        word += text[i];
      }
      if (i >= text.size()) {
        throw InvalidArgument("unterminated double quote in: " + std::string(text));
      }
    } else {
      word += c;
    }
  }
  if (in_word) {
    words.push_back(std::move(word));
  }
  return words;
}

std::string quote_argument(std::string_view argument)
{
  constexpr std::string_view safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_";
  if (!argument.empty() && argument.find_first_not_of(safe) == std::string_view::npos) {
    return std::string(argument);
  }
  std::string quoted = "'";
  for (char c : argument) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string human_duration(double seconds)
{
  char buffer[48];
  seconds = std::max(0.0, seconds);
  if (seconds < 10.0) {
    // A whole number (a configured limit) reads as one; a measured time keeps its hundredths.
    if (seconds == std::floor(seconds)) {
      std::snprintf(buffer, sizeof buffer, "%.0fs", seconds);
    } else {
      std::snprintf(buffer, sizeof buffer, "%.2fs", seconds);
    }
    return buffer;
  }
  auto whole = static_cast<long long>(std::llround(seconds));
  if (whole < 60) {
    std::snprintf(buffer, sizeof buffer, "%llds", whole);
  } else if (whole < 3600) {
    std::snprintf(buffer, sizeof buffer, "%lldm %02llds", whole / 60, whole % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%lldh %02lldm", whole / 3600, (whole % 3600) / 60);
  }
  return buffer;
}

} // namespace hubcache::util
