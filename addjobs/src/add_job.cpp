#include "addjobs/add_job.hpp"

#include "registry/json_text.hpp"
#include "registry/model_source.hpp"

#include <hubcache/compilecache/compile_cache.hpp>
#include <hubcache/compilecache/sync.hpp>
#include <hubcache/error.hpp>
#include <hubcache/hub/api.hpp>
#include <hubcache/storage/repo_spec.hpp>
#include <hubcache/util/fs.hpp>
#include <hubcache/util/text.hpp>

#include <algorithm>
#include <cctype>

namespace addjobs {

namespace {

namespace stdfs = std::filesystem;

std::string dtype_of(const std::string& precision)
{
  return precision == "bf16" ? "bfloat16" : precision == "fp16" ? "float16" : "float32";
}

std::string joined(const std::vector<std::string>& words, const std::string& last_separator)
{
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == words.size() ? last_separator : ", ") + words[i];
  }
  return text;
}

bool is_one_of(const std::string& value, const std::vector<std::string>& allowed)
{
  return std::find(allowed.begin(), allowed.end(), value) != allowed.end();
}

bool is_identifier(std::string_view text)
{
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front())) != 0) {
    return false;
  }
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

// Wrapper options that are not compiler flags (libneuronxla strips them itself).
bool is_wrapper_option(std::string_view word)
{
  for (std::string_view option :
       {"--cache_dir", "--log_level", "--retry_failed_compilation", "--no_cache", "--no-cache"}) {
    if (word == option || (word.starts_with(option) && word.size() > option.size() && word[option.size()] == '=')) {
      return true;
    }
  }
  return false;
}

} // namespace

const std::vector<std::string>& precisions()
{
  static const std::vector<std::string> values = {"fp", "bf16", "fp16"};
  return values;
}

const std::vector<std::string>& auto_cast_types()
{
  static const std::vector<std::string> values = {"bf16", "fp16", "tf32", "fp32"};
  return values;
}

void Configuration::validate() const
{
  if (task.empty()) {
    throw hubcache::InvalidArgument("a configuration needs a task (e.g. text-generation)");
  }
  if (precision.empty() && !auto_cast_type) {
    throw hubcache::InvalidArgument("a configuration needs a precision (" + joined(precisions(), " or ")
                                    + ") or an auto-cast type (" + joined(auto_cast_types(), " or ") + ")");
  }
  if (!precision.empty() && !is_one_of(precision, precisions())) {
    throw hubcache::InvalidArgument("precision must be " + joined(precisions(), " or ") + " (got '" + precision + "')");
  }
  if (auto_cast_type && !is_one_of(*auto_cast_type, auto_cast_types())) {
    throw hubcache::InvalidArgument("auto_cast_type must be " + joined(auto_cast_types(), " or ") + " (got '"
                                    + *auto_cast_type + "')");
  }
  if (num_cores < 1 || num_cores > 128) {
    throw hubcache::InvalidArgument("num_cores must be between 1 and 128 (got " + std::to_string(num_cores) + ")");
  }
  if (train_batch_size < 1) {
    throw hubcache::InvalidArgument("a configuration needs a train batch size of at least 1");
  }
  bool has_encoder = encoder_sequence_length.has_value();
  bool has_decoder = decoder_sequence_length.has_value();
  if (sequence_length && (has_encoder || has_decoder)) {
    throw hubcache::InvalidArgument(
      "give either sequence_length or encoder_sequence_length and decoder_sequence_length, not both");
  }
  if (!sequence_length && !has_encoder && !has_decoder) {
    // optimum's own message.
    throw hubcache::InvalidArgument(
      "You need to specify either sequence_length or encoder_sequence_length and decoder_sequence_length");
  }
  if (has_encoder != has_decoder) {
    throw hubcache::InvalidArgument(
      "Both the encoder_sequence_length and the decoder_sequence_length must be provided.");
  }
}

