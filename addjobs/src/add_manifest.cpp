#include "addjobs/add_manifest.hpp"

#include <hubcache/error.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/process.hpp>
#include <hubcache/util/text.hpp>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <set>

namespace addjobs {

namespace {

namespace stdfs = std::filesystem;

class ManifestReader {
public:
  explicit ManifestReader(stdfs::path file) : m_file(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& message) const
  {
    std::string where = m_file.string();
    if (!mark.is_null()) {
      where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    throw hubcache::InvalidArgument(where + ": " + message, "see examples/add-manifest.yaml for the schema");
  }

  static std::string kind_of(const YAML::Node& node)
  {
    switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "nothing (null)";
    case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
    default: return "an undefined value";
    }
  }

  // Keys of a mapping, checked against `allowed`, duplicates refused.
  std::vector<std::pair<std::string, YAML::Node>> entries(const YAML::Node& node, const std::string& what,
                                                          const std::vector<std::string>& allowed) const
  {
    auto result = checked_entries(node, what, allowed);
    const YAML::Node* batch_size = nullptr;
    bool train_batch_size = false;
    for (const auto& [key, value] : result) {
      batch_size = key == "batch_size" ? &value : batch_size;
      train_batch_size = train_batch_size || key == "train_batch_size";
    }
    if (batch_size != nullptr && train_batch_size) {
      fail(batch_size->Mark(), "give either 'batch_size' or 'train_batch_size' in " + what + ", not both");
    }
    return result;
  }

  std::vector<std::pair<std::string, YAML::Node>> checked_entries(const YAML::Node& node, const std::string& what,
                                                                  const std::vector<std::string>& allowed) const
  {
    if (!node.IsMap()) {
      fail(node.Mark(), what + " must be a mapping, got " + kind_of(node));
    }
    std::vector<std::pair<std::string, YAML::Node>> result;
    std::set<std::string> seen;
    for (const auto& item : node) {
      if (!item.first.IsScalar()) {
        fail(item.first.Mark(), "keys of " + what + " must be plain names");
      }
      auto key = item.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (const auto& name : allowed) {
          list += (list.empty() ? "" : ", ") + name;
        }
        fail(item.first.Mark(), "unknown key '" + key + "' in " + what + " (expected one of: " + list + ")");
      }
      if (!seen.insert(key).second) {
        fail(item.first.Mark(), "key '" + key + "' appears twice in " + what);
      }
      result.emplace_back(key, item.second);
    }
    return result;
  }

  std::string string_value(const YAML::Node& node, const std::string& key) const
  {
    if (!node.IsScalar() || node.Scalar().empty()) {
      fail(node.Mark(), "'" + key + "' must be a non-empty string, got " + kind_of(node));
    }
    return node.Scalar();
  }

  long long integer_value(const YAML::Node& node, const std::string& key, long long minimum) const
  {
    // Quoted scalars carry the "!" tag: "4" is a string, not a number.
    if (!node.IsScalar() || node.Tag() == "!") {
      fail(node.Mark(), "'" + key + "' must be an integer, got " + kind_of(node));
    }
    const auto& text = node.Scalar();
    long long value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
      fail(node.Mark(), "'" + key + "' must be an integer, got " + kind_of(node));
    }
    if (value < minimum) {
      fail(node.Mark(), "'" + key + "' must be at least " + std::to_string(minimum) + ", got " + text);
    }
    return value;
  }

  std::vector<std::string> command_value(const YAML::Node& node) const
  {
    if (node.IsScalar()) {
      try {
        auto words = command_words(string_value(node, "command"));
        if (!words.empty()) {
          return words;
        }
      } catch (const hubcache::InvalidArgument& error) {
        fail(node.Mark(), error.what());
      }
    } else if (node.IsSequence() && node.size() > 0) {
      std::vector<std::string> words;
      for (const auto& word : node) {
        if (!word.IsScalar()) {
          fail(word.Mark(), "each word of 'command' must be a string, got " + kind_of(word));
        }
        words.push_back(word.Scalar());
      }
      return words;
    }
    fail(node.Mark(), "'command' must be a string or a non-empty list of strings, got " + kind_of(node));
  }

