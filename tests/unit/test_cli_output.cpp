// The output sink: data on stdout, diagnostics on stderr, one voice, json documents that
// carry their schema version.
#include "output.hpp"
#include "progress_bar.hpp"
#include "transfer_report.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <mutex>
#include <sstream>
#include <thread>

using namespace neuron_cache;

namespace cli_output_test {

namespace {

struct Captured {
  std::ostringstream out;
  std::ostringstream err;
  Output sink(Format format, bool verbose = false) { return Output(format, verbose, out, err); }
};

// A stream the progress ticker writes from its thread while the test reads it.
class SharedBuffer : public std::stringbuf {
public:
  std::string text()
  {
    std::lock_guard lock(m_mutex);
    return str();
  }

protected:
  int_type overflow(int_type c) override
  {
    std::lock_guard lock(m_mutex);
    return std::stringbuf::overflow(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override
  {
    std::lock_guard lock(m_mutex);
    return std::stringbuf::xsputn(s, n);
  }

private:
  std::recursive_mutex m_mutex; // stringbuf's xsputn may call overflow
};

std::size_t count_lines(const std::string& text)
{
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

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

TEST_CASE("output: warnings and errors are coloured only where the terminal takes colours")
{
  Terminal colour;
  colour.stderr_tty = true;
  colour.dumb = false;
  colour.colour = true;
  std::ostringstream out, err;
  Output(Format::human, false, out, err, colour).warning("careful");
  Output(Format::human, false, out, err, colour).error_line("broken", "");
  CHECK(err.str() == "neuron-cache: \033[1;33mwarning:\033[0m careful\nneuron-cache: \033[1;31merror:\033[0m broken\n");
  Captured plain;
  plain.sink(Format::human).warning("careful");
  CHECK(plain.err.str() == "neuron-cache: warning: careful\n");
}

TEST_CASE("output: the terminal is read from COLUMNS, TERM and NO_COLOR; odd values fall back")
{
  CHECK(parse_columns("120") == 120U);
  CHECK(parse_columns("5") == k_min_width);
  CHECK(parse_columns("99999") == k_max_width);
  CHECK_FALSE(parse_columns("wide"));
  CHECK_FALSE(parse_columns("0"));
  CHECK(parse_interval("30") == std::chrono::milliseconds(30'000));
  CHECK(parse_interval("0.05") == std::chrono::milliseconds(50));
  CHECK_FALSE(parse_interval("-1"));
  CHECK_FALSE(parse_interval("nan"));
  CHECK_FALSE(parse_interval("10s"));
  auto env = hubcache::util::Environment::from_map(
    {{"COLUMNS", "132"}, {"TERM", "xterm"}, {"NO_COLOR", "1"}, {"NEURON_CACHE_PROGRESS_INTERVAL", "soon"}});
  auto terminal = Terminal::detect(env);
  CHECK(terminal.stdout_width == 132);
  CHECK(terminal.stderr_width == 132);
  CHECK(terminal.table_width == 132); // $COLUMNS asks for tables fitted, piped or not
  CHECK_FALSE(terminal.colour);       // NO_COLOR, and the test's stderr is not necessarily a terminal
  CHECK(terminal.invalid_interval == "soon");
  CHECK(terminal.progress_interval == std::chrono::milliseconds(30'000));
  CHECK(Terminal::detect(hubcache::util::Environment::from_map({{"TERM", "dumb"}})).dumb);
  CHECK(Terminal::detect(hubcache::util::Environment::from_map({})).dumb);
  if (!::isatty(STDOUT_FILENO)) { // piped without $COLUMNS: help wraps at 80, tables stay whole
    auto piped = Terminal::detect(hubcache::util::Environment::from_map({}));
    CHECK(piped.stdout_width == k_default_width);
    CHECK(piped.table_width == 0);
  }
}

TEST_CASE("output: progress is a bar on a terminal that redraws, lines elsewhere, nothing for scripts")
{
  std::ostringstream out, err;
  Terminal tty;
  tty.stderr_tty = true;
  tty.dumb = false;
  Terminal dumb = tty;
  dumb.dumb = true;
  Terminal piped;
  using Style = Output::ProgressStyle;
  CHECK(Output(Format::human, false, out, err, tty).progress_style() == Style::bar);
  CHECK(Output(Format::human, false, out, err, dumb).progress_style() == Style::lines);
  CHECK(Output(Format::human, false, out, err, piped).progress_style() == Style::lines);
  CHECK(Output(Format::json, false, out, err, piped).progress_style() == Style::none);
  CHECK(Output(Format::json, true, out, err, tty).progress_style() == Style::lines);
  CHECK(Output(Format::quiet, true, out, err, tty).progress_style() == Style::none);
  Output disabled(Format::human, false, out, err, tty);
  disabled.disable_progress();
  CHECK(disabled.progress_style() == Style::none);
}

TEST_CASE("output: one progress layout that gives up its parts to fit the width")
{
  hubcache::util::TransferProgress progress{1'200'000'000, 3'100'000'000, 12, 30};
  auto full = ProgressBar::render("Downloading", progress, 45e6, 200);
  CHECK(full == "Downloading [#########               ]  38% 1.2 GB/3.1 GB, 12/30 files, 45.0 MB/s, ETA 0:42");
  CHECK(ProgressBar::render("Downloading", progress, 45e6, 200, false)
        == "Downloading  38% 1.2 GB/3.1 GB, 12/30 files, 45.0 MB/s, ETA 0:42");
  for (std::size_t width : {79, 60, 50, 40, 30, 20}) {
    CAPTURE(width);
    auto line = ProgressBar::render("Downloading", progress, 45e6, width);
    CHECK(line.size() <= width);
    CHECK(line.starts_with("Downloading"));
  }
  CHECK(ProgressBar::render("Downloading", progress, 45e6, 79).find("[") != std::string::npos);
  CHECK(ProgressBar::render("Downloading", progress, 45e6, 40) == "Downloading  38% 1.2 GB/3.1 GB, ETA 0:42");
}

TEST_CASE("output: without a terminal the progress line comes at the start, then every interval")
{
  SharedBuffer buffer;
  std::ostream err(&buffer);
  std::ostringstream out;
  Terminal piped;
  piped.progress_interval = std::chrono::milliseconds(1);
  Output output(Format::human, false, out, err, piped);
  ProgressBar bar(output, "Uploading");
  bar.update({10, 100, 1, 4});
  CHECK(buffer.text() == "Uploading  10% 10 B/100 B, 1/4 files\n"); // at once, not after the interval
  // Then more lines, by time: waited for as an event (bounded), never timed.
  for (int i = 0; i < 10'000 && count_lines(buffer.text()) < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  bar.finish();
  auto text = buffer.text();
  CHECK(count_lines(text) >= 3);
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find('\033') == std::string::npos);
}

TEST_CASE("output: on a terminal the bar is redrawn in place and erased at the end")
{
  std::ostringstream out, err;
  Terminal tty;
  tty.stderr_tty = true;
  tty.dumb = false;
  tty.stderr_width = 40;
  Output output(Format::human, false, out, err, tty);
  {
    ProgressBar bar(output, "Copying");
    bar.update({50, 100, 0, 0});
  }
  auto text = err.str();
  CHECK(text.starts_with("\rCopying ["));
  CHECK(text.ends_with("\r\033[K"));
  CHECK(text.find('\n') == std::string::npos);
  auto first = text.substr(1, text.find("\033[K") - 1);
  CHECK(first.size() <= 39); // never the last column
}

TEST_CASE("output: a table wider than the terminal is cut in its widest columns' middle")
{
  Output::Table table;
  table.headers = {"MODEL", "SIZE", "ENTRY"};
  table.right_aligned = {false, true, false};
  table.rows = {
    {"org/a", "1.2 GB", "neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.5/llama/org/a/c71fda8e0704b735d165.json"}};
  table.footer = "1 model in a repo whose name is long enough to need a second line at forty columns";
  auto text = format_table(table, 40);
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    CAPTURE(line);
    CHECK(line.size() <= 40);
  }
  CHECK(text.find("org/a  1.2 GB  neuronxcc-2...35d165.json\n") != std::string::npos);
  CHECK(format_table(table, 0).find("c71fda8e0704b735d165.json") != std::string::npos); // no limit
  CHECK(fit_middle("abcdefghij", 7) == "ab...ij");
  CHECK(fit_end("abcdefghij", 7) == "abcd...");
  CHECK(wrap_lines("short\n  a line that is far too long", 12) == "short\n  a line\n  that is\n  far too\n  long");
}

TEST_CASE("skip details: the library gives facts, the CLI the words")
{
  namespace cc = hubcache::compilecache;
  // A reason that says it all gets the table's detail; a stopped run names what stopped it.
  CHECK(skip_detail({"e", cc::SkipReason::temp_file, ""}) == "an unfinished write");
  CHECK(skip_detail({"e", cc::SkipReason::stopped, "503 from the repo"})
        == "the run stopped after an error of the repo (503 from the repo)");
  CHECK(skip_detail({"e", cc::SkipReason::error, "disk full"}) == "disk full");
}

TEST_CASE("the library's findings are worded here, with their subjects")
{
  namespace cc = hubcache::compilecache;
  const std::string entry = "neuronxcc-2.21.0/MODULE_1+abcdef12";
  CHECK(skip_detail({entry, cc::SkipReason::locked_locally, "model.neff.lock", cc::Finding::lock_present})
        == "a compiler holds model.neff.lock");
  CHECK(skip_detail({entry, cc::SkipReason::incomplete_in_repo, "model.neff", cc::Finding::file_missing})
        == "no model.neff");
  CHECK(skip_detail({entry, cc::SkipReason::flags_mismatch, "0123abcd", cc::Finding::suffix_differs})
        == "flags suffix abcdef12 does not match the flags file (md5 prefix 0123abcd)");
  CHECK(skip_detail({entry, cc::SkipReason::flags_mismatch, "abcdef12", cc::Finding::suffix_needs_flags})
        == "no compile_flags file, but the name's flags suffix is abcdef12 (not d41d8cd9)");
  CHECK(skip_detail({"odd", cc::SkipReason::unrecognized, "", cc::Finding::not_a_version_dir})
        == "not a neuronxcc-<version> directory");
  CHECK(skip_detail({"a/link", cc::SkipReason::symlink_outside_root, "/etc", cc::Finding::points_outside})
        == "points to /etc");
  // The same finding against the repo (a pull) and against a copy's source.
  CHECK(skip_detail({entry, cc::SkipReason::local_entry_differs, "model.neff", cc::Finding::file_differs})
        == "model.neff differs from the repo's");
  CHECK(skip_detail({entry, cc::SkipReason::target_entry_differs, "model.neff", cc::Finding::file_differs})
        == "model.neff differs from the source's");
  CHECK(skip_detail({entry, cc::SkipReason::local_entry_differs, "extra.bin", cc::Finding::only_here})
        == "extra.bin exists locally but not in the repo");
  // A subject from a listing is escaped where it is shown whole.
  CHECK(skip_detail({entry, cc::SkipReason::link_in_local_path, "a\nb", cc::Finding::link_on_the_way})
          .starts_with("a\\x0ab is a symbolic link"));
}

} // namespace cli_output_test
