// Which graphs the registry names, on a real directory repo: what list counts and what
// cleanup --repo --unregistered may remove.
#include "registry_test_repo.hpp"

#include <doctest/doctest.h>

#include <registry/graphs.hpp>
#include <registry/lookup.hpp>

namespace registry_graphs_test {

namespace {

using registry_test::Seeded;

const std::string k_dir = "neuronxcc-2.21.33363.0+82129205";
const std::string k_entry = k_dir + "/0_REGISTRY/0.4.5/llama/org/m/0123456789abcdef0001.json";
const std::string k_record = k_dir + "/0_REGISTRY/neuron-cache-modules/0123456789abcdef0001.json";

registry::GraphMap graphs_of(Seeded& seeded)
{
  auto index = registry::index_registry(seeded.repo->list_files());
  return registry::map_graphs(index, *seeded.repo, 2);
}

} // namespace

TEST_CASE("graphs: a record and a traced folder register graphs; the rest are unregistered")
{
  Seeded seeded;
  seeded.add({{k_dir + "/MODULE_a/model.neff", "a"},
              {k_dir + "/MODULE_b/model.neff", "b"},
              {k_dir + "/MODULE_0123456789abcdef0002/model.neff", "traced"},
              {k_dir + "/0_REGISTRY/0.4.5/bert/bert-base/0123456789abcdef0002.json", "{}"},
              {k_entry, "{}"},
              {k_record, R"({"modules": [")" + k_dir + R"(/MODULE_a", "../escape/MODULE_x"]})"}});
  auto graphs = graphs_of(seeded);
  CHECK(graphs.unregistered == std::vector<std::string>{k_dir + "/MODULE_b"});
  CHECK(graphs.unattributed_dirs.empty());
  REQUIRE(graphs.entries.size() == 2);
}

TEST_CASE("graphs: entries naming no graphs, or a record naming none the repo holds, make their version unknown")
{
  Seeded seeded;
  seeded.add({{k_dir + "/MODULE_a/model.neff", "a"}, {k_entry, "{}"}});
  auto graphs = graphs_of(seeded);
  CHECK(graphs.unregistered == std::vector<std::string>{k_dir + "/MODULE_a"});
  CHECK(graphs.unattributed_dirs == std::set<std::string>{k_dir});

  Seeded with_record;
  with_record.add({{k_dir + "/MODULE_a/model.neff", "a"},
                   {k_entry, "{}"},
                   {k_record, R"({"modules": [")" + k_dir + R"(/MODULE_gone"]})"}});
  CHECK(graphs_of(with_record).unattributed_dirs == std::set<std::string>{k_dir});

  Seeded malformed;
  malformed.add({{k_dir + "/MODULE_a/model.neff", "a"}, {k_entry, "{}"}, {k_record, "not json"}});
  CHECK(graphs_of(malformed).unattributed_dirs == std::set<std::string>{k_dir});
}

} // namespace registry_graphs_test