  // Configuration keys found in `fields` applied onto `configuration`; `present` gets
  // the keys set (to tell "missing" from "given").
  void apply_configuration_key(Configuration& configuration, std::set<std::string>& present, const std::string& key,
                               const YAML::Node& value) const
  {
    if (key == "task") {
      configuration.task = string_value(value, key);
    } else if (key == "precision" || key == "auto_cast_type") {
      auto text = string_value(value, key);
      const auto& allowed = key == "precision" ? precisions() : auto_cast_types();
      if (std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
        std::string choices;
        for (const auto& choice : allowed) {
          choices += (choices.empty() ? "" : ", ") + choice;
        }
        fail(value.Mark(), "'" + key + "' must be one of " + choices + ", got '" + text + "'");
      }
      (key == "precision" ? configuration.precision : configuration.auto_cast_type.emplace()) = text;
    } else if (key == "num_cores") {
      configuration.num_cores = integer_value(value, key, 1);
    } else if (key == "train_batch_size" || key == "batch_size") {
      configuration.train_batch_size = integer_value(value, key, 1);
      present.insert("train_batch_size");
    } else if (key == "eval_batch_size") {
      configuration.eval_batch_size = integer_value(value, key, 1);
    } else if (key == "sequence_length") {
      configuration.sequence_length = integer_value(value, key, 1);
    } else if (key == "encoder_sequence_length") {
      configuration.encoder_sequence_length = integer_value(value, key, 1);
    } else if (key == "decoder_sequence_length") {
      configuration.decoder_sequence_length = integer_value(value, key, 1);
    } else if (key == "gradient_accumulation_steps") {
      configuration.gradient_accumulation_steps = integer_value(value, key, 1);
    } else if (key == "max_steps") {
      configuration.max_steps = integer_value(value, key, 1);
    }
    present.insert(key);
  }

  const stdfs::path& file() const { return m_file; }

private:
  stdfs::path m_file;
};

const std::vector<std::string> k_configuration_keys = {"task",
                                                       "precision",
                                                       "auto_cast_type",
                                                       "num_cores",
                                                       "train_batch_size",
                                                       "batch_size",
                                                       "eval_batch_size",
                                                       "sequence_length",
                                                       "encoder_sequence_length",
                                                       "decoder_sequence_length",
                                                       "gradient_accumulation_steps",
                                                       "max_steps"};

std::vector<std::string> with(std::vector<std::string> keys, const std::vector<std::string>& more)
{
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
}

} // namespace

std::vector<std::string> command_words(const std::string& text)
{
  return hubcache::util::split_command_line(text);
}

// A manifest lists a few models and configurations; anything larger is not one.
constexpr std::uint64_t k_max_manifest_size = 1 << 20;

namespace {

YAML::Node load_root(std::string_view text, ManifestReader& reader)
{
  YAML::Node root;
  if (text.size() > k_max_manifest_size) {
    reader.fail(YAML::Mark::null_mark(), "larger than " + std::to_string(k_max_manifest_size) + " bytes");
  }
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& error) {
    reader.fail(error.mark, "nested too deeply (" + std::to_string(error.depth()) + " levels)");
  } catch (const YAML::Exception& error) {
    reader.fail(error.mark, "not valid YAML: " + error.msg);
  }
  if (!root.IsMap()) {
    reader.fail(root.Mark(),
                "a manifest must be a YAML mapping with a 'models' list, got " + ManifestReader::kind_of(root));
  }
  return root;
}

// `env:` — variable names to string values.
void read_environment(ManifestReader& reader, const YAML::Node& value, std::map<std::string, std::string>& environment)
{
  if (!value.IsMap()) {
    reader.fail(value.Mark(),
                "'env' must be a mapping of variable names to strings, got " + ManifestReader::kind_of(value));
  }
  for (const auto& item : value) {
    if (!item.first.IsScalar()) { // as<std::string>() would throw a yaml-cpp conversion error
      reader.fail(item.first.Mark(),
                  "keys of 'env' must be variable names, got " + ManifestReader::kind_of(item.first));
    }
    auto name = item.first.Scalar();
    if (name.empty() || name.find('=') != std::string::npos) {
      reader.fail(item.first.Mark(), "'" + name + "' is not an environment variable name");
    }
    if (!item.second.IsScalar()) {
      reader.fail(item.second.Mark(),
                  "the value of " + name + " must be a string, got " + ManifestReader::kind_of(item.second));
    }
    environment[name] = item.second.Scalar();
  }
}

