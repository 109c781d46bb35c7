// The output sink: data on stdout, diagnostics on stderr, one voice, json documents that
// carry their schema version.
#include "output.hpp"

#include <doctest/doctest.h>

#include <sstream>

using namespace neuron_cache;

namespace {

struct Captured {
  std::ostringstream out;
  std::ostringstream err;
  Output sink(Format format, bool verbose = false) { return Output(format, verbose, out, err); }
};

} // namespace

TEST_CASE("output: each mode shows its part of a result; diagnostics never reach stdout")
{
  nlohmann::json data = {{"repo", "a/b"}};
  {
    Captured c;
    auto out = c.sink(Format::human);
    out.result("Done.", data, "a/b");
    out.info("working");
    out.detail("hidden without --verbose");
    out.warning("careful");
    CHECK(c.out.str() == "Done.\n");
    CHECK(c.err.str() == "working\nneuron-cache: warning: careful\n");
  }
  {
    Captured c;
    auto out = c.sink(Format::quiet, true);
    out.result("Done.", data, "a/b");
    out.info("working");
    out.detail("shown with --verbose");
    CHECK(c.out.str() == "a/b\n");
    CHECK(c.err.str() == "shown with --verbose\n");
  }
  {
    Captured c;
    c.sink(Format::json).result("Done.", data, "a/b");
    auto parsed = nlohmann::json::parse(c.out.str());
    CHECK(parsed["schema_version"] == k_json_schema_version);
    CHECK(parsed["repo"] == "a/b");
  }
}

TEST_CASE("output: an error is one line on stderr, and under json also an object on stdout")
{
  {
    Captured c;
    c.sink(Format::human).error("it broke", "fix it", 1);
    CHECK(c.err.str() == "neuron-cache: error: it broke; fix it\n");
    CHECK(c.out.str().empty());
  }
  {
    Captured c;
    c.sink(Format::json).error("it broke", "", 2);
    CHECK(c.err.str() == "neuron-cache: error: it broke\n");
    auto parsed = nlohmann::json::parse(c.out.str());
    CHECK(parsed["error"] == "it broke");
    CHECK(parsed["hint"].is_null());
    CHECK(parsed["exit_code"] == 2);
    CHECK(parsed["schema_version"] == k_json_schema_version);
  }
}

TEST_CASE("output: tables pad columns, align numbers right and trim trailing blanks")
{
  Output::Table table;
  table.headers = {"MODEL", "SIZE"};
  table.right_aligned = {false, true};
  table.rows = {{"org/a", "1.2 GB"}, {"org/long-name", "3 B"}};
  table.footer = "2 models";
  CHECK(format_table(table)
        == "MODEL            SIZE\n"
           "org/a          1.2 GB\n"
           "org/long-name     3 B\n"
           "\n2 models\n");
  Captured c;
  c.sink(Format::quiet).table(table, nlohmann::json::array(), 0);
  CHECK(c.out.str() == "org/a\norg/long-name\n");
}

TEST_CASE("output: human sizes, durations and counts")
{
  CHECK(human_size(999) == "999 B");
  CHECK(human_size(1500) == "1.5 KB");
  CHECK(human_size(2'000'000'000) == "2.0 GB");
  CHECK(human_duration(3725) == "1h 02m"); // the libraries' formatter (test_util_text.cpp)
  CHECK(count_of(1, "entry", "entries") == "1 entry");
  CHECK(count_of(2, "entry", "entries") == "2 entries");
  CHECK(count_of(0, "file") == "0 files");
}
