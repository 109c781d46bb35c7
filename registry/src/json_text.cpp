#include "registry/json_text.hpp"

#include <hubcache/util/json.hpp>

#include <hubcache/error.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace registry {

namespace {

void append_hex4(std::string& out, unsigned value)
{
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\u%04x", value & 0xFFFFU);
  out += buffer;
}

// json.dumps with ensure_ascii=True: only printable ASCII stays as is.
void append_python_string(std::string& out, const std::string& text)
{
  out += '"';
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t size = text.size();
  for (std::size_t i = 0; i < size;) {
    unsigned char byte = bytes[i];
    if (byte < 0x80) {
      switch (byte) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (byte < 0x20 || byte == 0x7F) {
          append_hex4(out, byte);
        } else {
          out += static_cast<char>(byte);
        }
      }
      ++i;
      continue;
    }
    std::size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 0;
    if (length == 0 || i + length > size) {
      throw hubcache::InvalidArgument("JSON string is not valid UTF-8");
    }
    unsigned code_point = byte & (length == 2 ? 0x1FU : length == 3 ? 0x0FU : 0x07U);
    for (std::size_t k = 1; k < length; ++k) {
      if ((bytes[i + k] & 0xC0U) != 0x80U) {
        throw hubcache::InvalidArgument("JSON string is not valid UTF-8");
      }
      code_point = (code_point << 6U) | (bytes[i + k] & 0x3FU);
    }
    i += length;
    if (code_point > 0xFFFF) {
      code_point -= 0x10000;
      append_hex4(out, 0xD800 + (code_point >> 10U));
      append_hex4(out, 0xDC00 + (code_point & 0x3FFU));
    } else {
      append_hex4(out, code_point);
    }
  }
  out += '"';
}

// Keys in code-point order: UTF-8 byte order is code-point order when bytes compare unsigned.
std::vector<const nlohmann::json::object_t::value_type*> sorted_items(const nlohmann::json& object)
{
  std::vector<const nlohmann::json::object_t::value_type*> items;
  for (const auto& item : object.get_ref<const nlohmann::json::object_t&>()) {
    items.push_back(&item);
  }
  std::sort(items.begin(), items.end(), [](const auto* a, const auto* b) {
    return std::lexicographical_compare(
      a->first.begin(), a->first.end(), b->first.begin(), b->first.end(),
      [](char x, char y) { return static_cast<unsigned char>(x) < static_cast<unsigned char>(y); });
  });
  return items;
}

// A key PretrainedConfig turned into a Python int ({int(key): ...}), written back as str(int).
std::optional<std::string> python_int_key(const std::string& key)
{
  std::string_view text = key;
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text.size() > 18
      || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  auto digits = text.find_first_not_of('0');
  std::string canonical = digits == std::string_view::npos ? "0" : std::string(text.substr(digits));
  return negative && canonical != "0" ? "-" + canonical : canonical;
}

