#include "hubcache/util/text.hpp"

#include "hubcache/error.hpp"

#include <cctype>

namespace hubcache::util {

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
        if (text[i] == '\\' && i + 1 < text.size() && std::string_view("\"\\$`\n").find(text[i + 1]) != std::string_view::npos) {
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

} // namespace hubcache::util
