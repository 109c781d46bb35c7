// Matching rules of optimum-neuron releases before 0.2, whose registry roots have no
// digest folders and whose lookup compared configs itself.
#include "registry/entry.hpp"
#include "registry/lookup.hpp"

#include <array>
#include <charconv>

namespace registry {

namespace {

// "0.0.21", "0.1.0.dev3" -> {0, 0, 21}; nullopt when it does not start with three numbers.
std::optional<std::array<int, 3>> release_of(std::string_view version)
{
  std::array<int, 3> parts{};
  const char* at = version.data();
  const char* end = version.data() + version.size();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto [next, error] = std::from_chars(at, end, parts[i]);
    if (error != std::errc() || next == at) {
      return std::nullopt;
    }
    at = next;
    if (i + 1 < parts.size()) {
      if (at == end || *at != '.') {
        return std::nullopt;
      }
      ++at;
    }
  }
  return parts;
}

} // namespace

bool matches_by_key_intersection(std::string_view registry_version)
{
  auto release = release_of(registry_version);
  return release && *release >= std::array<int, 3>{0, 0, 21} && *release < std::array<int, 3>{0, 2, 0};
}

bool same_common_keys(const nlohmann::json& stored, const nlohmann::json& target)
{
  auto left = clean_config(stored);
  auto right = clean_config(target);
  if (!left.is_object() || !right.is_object()) {
    return false;
  }
  left.erase("neuron");
  for (const auto& [key, value] : left.items()) {
    if (auto other = right.find(key); other != right.end() && *other != value) {
      return false;
    }
  }
  return true;
}

} // namespace registry
