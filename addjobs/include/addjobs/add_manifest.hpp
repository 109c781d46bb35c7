#pragma once

#include "addjobs/add_job.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The YAML manifest of `neuron-cache add --manifest` (CI cache-population jobs):
//
//   repo: /fsx/neuron-cache-repo            # optional; else --repo-id / the resolved repo
//   cache_dir: /var/tmp/neuron-compile-cache # optional; else --cache-dir / as synchronize resolves it
//   command: "torchrun --nproc_per_node {num_cores} train.py --model {model} ..."  # or a list of words
//   env: {NEURON_CC_FLAGS: "--model-type=transformer"}                            # optional
//   timeout: 3600                            # optional, seconds per configuration
//   compiler_version: 2.21.33363.0           # optional: only entries of it count as registered
//   models:
//     - model: org/name                      # Hub id, or a directory (relative to the manifest)
//       task: text-generation                # any configuration key here is a default
//       command: ...                         # optional override
//       configurations:
//         - {batch_size: 1, sequence_length: 128, num_cores: 2, precision: bf16}
//
// Configuration keys: task, precision (fp|bf16), num_cores, train_batch_size (alias
// batch_size), eval_batch_size, sequence_length | encoder_sequence_length +
// decoder_sequence_length, gradient_accumulation_steps, max_steps.
namespace addjobs {

struct ManifestModel {
  std::string model; // as written (resolved against the manifest dir when it is a path)
  std::optional<std::vector<std::string>> command;
  std::vector<Configuration> configurations;
};

struct Manifest {
  std::filesystem::path file;
  std::optional<std::string> repo;
  std::optional<std::string> cache_dir;
  std::optional<std::vector<std::string>> command;
  std::map<std::string, std::string> environment;
  std::optional<std::chrono::seconds> timeout;
  std::optional<std::string> compiler_version;
  std::vector<ManifestModel> models;
};

// Throws InvalidArgument naming `<file>:<line>:<column>` for anything that is not YAML,
// misses a required key, has an unknown key or a value of the wrong type.
Manifest parse_manifest_text(std::string_view text, const std::filesystem::path& file);
Manifest parse_manifest(const std::filesystem::path& file);

// A command given as one string (split like a shell would, no expansion) or as words.
std::vector<std::string> command_words(const std::string& text);

} // namespace addjobs