std::string Configuration::summary() const
{
  std::string text = "bs=" + std::to_string(train_batch_size);
  if (eval_batch_size && *eval_batch_size != train_batch_size) {
    text += "/" + std::to_string(*eval_batch_size);
  }
  if (sequence_length) {
    text += " seq=" + std::to_string(*sequence_length);
  } else if (encoder_sequence_length && decoder_sequence_length) {
    text += " seq=" + std::to_string(*encoder_sequence_length) + "/" + std::to_string(*decoder_sequence_length);
  }
  text += " cores=" + std::to_string(num_cores) + (precision.empty() ? "" : " " + precision);
  if (auto_cast_type) {
    text += " cast=" + *auto_cast_type;
  }
  if (gradient_accumulation_steps != 1) {
    text += " gas=" + std::to_string(gradient_accumulation_steps);
  }
  return text;
}

Model load_model(const std::string& spec, const hubcache::util::Environment& env,
                 const std::optional<std::string>& token)
{
  Model model;
  model.spec = spec;
  auto path = hubcache::util::expand_user(spec, env);
  std::error_code ec;
  bool looks_like_path = spec.starts_with("/") || spec.starts_with(".") || spec.starts_with("~");
  if (stdfs::is_directory(path, ec)) {
    model.directory = stdfs::absolute(path).lexically_normal();
    auto config = registry::read_model_config_if_exists(*model.directory / "config.json");
    if (!config) {
      throw hubcache::InvalidArgument("model directory " + model.directory->string() + " has no config.json",
                                      "give a directory with the model's config.json, or a Hub model id");
    }
    model.config = std::move(*config);
    model.model_id = registry::saved_from_hub_id(model.config).value_or(model.directory->filename().string());
  } else if (looks_like_path || !hubcache::storage::is_valid_hub_repo_id(spec)) {
    throw hubcache::InvalidArgument("model '" + spec + "' is neither a directory nor a Hub model id",
                                    "give a local model directory or a Hub id such as org/name");
  } else {
    auto text = hubcache::hub::download_hub_file_text(env, token, spec, "config.json");
    model.config = registry::parse_json(text, spec + "/config.json");
    model.model_id = spec;
  }
  if (!registry::has_model_type(model.config)) {
    throw hubcache::InvalidArgument("the config.json of " + spec + " has no model_type",
                                    "a transformers model config is needed to register the model");
  }
  return model;
}

std::vector<std::string> compiler_flags(std::string_view cc_flags)
{
  auto words = hubcache::compilecache::split_cc_flags(cc_flags);
  std::vector<std::string> flags;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--cache_dir" || words[i] == "--log_level") {
      ++i; // and its value
      continue;
    }
    if (!is_wrapper_option(words[i])) {
      flags.push_back(words[i]);
    }
  }
  return flags;
}

std::string without_cache_dir(std::string_view cc_flags)
{
  auto words = hubcache::compilecache::split_cc_flags(cc_flags);
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--cache_dir") {
      ++i;
      continue;
    }
    if (words[i].starts_with("--cache_dir=")) {
      continue;
    }
    out += (out.empty() ? "" : " ") + hubcache::util::quote_argument(words[i]);
  }
  return out;
}

