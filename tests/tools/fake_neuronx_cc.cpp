// fake_neuronx_cc: a stand-in for a compile run (neuronx-cc driven by torch-neuronx), for
// tests and the demo on machines without a Neuron compiler. It fills a compile cache the
// way libneuronxla does (generation C entries), deterministically from its arguments:
//
//   <root>/neuronxcc-<version>/MODULE_<graph key>+<md5(compile_flags.json)[:8]>/
//       model.hlo_module.pb.lock   while "compiling", removed at the end
//       model.hlo_module.pb, compile_flags.json   inputs
//       model.neff, model.done     success (done written last)
//       model.log                  failure ("Failed compilation ...") and no neff
//
// The root is --cache_dir in NEURON_CC_FLAGS, else NEURON_COMPILE_CACHE_URL, else
// /var/tmp/neuron-compile-cache, as the Neuron SDK resolves it. compile_flags.json holds
// the rest of NEURON_CC_FLAGS as a Python json.dumps list (empty file for no flags).
//
// Usage: fake_neuronx_cc [--model M] [--task T] [--batch-size N] [--sequence-length N]
//          [--num-cores N] [--precision P] [--graphs N] [--compiler-version V]
//          [--mode ok|fail|nothing|hang] [--compile-ms N] [--spawn-worker]
// `--version` prints the version line neuronx-cc prints (FAKE_NEURONX_CC_VERSION, else the
// default --compiler-version). FAKE_NEURONX_CC_MODE overrides --mode; FAKE_NEURONX_CC_PID_FILE gets one pid per line
// for every process it starts (tests check none survives a signal).
#include <hubcache/util/hash.hpp>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace {

namespace stdfs = std::filesystem;

[[noreturn]] void usage_error(const std::string& message)
{
  std::cerr << "fake_neuronx_cc: " << message << "\n";
  std::exit(2);
}

std::string env_or(const char* name, const std::string& fallback)
{
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

std::vector<std::string> split_words(const std::string& text)
{
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) {
    words.push_back(word);
  }
  return words;
}

// Python json.dumps(list_of_str): ", " separators, ASCII escapes.
std::string python_json_list(const std::vector<std::string>& items)
{
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += i == 0 ? "\"" : ", \"";
    for (char c : items[i]) {
      if (c == '"' || c == '\\') {
        out += '\\';
      }
      out += c;
    }
    out += '"';
  }
  return out + "]";
}

void write_file(const stdfs::path& path, const std::string& content)
{
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out.flush()) {
    std::cerr << "fake_neuronx_cc: cannot write " << path << "\n";
    std::exit(1);
  }
}

void record_pid()
{
  auto pid_file = env_or("FAKE_NEURONX_CC_PID_FILE", "");
  if (!pid_file.empty()) {
    std::ofstream(pid_file, std::ios::app) << ::getpid() << "\n";
  }
}

[[noreturn]] void hang_forever()
{
  for (;;) {
    ::pause();
  }
}

} // namespace