// One configuration: the model's defaults, then its own keys; the required ones present.
Configuration read_configuration(ManifestReader& reader, const YAML::Node& node, const Configuration& defaults,
                                 const std::set<std::string>& default_keys, const std::string& model)
{
  Configuration configuration = defaults;
  auto keys = default_keys;
  for (const auto& [key, value] : reader.entries(node, "a configuration", k_configuration_keys)) {
    reader.apply_configuration_key(configuration, keys, key, value);
  }
  for (const auto* required : {"task", "precision", "num_cores", "train_batch_size"}) {
    if (keys.count(required) == 0 && !(std::string_view(required) == "precision" && keys.count("auto_cast_type"))) {
      std::string name = required;
      reader.fail(node.Mark(), "missing required key '" + name + "' in a configuration of '" + model + "'"
                                 + (name == "train_batch_size" ? " (or batch_size)"
                                    : name == "precision"      ? " (or auto_cast_type)"
                                                               : ""));
    }
  }
  try {
    configuration.validate();
  } catch (const hubcache::InvalidArgument& error) {
    reader.fail(node.Mark(), error.what());
  }
  return configuration;
}

// One item of `models:`: the model, its command, defaults for its configurations, and them.
ManifestModel read_model(ManifestReader& reader, const YAML::Node& node, const stdfs::path& base_dir)
{
  ManifestModel model;
  Configuration defaults;
  std::set<std::string> default_keys;
  YAML::Node configurations;
  bool has_configurations = false;
  for (const auto& [key, value] :
       reader.entries(node, "a model", with(k_configuration_keys, {"model", "command", "configurations"}))) {
    if (key == "model") {
      model.model = reader.string_value(value, key);
    } else if (key == "command") {
      model.command = reader.command_value(value);
    } else if (key == "configurations") {
      configurations = value;
      has_configurations = true;
    } else {
      reader.apply_configuration_key(defaults, default_keys, key, value);
    }
  }
  if (model.model.empty()) {
    reader.fail(node.Mark(), "missing required key 'model' (a Hub model id or a directory)");
  }
  // A relative path that names a directory next to the manifest is that directory.
  std::error_code ec;
  if (stdfs::path(model.model).is_relative() && !model.model.starts_with("~")
      && stdfs::is_directory(base_dir / model.model, ec)) {
    model.model = stdfs::absolute(base_dir / model.model).lexically_normal().string();
  }
  if (!has_configurations) {
    reader.fail(node.Mark(), "missing required key 'configurations' for model '" + model.model + "'");
  }
  if (!configurations.IsSequence() || configurations.size() == 0) {
    reader.fail(configurations.Mark(),
                "'configurations' must be a non-empty list, got " + ManifestReader::kind_of(configurations));
  }
  for (const auto& configuration_node : configurations) {
    model.configurations.push_back(read_configuration(reader, configuration_node, defaults, default_keys, model.model));
  }
  return model;
}

} // namespace

Manifest parse_manifest_text(std::string_view text, const std::filesystem::path& file)
{
  ManifestReader reader(file);
  const auto root = load_root(text, reader);
  Manifest manifest;
  manifest.file = file;
  const auto base_dir = file.has_parent_path() ? file.parent_path() : stdfs::path(".");
  YAML::Node models;
  bool has_models = false;
  for (const auto& [key, value] : reader.entries(
         root, "the manifest", {"repo", "cache_dir", "command", "env", "timeout", "compiler_version", "models"})) {
    if (key == "repo") {
      manifest.repo = reader.string_value(value, key);
    } else if (key == "cache_dir") {
      manifest.cache_dir = reader.string_value(value, key);
    } else if (key == "command") {
      manifest.command = reader.command_value(value);
    } else if (key == "timeout") {
      manifest.timeout = std::chrono::seconds(reader.integer_value(value, key, 1));
    } else if (key == "compiler_version") {
      manifest.compiler_version = reader.string_value(value, key);
    } else if (key == "env") {
      read_environment(reader, value, manifest.environment);
    } else if (key == "models") {
      models = value;
      has_models = true;
    }
  }
  if (!has_models) {
    reader.fail(root.Mark(), "missing required key 'models' (a list of models with their configurations)");
  }
  if (!models.IsSequence() || models.size() == 0) {
    reader.fail(models.Mark(), "'models' must be a non-empty list, got " + ManifestReader::kind_of(models));
  }
  for (const auto& model_node : models) {
    manifest.models.push_back(read_model(reader, model_node, base_dir));
  }
  return manifest;
}

Manifest parse_manifest(const std::filesystem::path& file)
{
  std::error_code ec;
  if (stdfs::is_directory(file, ec)) {
    throw hubcache::InvalidArgument("manifest " + file.string() + " is a directory, not a YAML file");
  }
  auto text = hubcache::util::read_file_if_exists(file, k_max_manifest_size);
  if (!text) {
    throw hubcache::InvalidArgument("manifest " + file.string() + " does not exist");
  }
  return parse_manifest_text(*text, file);
}

} // namespace addjobs
