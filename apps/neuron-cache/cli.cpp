#include "cli.hpp"

#include <cxxopts.hpp>

#include <algorithm>
#include <charconv>
#include <sstream>

namespace neuron_cache {

namespace {

constexpr const char* k_positional_key = "positional-arguments";
constexpr std::size_t k_help_column = 34; // where descriptions start, for arguments and options alike
constexpr std::size_t k_help_gap = 2;     // spaces at least between a name and its description
constexpr std::size_t k_help_width = 100; // the widest help, even on a wider terminal

std::string join_names(const OptionSpec& option)
{
  std::string names;
  if (!option.short_name.empty()) {
    names = option.short_name + ",";
  }
  names += option.long_name;
  if (auto twin = option.underscore_twin(); !twin.empty()) {
    names += "," + twin;
  }
  for (const auto& alias : option.aliases) {
    names += "," + alias;
    OptionSpec alias_spec;
    alias_spec.long_name = alias;
    if (auto twin = alias_spec.underscore_twin(); !twin.empty()) {
      names += "," + twin;
    }
  }
  return names;
}

std::vector<const OptionSpec*> options_of(const CommandSpec& command)
{
  std::vector<const OptionSpec*> all;
  for (const auto& option : command.options) {
    all.push_back(&option);
  }
  for (const auto* option : common_options_of(command)) {
    all.push_back(option);
  }
  return all;
}

Format resolve_format(const cxxopts::ParseResult& result)
{
  std::optional<Format> chosen;
  std::string chosen_by;
  auto choose = [&](Format format, const std::string& flag) {
    if (chosen && *chosen != format) {
      throw UsageError("'" + flag + "' conflicts with '" + chosen_by + "'; choose one output format");
    }
    chosen = format;
    chosen_by = flag;
  };
  for (const auto& value :
       result.count("format") != 0U ? result["format"].as<std::vector<std::string>>() : std::vector<std::string>{}) {
    if (value == "human") {
      choose(Format::human, "--format human");
    } else if (value == "json") {
      choose(Format::json, "--format json");
    } else if (value == "quiet") {
      choose(Format::quiet, "--format quiet");
    } else {
      throw UsageError("--format must be one of human, json, quiet (got '" + value + "')");
    }
  }
  if (result.count("json") != 0U) {
    choose(Format::json, "--json");
  }
  if (result.count("quiet") != 0U) {
    choose(Format::quiet, "--quiet");
  }
  return chosen.value_or(Format::human);
}

// cxxopts words its errors its own way, with typographic quotes: say it as the rest of the
// program does, with a suggestion for a mistyped option.
std::string usage_message(const cxxopts::exceptions::exception& error, const CommandSpec& command)
{
  std::string message = error.what();
  for (const std::string quote : {"\xe2\x80\x98", "\xe2\x80\x99"}) {
    for (auto at = message.find(quote); at != std::string::npos; at = message.find(quote)) {
      message.replace(at, quote.size(), "'");
    }
  }
  auto open = message.find('\'');
  auto close = open == std::string::npos ? std::string::npos : message.find('\'', open + 1);
  if (open == std::string::npos || close == std::string::npos) {
    return message;
  }
  std::string name = message.substr(open + 1, close - open - 1);
  std::string dashed = (name.size() == 1 ? "-" : "--") + name;
  if (dynamic_cast<const cxxopts::exceptions::no_such_option*>(&error) != nullptr) {
    std::vector<std::string> known;
    for (const auto* option : options_of(command)) {
      known.push_back(option->long_name);
      for (const auto& alias : option->aliases) {
        known.push_back(alias);
      }
    }
    std::string text = "unknown option '" + dashed + "'";
    if (auto suggestion = closest_match(name, known); !suggestion.empty()) {
      text += " (did you mean '--" + suggestion + "'?)";
    }
    return text;
  }
  if (dynamic_cast<const cxxopts::exceptions::missing_argument*>(&error) != nullptr
      || dynamic_cast<const cxxopts::exceptions::option_requires_argument*>(&error) != nullptr) {
    return "option '" + dashed + "' needs a value";
  }
  if (dynamic_cast<const cxxopts::exceptions::gratuitous_argument_for_option*>(&error) != nullptr) {
    return "option '" + dashed + "' takes no value";
  }
  return message;
}

// A description as written (prose hard-wrapped near 100 columns) re-wrapped to `width`:
// a line joins the one before unless that one ends a sentence or a clause (". " or ":")
// or is blank, or the line is indented.
std::string reflow(const std::string& text, std::size_t width)
{
  std::vector<std::string> paragraphs;
  std::istringstream lines(text);
  std::string line;
  bool joinable = false;
  while (std::getline(lines, line)) {
    bool indented = !line.empty() && line.front() == ' ';
    if (joinable && !indented && !line.empty()) {
      paragraphs.back() += " " + line;
    } else {
      paragraphs.push_back(line);
    }
    joinable = !line.empty() && line.back() != '.' && line.back() != ':';
  }
  std::string out;
  for (const auto& paragraph : paragraphs) {
    auto indent = std::min(paragraph.find_first_not_of(' '), paragraph.size());
    out += (out.empty() ? "" : "\n") + std::string(indent, ' ') + wrap_words(paragraph, indent, width, indent);
  }
  return out;
}

// A shell example within `width`: continued on the next line with " \\" between words
// (never inside quotes), so it still pastes as one command.
std::string wrap_example(const std::string& example, std::size_t width)
{
  std::vector<std::string> words(1);
  char quote = 0;
  for (char c : example) {
    if (quote == 0 && c == ' ') {
      words.emplace_back();
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = quote == 0 ? c : (quote == c ? 0 : quote);
    }
    words.back() += c;
  }
  constexpr std::size_t indent = 2, continuation = 6;
  std::string out(indent, ' ');
  std::size_t column = indent;
  bool first = true;
  for (const auto& word : words) {
    if (!first && column + 1 + word.size() + 2 > width) {
      out += " \\\n" + std::string(continuation, ' ');
      column = continuation;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    first = false;
  }
  return out;
}

} // namespace

std::string OptionSpec::underscore_twin() const
{
  if (long_name.find('-') == std::string::npos) {
    return {};
  }
  std::string twin = long_name;
  std::replace(twin.begin(), twin.end(), '-', '_');
  return twin;
}

const std::vector<OptionSpec>& common_options()
{
  static const std::vector<OptionSpec> options = {
    {"",
     "format",
     ValueKind::choice,
     "FORMAT",
     "Output format: human (default), json or quiet.",
     {"human", "json", "quiet"},
     {}},
    {"", "json", ValueKind::flag, "", "Same as --format json.", {}, {}},
    {"q", "quiet", ValueKind::flag, "", "Same as --format quiet: only essential values, one per line.", {}, {}},
    // -v only after a command without its own -v (common_options_of): `list -v` is
    // optimum-cli's compiler version.
    {"",
     "verbose",
     ValueKind::flag,
     "",
     "Show details (every skipped entry, each step) on standard error. Also -v, after a command that has no -v of "
     "its own (list and lookup: the compiler version).",
     {},
     {}},
    {"h", "help", ValueKind::flag, "", "Show this help and exit.", {}, {}},
  };
  return options;
}

std::vector<const OptionSpec*> common_options_of(const CommandSpec& command)
{
  static const OptionSpec verbose_with_short = [] {
    auto option = *std::find_if(common_options().begin(), common_options().end(),
                                [](const OptionSpec& common) { return common.long_name == "verbose"; });
    option.short_name = "v";
    option.help = "Show details (every skipped entry, each step) on standard error.";
    return option;
  }();
  bool own_v = std::any_of(command.options.begin(), command.options.end(),
                           [](const OptionSpec& option) { return option.short_name == "v"; });
  std::vector<const OptionSpec*> options;
  for (const auto& option : common_options()) {
    options.push_back(option.long_name == "verbose" && !own_v ? &verbose_with_short : &option);
  }
  return options;
}

const CommandSpec* find_command(const std::string& name)
{
  for (const auto& command : all_commands()) {
    if (command.name == name
        || std::find(command.aliases.begin(), command.aliases.end(), name) != command.aliases.end()) {
      return &command;
    }
  }
  return nullptr;
}

namespace {

// Known before parsing, so that even a usage error is reported as JSON under --json.
bool asks_for_json(const std::vector<std::string>& args)
{
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json" || args[i] == "--format=json"
        || (args[i] == "--format" && i + 1 < args.size() && args[i + 1] == "json")) {
      return true;
    }
  }
  return false;
}

// cxxopts over the command's options and the common ones; positionals under one key.
std::unique_ptr<cxxopts::ParseResult> parse_args(const CommandSpec& command, std::vector<std::string>& args)
{
  cxxopts::Options parser("neuron-cache " + command.name);
  auto adder = parser.add_options();
  for (const auto* option : options_of(command)) {
    if (option->kind == ValueKind::flag) {
      adder(join_names(*option), option->help);
    } else {
      adder(join_names(*option), option->help, cxxopts::value<std::vector<std::string>>());
    }
  }
  adder(k_positional_key, "", cxxopts::value<std::vector<std::string>>());
  parser.parse_positional({k_positional_key});

  std::vector<char*> argv;
  std::string program = "neuron-cache";
  argv.push_back(program.data());
  for (auto& arg : args) {
    argv.push_back(arg.data());
  }
  try {
    return std::make_unique<cxxopts::ParseResult>(parser.parse(static_cast<int>(argv.size()), argv.data()));
  } catch (const cxxopts::exceptions::exception& error) {
    throw UsageError(usage_message(error, command));
  }
}

std::unique_ptr<Output> open_output(const RunContext& context, const hubcache::util::Environment& env)
{
  auto terminal = Terminal::detect(env);
  auto output = std::make_unique<Output>(context.format, context.verbose, terminal);
  if (terminal.invalid_interval) {
    output->warning("NEURON_CACHE_PROGRESS_INTERVAL is not a number of seconds (got '"
                    + hubcache::util::escape_control(*terminal.invalid_interval) + "'): progress lines every 30s");
  }
  // As huggingface_hub: progress bars off for scripts that ask.
  if (env.get_flag("HF_HUB_DISABLE_PROGRESS_BARS")) {
    output->disable_progress();
  }
  return output;
}

// Each option given at most once (unless repeatable), a choice one of its own.
void check_option_values(const CommandSpec& command, const cxxopts::ParseResult& result)
{
  for (const auto* option : options_of(command)) {
    if (option->kind != ValueKind::flag && !option->repeatable && result.count(option->long_name) > 1U) {
      throw UsageError("--" + option->long_name + " was given more than once");
    }
    if (option->kind == ValueKind::choice && result.count(option->long_name) != 0U) {
      auto value = result[option->long_name].as<std::vector<std::string>>().front();
      if (std::find(option->choices.begin(), option->choices.end(), value) == option->choices.end()) {
        std::string allowed;
        for (const auto& choice : option->choices) {
          allowed += (allowed.empty() ? "" : ", ") + choice;
        }
        throw UsageError("--" + option->long_name + " must be one of " + allowed + " (got '" + value + "')");
      }
    }
  }
}

void check_positionals(const CommandSpec& command, const std::vector<std::string>& positionals,
                       const std::vector<std::string>& trailing)
{
  // A shell_command positional (add's COMMAND) is what follows `--`: trailing(), never a word before it.
  auto plain_count = static_cast<std::size_t>(
    std::count_if(command.positionals.begin(), command.positionals.end(),
                  [](const PositionalSpec& positional) { return positional.kind != ValueKind::shell_command; }));
  if (positionals.size() > plain_count) {
    throw UsageError("unexpected argument '" + positionals[plain_count] + "'");
  }
  for (std::size_t i = 0; i < command.positionals.size(); ++i) {
    const auto& positional = command.positionals[i];
    if (positional.kind == ValueKind::shell_command) {
      if (positional.required && trailing.empty()) {
        throw UsageError("missing " + positional.name + " after --");
      }
    } else if (positional.required && i >= positionals.size()) {
      throw UsageError("missing argument " + positional.name);
    }
  }
}

} // namespace