// The items of an object whose keys were ints in Python, sorted as sort_keys sorts ints;
// empty when a key is not an int (or two keys are the same int): then they stay strings.
std::vector<std::pair<std::string, const nlohmann::json*>> int_keyed_items(const nlohmann::json& object)
{
  std::vector<std::pair<long long, std::pair<std::string, const nlohmann::json*>>> numbered;
  for (const auto& [key, element] : object.items()) {
    auto canonical = python_int_key(key);
    if (!canonical) {
      return {};
    }
    numbered.push_back({std::stoll(*canonical), {*canonical, &element}});
  }
  std::sort(numbered.begin(), numbered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<std::string, const nlohmann::json*>> items;
  for (std::size_t i = 0; i < numbered.size(); ++i) {
    if (i > 0 && numbered[i].first == numbered[i - 1].first) {
      return {};
    }
    items.push_back(numbered[i].second);
  }
  return items;
}

void append_scalar(std::string& out, const nlohmann::json& value)
{
  switch (value.type()) {
  case nlohmann::json::value_t::null: out += "null"; break;
  case nlohmann::json::value_t::boolean: out += value.get<bool>() ? "true" : "false"; break;
  case nlohmann::json::value_t::number_integer: out += std::to_string(value.get<std::int64_t>()); break;
  case nlohmann::json::value_t::number_unsigned: out += std::to_string(value.get<std::uint64_t>()); break;
  case nlohmann::json::value_t::number_float: out += python_float_repr(value.get<double>()); break;
  case nlohmann::json::value_t::string: append_python_string(out, value.get_ref<const std::string&>()); break;
  default: throw hubcache::InvalidArgument("binary or discarded values cannot be written as JSON text");
  }
}

// live_config: the value is (or holds) a config as a PretrainedConfig holds it, whose
// id2label and pruned_heads maps have int keys; int_keyed: this object is such a map.
void append_value(std::string& out, const nlohmann::json& value, int indent, int level, bool live_config = false,
                  bool int_keyed = false)
{
  auto newline = [&](int depth) {
    out += '\n';
    out.append(static_cast<std::size_t>(indent * depth), ' ');
  };
  if (value.is_object()) {
    if (value.empty()) {
      out += "{}";
      return;
    }
    std::vector<std::pair<std::string, const nlohmann::json*>> items;
    if (int_keyed) {
      items = int_keyed_items(value);
    }
    if (items.empty()) {
      for (const auto* item : sorted_items(value)) {
        items.emplace_back(item->first, &item->second);
      }
    }
    out += '{';
    bool first = true;
    for (const auto& [key, element] : items) {
      if (!first) {
        out += indent > 0 ? "," : ", ";
      }
      first = false;
      if (indent > 0) {
        newline(level + 1);
      }
      append_python_string(out, key);
      out += ": ";
      append_value(out, *element, indent, level + 1, live_config,
                   live_config && (key == "id2label" || key == "pruned_heads"));
    }
    if (indent > 0) {
      newline(level);
    }
    out += '}';
  } else if (value.is_array()) {
    if (value.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    bool first = true;
    for (const auto& element : value) {
      if (!first) {
        out += indent > 0 ? "," : ", ";
      }
      first = false;
      if (indent > 0) {
        newline(level + 1);
      }
      append_value(out, element, indent, level + 1, live_config);
    }
    if (indent > 0) {
      newline(level);
    }
    out += ']';
  } else {
    append_scalar(out, value);
  }
}

void append_python_repr(std::string& out, const nlohmann::json& value)
{
  if (value.is_string()) {
    // Python picks single quotes unless the text holds one and no double quote.
    const auto& text = value.get_ref<const std::string&>();
    char quote = (text.find('\'') != std::string::npos && text.find('"') == std::string::npos) ? '"' : '\'';
    out += quote;
    for (char c : text) {
      if (c == quote || c == '\\') {
        out += '\\';
      }
      if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else {
        out += c;
      }
    }
    out += quote;
    return;
  }
  if (value.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& element : value) {
      out += first ? "" : ", ";
      first = false;
      append_python_repr(out, element);
    }
    out += ']';
    return;
  }
  if (value.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, element] : value.items()) {
      out += first ? "" : ", ";
      first = false;
      append_python_repr(out, key);
      out += ": ";
      append_python_repr(out, element);
    }
    out += '}';
    return;
  }
  if (value.is_null()) {
    out += "None";
  } else if (value.is_boolean()) {
    out += value.get<bool>() ? "True" : "False";
  } else if (value.is_number_float()) {
    double number = value.get<double>();
    out += std::isinf(number) ? (number > 0 ? "inf" : "-inf") : std::isnan(number) ? "nan" : python_float_repr(number);
  } else {
    append_scalar(out, value);
  }
}

} // namespace

std::string python_float_repr(double value)
{
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "Infinity" : "-Infinity";
  }
  std::string out = std::signbit(value) ? "-" : "";
  value = std::fabs(value);
  char buffer[64];
  // Shortest round-trip digits, like Python's repr (David Gay's algorithm, mode 0).
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  if (error != std::errc()) {
    throw hubcache::InvalidArgument("cannot format floating point value");
  }
  std::string scientific(buffer, end);
  auto e_at = scientific.find('e');
  std::string digits;
  for (std::size_t i = 0; i < e_at; ++i) {
    if (scientific[i] != '.') {
      digits += scientific[i];
    }
  }
  int exponent = std::stoi(scientific.substr(e_at + 1));
  int point = exponent + 1; // digits are 0.d1d2... * 10^point
  auto count = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out += "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
    } else if (point < count) {
      out += digits.substr(0, static_cast<std::size_t>(point)) + "." + digits.substr(static_cast<std::size_t>(point));
    } else {
      out += digits + std::string(static_cast<std::size_t>(point - count), '0') + ".0";
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (count > 1) {
    out += "." + digits.substr(1);
  }
  char exponent_text[16];
  std::snprintf(exponent_text, sizeof exponent_text, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  out += exponent_text;
  return out;
}

std::string dumps_indented(const nlohmann::json& value)
{
  std::string out;
  append_value(out, value, 2, 0);
  return out;
}

std::string dumps_compact(const nlohmann::json& value)
{
  std::string out;
  append_value(out, value, 0, 0);
  return out;
}

std::string dumps_compact_live_config(const nlohmann::json& value)
{
  std::string out;
  append_value(out, value, 0, 0, true);
  return out;
}

std::string python_str(const nlohmann::json& value)
{
  if (value.is_string()) {
    return value.get<std::string>();
  }
  std::string out;
  append_python_repr(out, value);
  return out;
}

nlohmann::json parse_json(std::string_view text, const std::string& what)
{
  return hubcache::util::parse_json(text, what);
}

} // namespace registry