int main(int argc, char** argv)
{
  std::map<std::string, std::string> options = {
    {"model", "model"}, {"task", "text-generation"}, {"batch-size", "1"}, {"sequence-length", "128"},
    {"num-cores", "1"}, {"precision", "bf16"},       {"graphs", "2"},     {"compiler-version", "2.21.33363.0+82129205"},
    {"mode", "ok"},     {"compile-ms", "0"}};
  if (argc == 2 && std::string(argv[1]) == "--version") {
    // As the real compiler prints it; cleanup --old-versions reads the first line.
    std::cout << "NeuronX Compiler version " << env_or("FAKE_NEURONX_CC_VERSION", options["compiler-version"])
              << "\n\nPython version 3.10.12\n";
    return 0;
  }
  bool spawn_worker = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--spawn-worker") {
      spawn_worker = true;
      continue;
    }
    if (!arg.starts_with("--")) {
      usage_error("unexpected argument '" + arg + "'");
    }
    std::string name = arg.substr(2);
    std::string value;
    if (auto equals = name.find('='); equals != std::string::npos) {
      value = name.substr(equals + 1);
      name.resize(equals);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      usage_error("--" + name + " needs a value");
    }
    for (auto& c : name) {
      c = c == '_' ? '-' : c;
    }
    if (options.count(name) == 0) {
      usage_error("unknown option --" + name);
    }
    options[name] = value;
  }
  std::string mode = env_or("FAKE_NEURONX_CC_MODE", options["mode"]);
  record_pid();

  // Cache root and compiler flags, as the neuron_cc_wrapper sees them.
  std::vector<std::string> flags;
  std::string root = env_or("NEURON_COMPILE_CACHE_URL", "/var/tmp/neuron-compile-cache");
  auto words = split_words(env_or("NEURON_CC_FLAGS", ""));
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto& word = words[i];
    if (word.starts_with("--cache_dir=")) {
      root = word.substr(std::strlen("--cache_dir="));
    } else if (word == "--cache_dir" && i + 1 < words.size()) {
      root = words[++i];
    } else if (word == "--retry_failed_compilation" || word.starts_with("--log_level")) {
      continue;
    } else {
      flags.push_back(word);
    }
  }
  if (root.starts_with("file://")) {
    root = root.substr(std::strlen("file://"));
  }
  if (root.starts_with("s3://")) {
    usage_error("this stand-in does not write S3 caches");
  }
  std::string flags_file = flags.empty() ? std::string() : python_json_list(flags);
  std::string flags_suffix = hubcache::util::hex_digest(hubcache::util::HashAlgorithm::md5, flags_file).substr(0, 8);
  stdfs::path version_dir = stdfs::path(root) / ("neuronxcc-" + options["compiler-version"]);

  std::cout << "fake_neuronx_cc: compiling " << options["model"] << " (" << options["task"] << ", batch "
            << options["batch-size"] << ", sequence " << options["sequence-length"] << ", " << options["num-cores"]
            << " cores, " << options["precision"] << ") into " << root << std::endl;
  if (mode == "nothing") {
    std::cout << "fake_neuronx_cc: told to produce nothing" << std::endl;
    return 0;
  }
  if (mode != "ok" && mode != "fail" && mode != "hang") {
    usage_error("--mode must be ok, fail, nothing or hang");
  }

  int graphs = std::stoi(options["graphs"]);
  int compile_ms = std::stoi(options["compile-ms"]);
  for (int graph = 0; graph < graphs; ++graph) {
    std::string identity = options["model"] + "|" + options["task"] + "|" + options["batch-size"] + "|"
                           + options["sequence-length"] + "|" + options["num-cores"] + "|" + options["precision"] + "|"
                           + std::to_string(graph);
    auto digest = hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha256, identity);
    // torch-xla style graph key: a decimal uint64.
    auto key = std::to_string(std::stoull(digest.substr(0, 16), nullptr, 16));
    auto entry = version_dir / ("MODULE_" + key + "+" + flags_suffix);
    auto neff = entry / "model.neff";
    if (stdfs::exists(neff) && stdfs::exists(entry / "model.done")) {
      std::cout << "Using a cached neff at " << neff.string() << ". Exiting with a successfully compiled graph."
                << std::endl;
      continue;
    }
    if (stdfs::exists(entry / "model.log")) {
      std::cerr << "Got a cached failed neff at " << neff.string()
                << ". Will skip compilation, please set --retry_failed_compilation for recompilation." << std::endl;
      return 70;
    }
    std::error_code ec;
    stdfs::create_directories(entry, ec);
    auto lock = entry / "model.hlo_module.pb.lock";
    int lock_fd = ::open(lock.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    for (int waited = 0; lock_fd < 0 && errno == EEXIST; ++waited) {
      if (waited % 10 == 0) {
        std::cout << "[INFO]: Another process must be compiling " << entry.filename().string()
                  << ", been waiting for: " << waited / 10 << " seconds" << std::endl;
      }
      if (waited >= 200) {
        std::cerr << "fake_neuronx_cc: gave up waiting for the lock " << lock.string() << std::endl;
        return 75;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      lock_fd = ::open(lock.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    }
    if (lock_fd < 0) {
      std::cerr << "fake_neuronx_cc: cannot create " << lock.string() << ": " << std::strerror(errno) << std::endl;
      return 1;
    }
    ::close(lock_fd);
    write_file(entry / "model.hlo_module.pb", "HloModule fake_" + key + "\n" + identity + "\n" + digest + "\n");
    write_file(entry / "compile_flags.json", flags_file);
    std::cout << "Compiling " << entry.filename().string() << std::endl;
    if (mode == "hang") {
      if (spawn_worker) {
        if (::fork() == 0) {
          record_pid();
          hang_forever();
        }
      }
      std::cout << "fake_neuronx_cc: told to hang" << std::endl;
      hang_forever();
    }
    if (compile_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(compile_ms));
    }
    if (mode == "fail") {
      write_file(entry / "model.log",
                 "Failed compilation with ['neuronx-cc', 'compile', '--framework=XLA', 'model.hlo_module.pb']: "
                 "fake_neuronx_cc was told to fail\n");
      stdfs::remove(lock, ec);
      std::cerr << "ERROR: Compilation failed for " << entry.string() << " (fake_neuronx_cc was told to fail)"
                << std::endl;
      return 70;
    }
    std::string neff_bytes = "NEFF";
    for (int block = 0; block < 64; ++block) {
      neff_bytes += hubcache::util::hex_digest(hubcache::util::HashAlgorithm::sha256, digest + std::to_string(block));
    }
    write_file(neff, neff_bytes);
    write_file(entry / "model.done", "");
    stdfs::remove(lock, ec);
    std::cout << "Compiler status PASS" << std::endl;
  }
  return 0;
}