Invocation::Invocation(const CommandSpec& command, std::vector<std::string> args,
                       const hubcache::util::Environment& env, RunContext* context)
  : m_command(command), m_env(env), m_context(context)
{
  if (m_context == nullptr) {
    m_own_context = std::make_unique<RunContext>();
    m_context = m_own_context.get();
  }
  m_context->command = command.name;
  auto separator = std::find(args.begin(), args.end(), "--");
  if (separator != args.end()) {
    m_trailing.assign(separator + 1, args.end());
    args.erase(separator, args.end());
  }
  if (asks_for_json(args)) {
    m_context->format = Format::json;
  }
  m_result = parse_args(command, args);
  m_help = m_result->count("help") != 0U;
  if (m_result->count(k_positional_key) != 0U) {
    m_positionals = (*m_result)[k_positional_key].as<std::vector<std::string>>();
  }
  m_context->format = resolve_format(*m_result);
  m_context->verbose = m_result->count("verbose") != 0U;
  m_output = open_output(*m_context, env);
  if (m_help) {
    return;
  }
  check_option_values(command, *m_result);
  check_positionals(command, m_positionals, m_trailing);
  for (const auto& option : command.options) {
    if (option.kind == ValueKind::integer && m_result->count(option.long_name) != 0U) {
      integer(option.long_name);
    }
  }
}