nlohmann::json neuron_config(const Configuration& configuration, const std::string& model_id,
                             const std::string& compiler_version, const std::vector<std::string>& flags)
{
  nlohmann::json neuron = {
    {"task", configuration.task},
    {"mode", "training"},
    {"checkpoint_id", model_id},
    {"batch_size", configuration.train_batch_size},
    {"train_batch_size", configuration.train_batch_size},
    {"eval_batch_size", configuration.effective_eval_batch_size()},
    {"num_cores", configuration.num_cores},
    {"gradient_accumulation_steps", configuration.gradient_accumulation_steps},
    {"max_steps", configuration.max_steps},
    {"compiler_type", "neuronx-cc"},
    {"compiler_version", compiler_version},
    {"compiler_flags", flags},
  };
  // Without a precision, lookup's dtype is the auto-cast type (as for optimum's decoder entries).
  if (!configuration.precision.empty()) {
    neuron["precision"] = configuration.precision;
    neuron["torch_dtype"] = dtype_of(configuration.precision);
  }
  if (configuration.auto_cast_type) {
    neuron["auto_cast_type"] = *configuration.auto_cast_type;
  }
  if (configuration.sequence_length) {
    neuron["sequence_length"] = *configuration.sequence_length;
  } else {
    neuron["encoder_sequence_length"] = configuration.encoder_sequence_length.value_or(0);
    neuron["decoder_sequence_length"] = configuration.decoder_sequence_length.value_or(0);
  }
  return neuron;
}

bool same_configuration(const nlohmann::json& stored, const nlohmann::json& wanted,
                        const std::optional<std::string>& compiler_version)
{
  if (!stored.is_object() || !wanted.is_object()) {
    return false;
  }
  // What changes the compiled graphs; max_steps only changes how long the run lasts.
  static const char* const keys[] = {"task",
                                     "mode",
                                     "train_batch_size",
                                     "eval_batch_size",
                                     "sequence_length",
                                     "encoder_sequence_length",
                                     "decoder_sequence_length",
                                     "num_cores",
                                     "precision",
                                     "auto_cast_type",
                                     "gradient_accumulation_steps",
                                     "compiler_flags"};
  for (const char* key : keys) {
    auto a = stored.find(key);
    auto b = wanted.find(key);
    bool has_a = a != stored.end();
    bool has_b = b != wanted.end();
    if (has_a != has_b || (has_a && *a != *b)) {
      return false;
    }
  }
  if (compiler_version) {
    auto version = stored.find("compiler_version");
    if (version == stored.end() || !version->is_string()
        || !hubcache::compilecache::version_matches(version->get_ref<const std::string&>(), *compiler_version)) {
      return false;
    }
  }
  return true;
}

std::map<std::string, std::string> template_values(const Model& model, const Configuration& configuration,
                                                   const std::filesystem::path& cache_dir)
{
  std::map<std::string, std::string> values = {
    {"model", model.directory ? model.directory->string() : model.spec},
    {"model_id", model.model_id},
    {"task", configuration.task},
    {"batch_size", std::to_string(configuration.train_batch_size)},
    {"train_batch_size", std::to_string(configuration.train_batch_size)},
    {"eval_batch_size", std::to_string(configuration.effective_eval_batch_size())},
    {"num_cores", std::to_string(configuration.num_cores)},
    {"gradient_accumulation_steps", std::to_string(configuration.gradient_accumulation_steps)},
    {"max_steps", std::to_string(configuration.max_steps)},
    {"cache_dir", cache_dir.string()},
  };
  if (!configuration.precision.empty()) {
    values["precision"] = configuration.precision;
  }
  if (configuration.auto_cast_type) {
    values["auto_cast_type"] = *configuration.auto_cast_type;
  }
  if (configuration.sequence_length) {
    values["sequence_length"] = std::to_string(*configuration.sequence_length);
  }
  if (configuration.encoder_sequence_length) {
    values["encoder_sequence_length"] = std::to_string(*configuration.encoder_sequence_length);
  }
  if (configuration.decoder_sequence_length) {
    values["decoder_sequence_length"] = std::to_string(*configuration.decoder_sequence_length);
  }
  return values;
}

std::vector<std::string> known_placeholders()
{
  return {"model",
          "model_id",
          "task",
          "batch_size",
          "train_batch_size",
          "eval_batch_size",
          "sequence_length",
          "encoder_sequence_length",
          "decoder_sequence_length",
          "num_cores",
          "precision",
          "auto_cast_type",
          "gradient_accumulation_steps",
          "max_steps",
          "cache_dir"};
}

