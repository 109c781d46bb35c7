#include "registry/optimum_view.hpp"

#include "registry/config_diff.hpp"
#include "registry/json_text.hpp"

#include <hubcache/error.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

namespace registry {

std::string optimum_task_synonym(const std::string& task)
{
  // TasksManager._SYNONYM_TASK_MAP (optimum 2.0).
  static const std::map<std::string, std::string, std::less<>> synonyms = {
    {"audio-ctc", "automatic-speech-recognition"},
    {"causal-lm", "text-generation"},
    {"causal-lm-with-past", "text-generation-with-past"},
    {"default", "feature-extraction"},
    {"default-with-past", "feature-extraction-with-past"},
    {"masked-lm", "fill-mask"},
    {"mask-generation", "feature-extraction"},
    {"sentence-similarity", "feature-extraction"},
    {"seq2seq-lm", "text2text-generation"},
    {"seq2seq-lm-with-past", "text2text-generation-with-past"},
    {"sequence-classification", "text-classification"},
    {"speech2seq-lm", "automatic-speech-recognition"},
    {"speech2seq-lm-with-past", "automatic-speech-recognition-with-past"},
    {"summarization", "text2text-generation"},
    {"text-to-speech", "text-to-audio"},
    {"translation", "text2text-generation"},
    {"vision2seq-lm", "image-to-text"},
    {"zero-shot-classification", "text-classification"},
    {"image-feature-extraction", "feature-extraction"},
    {"pretraining", "feature-extraction"},
    {"stable-diffusion", "text-to-image"},
    {"stable-diffusion-xl", "text-to-image"},
    {"latent-consistency", "text-to-image"},
  };
  auto it = synonyms.find(task);
  return it == synonyms.end() ? task : it->second;
}

namespace {

std::optional<std::string> string_at(const nlohmann::json& object, const char* key)
{
  if (object.is_object()) {
    if (auto it = object.find(key); it != object.end() && it->is_string()) {
      return it->get<std::string>();
    }
  }
  return std::nullopt;
}

// TasksManager._TRANSFORMERS_TASKS_TO_MODEL_LOADERS, first task in its (sorted) order.
std::optional<std::string> task_of_auto_model(const std::string& auto_model)
{
  static const std::vector<std::pair<std::string, std::vector<std::string>>> loaders = {
    {"audio-classification", {"AutoModelForAudioClassification"}},
    {"audio-frame-classification", {"AutoModelForAudioFrameClassification"}},
    {"audio-xvector", {"AutoModelForAudioXVector"}},
    {"automatic-speech-recognition", {"AutoModelForSpeechSeq2Seq", "AutoModelForCTC"}},
    {"depth-estimation", {"AutoModelForDepthEstimation"}},
    {"feature-extraction", {"AutoModel"}},
    {"fill-mask", {"AutoModelForMaskedLM"}},
    {"image-classification", {"AutoModelForImageClassification"}},
    {"image-segmentation",
     {"AutoModelForImageSegmentation", "AutoModelForSemanticSegmentation", "AutoModelForInstanceSegmentation",
      "AutoModelForUniversalSegmentation"}},
    {"image-to-image", {"AutoModelForImageToImage"}},
    {"image-to-text", {"AutoModelForVision2Seq", "AutoModel"}},
    {"mask-generation", {"AutoModel"}},
    {"masked-im", {"AutoModelForMaskedImageModeling"}},
    {"multiple-choice", {"AutoModelForMultipleChoice"}},
    {"object-detection", {"AutoModelForObjectDetection"}},
    {"question-answering", {"AutoModelForQuestionAnswering"}},
    {"reinforcement-learning", {"AutoModel"}},
    {"semantic-segmentation", {"AutoModelForSemanticSegmentation"}},
    {"text-to-audio", {"AutoModelForTextToSpectrogram", "AutoModelForTextToWaveform"}},
    {"text-generation", {"AutoModelForCausalLM"}},
    {"text2text-generation", {"AutoModelForSeq2SeqLM"}},
    {"text-classification", {"AutoModelForSequenceClassification"}},
    {"token-classification", {"AutoModelForTokenClassification"}},
    {"visual-question-answering", {"AutoModelForVisualQuestionAnswering"}},
    {"zero-shot-image-classification", {"AutoModelForZeroShotImageClassification"}},
    {"zero-shot-object-detection", {"AutoModelForZeroShotObjectDetection"}},
  };
  // optimum's .replace("TF", ""): TensorFlow classes count as their PyTorch twins.
  constexpr std::string_view tensorflow_prefix = "TF";
  std::string name = auto_model;
  if (auto at = name.find(tensorflow_prefix); at != std::string::npos) {
    name.erase(at, tensorflow_prefix.size());
  }
  for (const auto& [task, classes] : loaders) {
    if (std::find(classes.begin(), classes.end(), name) != classes.end()) {
      return task;
    }
  }
  return std::nullopt;
}

std::string library_of(const std::vector<std::string>& files, const nlohmann::json& config)
{
  auto has = [&](std::string_view name) { return std::find(files.begin(), files.end(), name) != files.end(); };
  if (has("model_index.json")) {
    return "diffusers";
  }
  bool sentence = has("config_sentence_transformers.json")
                  || std::any_of(files.begin(), files.end(), [](const auto& f) { return f.starts_with("sentence_"); });
  if (sentence) {
    return "sentence_transformers";
  }
  if (has("config.json")) {
    if (config.is_object() && (config.contains("pretrained_cfg") || config.contains("architecture"))) {
      return "timm";
    }
    return config.is_object() && config.contains("_diffusers_version") ? "diffusers" : "transformers";
  }
  return "";
}

} // namespace

std::optional<std::string> infer_optimum_task(const nlohmann::json& model_info, const std::vector<std::string>& files,
                                              const nlohmann::json& config)
{
  auto library = library_of(files, config);
  auto pipeline_tag = string_at(model_info, "pipeline_tag");
  if (library == "timm") {
    return "image-classification";
  }
  if (library == "sentence_transformers") {
    return "feature-extraction";
  }
  if (library == "diffusers") {
    // Without a pipeline tag optimum maps the pipeline class through diffusers' own
    // tables; a pipeline entry has no task, so any answer serves.
    if (pipeline_tag) {
      return optimum_task_synonym(*pipeline_tag);
    }
    auto class_name = model_info.is_object() && model_info.contains("config")
                        ? string_at(model_info["config"].value("diffusers", nlohmann::json()), "_class_name")
                        : std::nullopt;
    return class_name ? std::optional<std::string>("text-to-image") : std::nullopt;
  }
  if (library != "transformers") {
    return std::nullopt;
  }
  if (pipeline_tag) {
    return optimum_task_synonym(*pipeline_tag);
  }
  auto info = model_info.is_object() ? model_info.value("transformersInfo", nlohmann::json()) : nlohmann::json();
  if (auto tag = string_at(info, "pipeline_tag")) {
    return optimum_task_synonym(*tag);
  }
  if (auto auto_model = string_at(info, "auto_model")) {
    return task_of_auto_model(*auto_model);
  }
  return std::nullopt;
}

std::string optimum_arch_digest(const ModelConfigs& configs, const std::string& task)
{
  if (configs.multi_model) {
    return multi_model_arch_digest(multi_model_type(configs.components), configs.components);
  }
  // SingleModelCacheEntry.from_hub: get_text_config() for text-generation (the config
  // itself when it has no text sub-config), then to_diff_dict() minus the whitelist.
  std::optional<DiffDict> diff;
  if (task == "text-generation") {
    diff = text_config_diff_dict(configs.config);
  }
  if (!diff) {
    diff = diff_dict(configs.config);
  }
  auto cleaned = clean_config(diff->config);
  if (!cleaned.is_object() || !cleaned.contains("model_type") || !cleaned["model_type"].is_string()) {
    throw hubcache::InvalidArgument(configs.origin + " has no model_type");
  }
  return single_model_arch_digest(cleaned["model_type"].get<std::string>(), task, cleaned, true);
}

namespace {

// Python's `value == number` for a JSON value and an int (4.0 == 4, True == 1).
bool python_equals(const nlohmann::json& value, long long number)
{
  if (value.is_number_integer()) {
    return value.get<long long>() == number;
  }
  if (value.is_number_float()) {
    return value.get<double>() == static_cast<double>(number);
  }
  if (value.is_boolean()) {
    return (value.get<bool>() ? 1 : 0) == number;
  }
  return false;
}

const nlohmann::json& field(const nlohmann::json& neuron, const char* key)
{
  static const nlohmann::json none;
  auto it = neuron.find(key);
  return it == neuron.end() ? none : *it;
}

// DTYPE_MAPPER.pt: names of one torch dtype map to it; anything else raises.
std::string torch_dtype(const nlohmann::json& value, const std::string& where)
{
  static const std::map<std::string, std::string, std::less<>> mapping = {
    {"fp32", "float32"},    {"fp16", "float16"},    {"bf16", "bfloat16"},  {"int64", "int64"},
    {"int32", "int32"},     {"int8", "int8"},       {"bool", "bool"},      {"bfloat16", "bfloat16"},
    {"float16", "float16"}, {"float32", "float32"}, {"float64", "float64"}};
  if (value.is_string()) {
    if (auto it = mapping.find(value.get_ref<const std::string&>()); it != mapping.end()) {
      return it->second;
    }
  }
  throw hubcache::InvalidArgument(where + ": dtype " + python_str(value)
                                  + " is not in optimum's dtype mapping, where optimum-cli fails");
}

bool passes(const nlohmann::json& neuron, const OptimumFilters& filters, const std::string& where)
{
  if (filters.instance_type) {
    const auto& target = field(neuron, "target");
    if (!target.is_string() || target.get_ref<const std::string&>() != *filters.instance_type) {
      return false;
    }
  }
  auto number_ok = [&](const std::optional<long long>& wanted, const char* key) {
    return !wanted || python_equals(field(neuron, key), *wanted);
  };
  if (!number_ok(filters.batch_size, "batch_size") || !number_ok(filters.sequence_length, "sequence_length")
      || !number_ok(filters.tensor_parallel_size, "tp_degree")) {
    return false;
  }
  if (filters.dtype) {
    // entry.get("torch_dtype", entry.get("dtype")): a present null torch_dtype wins.
    const auto& stored = neuron.contains("torch_dtype") ? neuron["torch_dtype"] : field(neuron, "dtype");
    return torch_dtype(nlohmann::json(*filters.dtype), "--dtype") == torch_dtype(stored, where);
  }
  return true;
}

} // namespace

OptimumAnswer optimum_main_lookup(hubcache::storage::Repository& repo, const RepositoryOpener& open,
                                  const std::string& repo_name, const std::string& arch_digest, const OptimumPins& pins,
                                  const OptimumFilters& filters, unsigned parallelism)
{
  OptimumAnswer answer;
  answer.arch_digest = arch_digest;
  auto names = repo.list_folders("");
  std::sort(names.begin(), names.end());
  const auto prefix = std::string(k_compiler_dir_prefix) + pins.compiler_version;
  for (const auto& name : names) {
    if (name.starts_with(prefix)) {
      answer.compiler_dir = name;
      break;
    }
  }
  if (answer.compiler_dir.empty()) {
    throw hubcache::EntryNotFound("No hub cache registry found in " + repo_name + " for neuronx-cc-"
                                    + pins.compiler_version,
                                  "optimum-neuron main reads only " + prefix + "*/0_REGISTRY/" + pins.registry_version);
  }
  answer.registry_root = answer.compiler_dir + "/" + std::string(k_registry_dir) + "/" + pins.registry_version;
  const auto folder = answer.registry_root + "/" + arch_digest + "/";
  std::vector<hubcache::storage::RepoFile> files;
  try {
    files = repo.list_files(folder.substr(0, folder.size() - 1));
  } catch (const hubcache::EntryNotFound&) {
  }
  std::vector<RegistryPath> paths;
  for (const auto& file : files) {
    // list_repo_tree is not recursive: only the folder's own files.
    if (!file.path.starts_with(folder) || file.path.find('/', folder.size()) != std::string::npos) {
      continue;
    }
    RegistryPath path;
    if (auto parsed = parse_registry_path(file.path)) {
      path = *parsed;
    }
    path.path = file.path;
    paths.push_back(std::move(path));
  }
  auto report = load_entries(open, paths, parallelism);
  if (report.entries.size() < paths.size()) { // optimum's deserialize raises on these
    std::string why;
    for (const auto& warning : report.warnings) {
      why += (why.empty() ? "" : "; ") + warning;
    }
    throw hubcache::InvalidArgument("optimum-cli fails on a file of " + folder + ": " + why);
  }
  for (auto& loaded : report.entries) {
    auto neuron = loaded.entry.neuron_config();
    if (!filters.instance_type && !filters.dtype && !filters.batch_size && !filters.sequence_length
        && !filters.tensor_parallel_size) {
      answer.entries.push_back(std::move(loaded));
      continue;
    }
    if (!neuron.is_object()) {
      throw hubcache::InvalidArgument(loaded.location.path + " has no neuron config, where optimum-cli fails");
    }
    if (passes(neuron, filters, loaded.location.path)) {
      answer.entries.push_back(std::move(loaded));
    }
  }
  return answer;
}

namespace {

long long python_int(const std::string& text, const std::string& where)
{
  // int(str): optional sign, digits, surrounding whitespace.
  auto begin = text.find_first_not_of(" \t\n");
  auto end = text.find_last_not_of(" \t\n");
  if (begin != std::string::npos) {
    auto digits = text.substr(begin, end - begin + 1);
    if (!digits.empty() && digits.front() == '+') {
      digits.erase(0, 1);
    }
    long long value = 0;
    auto [stop, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error == std::errc() && stop == digits.data() + digits.size() && !digits.empty()) {
      return value;
    }
  }
  throw hubcache::InvalidArgument(where + ": '" + text + "' is not an integer, where optimum-cli's table fails");
}

} // namespace

std::string optimum_main_output(const std::string& model_id, const std::vector<LoadedEntry>& entries)
{
  if (entries.empty()) {
    return "No cached entries found for " + model_id + ".\n";
  }
  using Row = std::vector<std::string>; // batch, sequence, tp, dtype, instance
  std::set<Row> unique;
  for (const auto& loaded : entries) {
    auto neuron = loaded.entry.neuron_config();
    const auto& where = loaded.location.path;
    if (!neuron.is_object()) {
      throw hubcache::InvalidArgument(where + " has no neuron config, where optimum-cli's table fails");
    }
    for (const char* key : {"batch_size", "sequence_length", "target"}) {
      if (!neuron.contains(key)) {
        throw hubcache::InvalidArgument(where + " has no " + std::string(key)
                                        + " (a traced model's entry?), where optimum-cli's table fails");
      }
    }
    const auto& tp = neuron.contains("tp_degree") ? neuron["tp_degree"] : field(neuron, "tensor_parallel_size");
    const auto& dtype = neuron.contains("torch_dtype") ? neuron["torch_dtype"] : field(neuron, "dtype");
    unique.insert({python_str(neuron["batch_size"]), python_str(neuron["sequence_length"]), python_str(tp),
                   python_str(dtype), python_str(neuron["target"])});
  }
  std::vector<std::pair<std::tuple<long long, long long, long long, std::string>, Row>> rows;
  for (const auto& row : unique) {
    rows.push_back({{python_int(row[2], "tensor parallel"), python_int(row[0], "batch size"),
                     python_int(row[1], "sequence length"), row[3]},
                    row});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text = "Cached entries for " + model_id + "\n";
  for (const char* header : {"batch size", "sequence length", "tensor parallel", "dtype", "instance type"}) {
    text += centred(header, 16);
  }
  text += "\n";
  for (const auto& [key, row] : rows) {
    for (const auto& cell : row) {
      text += centred(cell, 16);
    }
    text += "\n";
  }
  return text;
}

} // namespace registry
