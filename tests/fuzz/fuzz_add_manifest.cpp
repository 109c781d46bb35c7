// The YAML manifest of `add --manifest` (CI jobs read it from a repo checkout), then what
// the runner does with each configuration before compiling: validation, labels, the
// command template expansion and the neuron config it registers. Properties: only
// InvalidArgument for bad manifests; a parsed manifest has models with configurations.
#include "fuzz_support.hpp"

#include <addjobs/add_job.hpp>
#include <addjobs/add_manifest.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  addjobs::Manifest manifest;
  if (!fuzz::accepts(
        [&] { manifest = addjobs::parse_manifest_text(fuzz::text_of(data, size), "jobs/manifest.yaml"); })) {
    return 0;
  }
  FUZZ_CHECK(!manifest.models.empty(), "a manifest without models was accepted");
  for (const auto& [name, value] : manifest.environment) {
    FUZZ_CHECK(!name.empty() && name.find('=') == std::string::npos, "bad environment variable name: " + name);
  }
  if (manifest.timeout) {
    FUZZ_CHECK(manifest.timeout->count() >= 1, "a timeout below one second was accepted");
  }
  for (const auto& model : manifest.models) {
    FUZZ_CHECK(!model.configurations.empty(), "a model without configurations was accepted: " + model.model);
    auto command = model.command ? *model.command : manifest.command;
    for (const auto& configuration : model.configurations) {
      if (!fuzz::accepts([&] { configuration.validate(); })) {
        continue;
      }
      addjobs::Job job;
      job.model.spec = model.model;
      job.model.model_id = "org/model";
      job.model.config = {{"model_type", "llama"}};
      job.configuration = configuration;
      (void)job.label();
      auto values = addjobs::template_values(job.model, configuration, "/var/tmp/neuron-compile-cache");
      if (command) {
        fuzz::accepts([&] { (void)addjobs::expand_command(*command, values); });
      }
      auto neuron =
        addjobs::neuron_config(configuration, job.model.model_id, "2.21.33363.0+82129205", {"--auto-cast=none"});
      FUZZ_CHECK(addjobs::same_configuration(neuron, neuron, std::string("2.21.33363.0+82129205")),
                 "a configuration is not the same as itself");
    }
  }
  return 0;
}