Invocation::~Invocation() = default;

bool Invocation::has(const std::string& long_name) const
{
  return m_result->count(long_name) != 0U;
}

std::optional<std::string> Invocation::value(const std::string& long_name) const
{
  if (!has(long_name)) {
    return std::nullopt;
  }
  return (*m_result)[long_name].as<std::vector<std::string>>().back();
}

std::vector<std::string> Invocation::values(const std::string& long_name) const
{
  if (!has(long_name)) {
    return {};
  }
  return (*m_result)[long_name].as<std::vector<std::string>>();
}

std::optional<long long> Invocation::integer(const std::string& long_name, long long minimum) const
{
  auto text = value(long_name);
  if (!text) {
    return std::nullopt;
  }
  long long parsed = 0;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), parsed);
  if (error != std::errc() || end != text->data() + text->size() || text->empty()) {
    throw UsageError("--" + long_name + " expects an integer (got '" + *text + "')");
  }
  if (parsed < minimum) {
    throw UsageError("--" + long_name + " must be at least " + std::to_string(minimum) + " (got " + *text + ")");
  }
  return parsed;
}

std::optional<std::string> Invocation::positional(const std::string& name) const
{
  for (std::size_t i = 0; i < m_command.positionals.size(); ++i) {
    if (m_command.positionals[i].name == name) {
      if (i < m_positionals.size()) {
        return m_positionals[i];
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string render_command_help(const CommandSpec& command, std::size_t terminal_width)
{
  const auto width = std::min(terminal_width, k_help_width);
  // Names on the left, descriptions in one column; on a narrow terminal each name on its
  // own line, its description below, indented.
  const auto help_column = width >= 72 ? k_help_column : std::size_t{8};
  std::ostringstream out;
  out << "Usage: neuron-cache " << command.name << " [OPTIONS]";
  for (const auto& positional : command.positionals) {
    if (positional.kind == ValueKind::shell_command) {
      out << (positional.required ? " -- " + positional.name + "..." : " [-- " + positional.name + "...]");
    } else {
      out << (positional.required ? " " + positional.name : " [" + positional.name + "]");
    }
  }
  out << "\n\n" << wrap_words(command.summary, 0, std::min<std::size_t>(width, 88), 0) << "\n";
  if (!command.description.empty()) {
    out << "\n" << reflow(command.description, width) << "\n";
  }
  // A name too long for its side gets its own line.
  auto emit_row = [&](const std::string& left, const std::string& help) {
    if (left.size() + k_help_gap > help_column) {
      out << left << "\n" << std::string(help_column, ' ');
    } else {
      out << left << std::string(help_column - left.size(), ' ');
    }
    out << wrap_words(help, help_column, width, help_column) << "\n";
  };
  if (!command.positionals.empty()) {
    out << "\nArguments:\n";
    for (const auto& positional : command.positionals) {
      emit_row("  " + positional.name, positional.help);
    }
  }
  auto emit_options = [&](const std::string& title, const std::vector<const OptionSpec*>& options) {
    if (options.empty()) {
      return;
    }
    out << "\n" << title << ":\n";
    for (const auto* pointer : options) {
      const auto& option = *pointer;
      std::string left = "  ";
      left += option.short_name.empty() ? "    " : "-" + option.short_name + ", ";
      left += "--" + option.long_name;
      if (option.kind != ValueKind::flag) {
        left += " " + option.value_name;
      }
      std::string help = option.help;
      if (auto twin = option.underscore_twin(); !twin.empty()) {
        help += " (also --" + twin + ")";
      }
      for (const auto& alias : option.aliases) {
        help += " (alias --" + alias + ")";
      }
      if (option.repeatable) {
        help += " (repeatable)";
      }
      emit_row(left, help);
    }
  };
  std::vector<const OptionSpec*> own;
  for (const auto& option : command.options) {
    own.push_back(&option);
  }
  emit_options("Options", own);
  emit_options("Common options", common_options_of(command));
  if (!command.examples.empty()) {
    out << "\nExamples:\n";
    for (const auto& example : command.examples) {
      out << wrap_example(example, width) << "\n";
    }
  }
  return out.str();
}

std::string render_main_help(std::size_t terminal_width)
{
  const auto width = std::min(terminal_width, k_help_width);
  constexpr std::size_t summary_column = 16;
  std::ostringstream out;
  out << "Usage: neuron-cache [--version] [--help] COMMAND [OPTIONS]\n\n"
      << reflow(
           "Manage Neuron compiled-model caches (neuronx-cc NEFF files) kept in a cache repo: a Hugging Face "
           "Hub model repo (org/name), a directory (/path or file:///path), an S3 prefix (s3://bucket/prefix) or a "
           "Storage Bucket (hf://buckets/ns/name).\n"
           "Compatible with optimum-cli neuron cache.",
           width)
      << "\n\nCommands:\n";
  for (const auto& command : all_commands()) {
    std::string left = "  " + command.name;
    std::string summary = command.summary;
    for (const auto& alias : command.aliases) {
      summary += " (alias: " + alias + ")";
    }
    auto column = left.size() + k_help_gap <= summary_column ? summary_column : left.size() + k_help_gap;
    out << left << std::string(column - left.size(), ' ') << wrap_words(summary, summary_column, width, column) << "\n";
  }
  out << "\n"
      << wrap_words("Run 'neuron-cache COMMAND --help' for a command's options and examples.", 0, width, 0) << "\n";
  std::string codes = "Exit codes:";
  for (const auto& status : exit_statuses()) {
    codes += " " + status.code + " " + status.brief + (&status == &exit_statuses().back() ? "." : ",");
  }
  out << wrap_words(codes, 0, width, 0) << "\n";
  return out.str();
}

const std::vector<ExitStatus>& exit_statuses()
{
  static const std::vector<ExitStatus> statuses = {
    {std::to_string(k_exit_ok), "ok", "Success."},
    {std::to_string(k_exit_error), "error",
     "An error: the message on standard error (and, with --json, the error object on standard output) says what "
     "failed and what to do next."},
    {std::to_string(k_exit_usage), "usage error", "A usage error: an unknown option, a missing or malformed argument."},
    {std::to_string(k_exit_not_found), "nothing found",
     "Nothing found: lookup found no cached configuration for the model."},
    {std::to_string(k_exit_signal_base) + "+N", "interrupted",
     "Interrupted by signal N (130 for SIGINT, 143 for SIGTERM): add, or a push or pull stopped at a safe point; "
     "nothing half-published or half-installed: run the same command again to finish."},
  };
  return statuses;
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates)
{
  // Edit distance counting a swap of two neighbours as one edit ("nmae" -> "name").
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) {
      d[i][0] = i;
    }
    for (std::size_t j = 0; j <= b.size(); ++j) {
      d[0][j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
      for (std::size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0U : 1U)});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.size()][b.size()];
  };
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& candidate : candidates) {
    auto d = distance(word, candidate);
    bool prefix = word.size() >= 3 && candidate.starts_with(word);
    if (prefix) {
      d = 1;
    }
    if (d < best_distance && (prefix || d * 2 < std::max<std::size_t>(word.size(), 2))) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

} // namespace neuron_cache