namespace {

// Walks a template word: literal text goes to `literal`, each `{identifier}` to
// `placeholder`; `{{` / `}}` are literal braces, braces around anything else are text.
template <typename Literal, typename Placeholder>
void scan_template_word(const std::string& word, Literal&& literal, Placeholder&& placeholder)
{
  for (std::size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    if ((c == '{' || c == '}') && i + 1 < word.size() && word[i + 1] == c) {
      literal(c);
      ++i;
      continue;
    }
    if (c == '{') {
      auto close = word.find('}', i + 1);
      if (close != std::string::npos) {
        auto name = std::string_view(word).substr(i + 1, close - i - 1);
        if (is_identifier(name)) {
          placeholder(std::string(name));
          i = close;
          continue;
        }
      }
    }
    literal(c);
  }
}

} // namespace

std::set<std::string> placeholders_in(const std::vector<std::string>& words)
{
  std::set<std::string> names;
  for (const auto& word : words) {
    scan_template_word(
      word, [](char) {}, [&](const std::string& name) { names.insert(name); });
  }
  return names;
}

const std::vector<std::string>& shape_placeholders()
{
  static const std::vector<std::string> names = {
    "batch_size",      "train_batch_size",        "eval_batch_size",
    "sequence_length", "encoder_sequence_length", "decoder_sequence_length"};
  return names;
}

bool uses_shape_placeholders(const std::vector<std::string>& words)
{
  auto names = placeholders_in(words);
  const auto& shapes = shape_placeholders();
  return std::any_of(shapes.begin(), shapes.end(), [&](const std::string& name) { return names.count(name) != 0; });
}

std::vector<std::string> expand_command(const std::vector<std::string>& words,
                                        const std::map<std::string, std::string>& values)
{
  auto known = known_placeholders();
  std::vector<std::string> expanded;
  for (const auto& word : words) {
    std::string out;
    scan_template_word(
      word, [&](char c) { out += c; },
      [&](const std::string& key) {
        if (std::find(known.begin(), known.end(), key) == known.end()) {
          std::string list;
          for (const auto& placeholder : known) {
            list += (list.empty() ? "{" : ", {") + placeholder + "}";
          }
          throw hubcache::InvalidArgument("unknown placeholder {" + key + "} in the command template",
                                          "use one of " + list + ", or write {{ and }} for literal braces");
        }
        auto value = values.find(key);
        if (value == values.end()) {
          throw hubcache::InvalidArgument("placeholder {" + key + "} has no value for this configuration",
                                          "set " + key + " in the configuration or drop it from the command");
        }
        out += value->second;
      });
    expanded.push_back(std::move(out));
  }
  return expanded;
}

std::string Job::label() const
{
  return model.model_id + " " + configuration.task + " " + configuration.summary();
}

std::string to_string(JobStatus status)
{
  switch (status) {
  case JobStatus::added: return "added";
  case JobStatus::already_registered: return "already-registered";
  case JobStatus::planned: return "would-run";
  case JobStatus::failed: return "failed";
  case JobStatus::interrupted: return "interrupted";
  case JobStatus::not_run: return "not-run";
  }
  return "unknown";
}

nlohmann::json JobResult::to_json() const
{
  nlohmann::json data = {{"status", to_string(status)},
                         {"label", label},
                         {"model_id", model_id},
                         {"command", command},
                         {"entries", entries},
                         {"registry_files", registry_files},
                         {"seconds", static_cast<double>(elapsed.count()) / 1000.0}};
  data["compiler_version"] = compiler_version.empty() ? nlohmann::json(nullptr) : nlohmann::json(compiler_version);
  data["revision"] = revision ? nlohmann::json(*revision) : nlohmann::json(nullptr);
  data["message"] = message;
  if (!hint.empty()) {
    data["hint"] = hint;
  }
  if (!output_tail.empty()) {
    data["output_tail"] = output_tail;
  }
  return data;
}

} // namespace addjobs
