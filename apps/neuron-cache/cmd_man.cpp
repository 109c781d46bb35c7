// `neuron-cache man`: the manual page, in roff, generated from the same option table
// as --help and the completion scripts (installed as share/man/man1/neuron-cache.1).
#include "commands.hpp"
#include "completion_model.hpp"

#include <sstream>

namespace neuron_cache {

namespace {

using namespace completion;

// Text for a roff line: backslashes and hyphens escaped (so options copy as ASCII '-'),
// line breaks folded (roff fills paragraphs).
std::string roff(const std::string& text)
{
  std::string escaped;
  for (char c : text) {
    if (c == '\\') {
      escaped += "\\e";
    } else if (c == '-') {
      escaped += "\\-";
    } else if (c == '\n') {
      escaped += ' ';
    } else {
      escaped += c;
    }
  }
  return escaped;
}

// A line of running text: a leading '.' or '\'' would read as a request.
std::string roff_line(const std::string& text)
{
  auto line = roff(text);
  if (!line.empty() && (line.front() == '.' || line.front() == '\'')) {
    line = "\\&" + line;
  }
  return line + "\n";
}

std::string bold(const std::string& text) { return "\\fB" + roff(text) + "\\fR"; }
std::string italic(const std::string& text) { return "\\fI" + roff(text) + "\\fR"; }

std::string value_placeholder(const OptionSpec& option)
{
  if (option.kind == ValueKind::choice) {
    std::string choices;
    for (const auto& choice : option.choices) {
      choices += (choices.empty() ? "" : "|") + choice;
    }
    return " " + italic(choices);
  }
  return " " + italic(option.value_name.empty() ? "VALUE" : option.value_name);
}

std::string synopsis(const CommandSpec& command)
{
  std::string line = bold("neuron-cache " + command.name) + " [" + italic("OPTIONS") + "]";
  for (const auto& positional : command.positionals) {
    if (positional.kind == ValueKind::shell_command) {
      line += " [" + bold("--") + " " + italic(positional.name) + " ...]";
    } else {
      line += positional.required ? " " + italic(positional.name) : " [" + italic(positional.name) + "]";
    }
  }
  return line;
}

void write_option(std::ostringstream& out, const OptionSpec& option)
{
  std::string names;
  for (const auto& name : dashed_names(option)) {
    names += (names.empty() ? "" : ", ") + bold(name);
  }
  if (takes_value(option)) {
    names += value_placeholder(option);
  }
  out << ".TP\n" << names << "\n" << roff_line(option.help);
}

void write_examples(std::ostringstream& out, const std::vector<std::string>& examples)
{
  out << ".PP\n.RS\n.nf\n";
  for (const auto& example : examples) {
    out << roff_line(example);
  }
  out << ".fi\n.RE\n";
}

struct Described {
  const char* name;
  const char* text;
};

// Variables neuron-cache reads; the commands' own help gives the details of each use.
const std::vector<Described> k_environment = {
  {"CUSTOM_CACHE_REPO",
   "The cache repo to use when --repo-id is not given; takes precedence over the name saved by set "
   "(as in optimum-neuron)."},
  {"HF_HOME",
   "Hugging Face home: holds optimum_neuron_custom_cache (the repo saved by set and create) and token. "
   "Default: $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface."},
  {"HF_TOKEN",
   "Token for Hub repos when --token is not given (then HUGGING_FACE_HUB_TOKEN, then the file $HF_TOKEN_PATH, "
   "by default $HF_HOME/token). Never printed or logged."},
  {"HF_ENDPOINT", "Base URL of the Hub (default https://huggingface.co)."},
  {"HF_HUB_DISABLE_PROGRESS_BARS",
   "When 1, ON, YES or TRUE, no progress bar is drawn (they are drawn only on a terminal, in human output)."},
  {"HF_HUB_OFFLINE",
   "When 1, ON, YES or TRUE, no network request is made: commands that need the Hub fail with a clear error; "
   "directory repos work as usual."},
  {"NEURON_CC_FLAGS",
   "Neuron compiler flags. A --cache_dir=DIR in them names the local compile cache (before "
   "NEURON_COMPILE_CACHE_URL); add keeps them for the command it runs and records them in the registry entry."},
  {"NEURON_COMPILE_CACHE_URL",
   "The local Neuron compile cache that synchronize and add work on, when neither --cache-dir nor NEURON_CC_FLAGS "
   "names one (default /var/tmp/neuron-compile-cache)."},
  {"XDG_CACHE_HOME",
   "Base of the default HF_HOME and of neuron-cache's own cache ($XDG_CACHE_HOME/neuron-cache, default "
   "~/.cache/neuron-cache)."},
};

const std::vector<Described> k_files = {
  {"$HF_HOME/optimum_neuron_custom_cache",
   "The cache repo of this host, written by set and create, one line with no newline; read by optimum-neuron too."},
  {"$HF_HOME/token", "The Hugging Face token, as written by hf auth login."},
  {"/var/tmp/neuron-compile-cache", "The default local Neuron compile cache (neuronx-cc MODULE_* entries)."},
  {"~/.cache/neuron-cache/completion/models.txt",
   "Model ids of the last list, one per line, offered by shell completion (under $XDG_CACHE_HOME when set)."},
  {"share/bash-completion/completions/neuron-cache, share/zsh/site-functions/_neuron-cache, "
   "share/fish/vendor_completions.d/neuron-cache.fish",
   "The completion scripts, under the installation prefix; neuron-cache completion prints them too."},
};

const std::vector<Described> k_exit_status = {
  {"0", "Success."},
  {"1", "An error: the message on standard error says what failed and what to do next."},
  {"2", "A usage error: an unknown option, a missing or malformed argument."},
  {"3", "Nothing found: lookup found no cached configuration for the model."},
};

std::string man_page()
{
  std::ostringstream out;
  out << ".\\\" Generated by `neuron-cache man` from the CLI's option table: do not edit;\n"
      << ".\\\" regenerate with `make completions`.\n"
      << ".TH NEURON\\-CACHE 1 \"\" \"neuron\\-cache " << roff(NEURON_CACHE_VERSION) << "\" \"User Commands\"\n"
      << ".nh\n.ad l\n"; // ids and paths read better unhyphenated and unstretched

  out << ".SH NAME\nneuron\\-cache \\- manage AWS Neuron compiled\\-model caches on the Hugging Face Hub or a "
         "directory\n";

  out << ".SH SYNOPSIS\n" << bold("neuron-cache") << " [" << bold("--version") << "] [" << bold("--help") << "] "
      << italic("COMMAND") << " [" << italic("OPTIONS") << "]\n";
  for (const auto& command : all_commands()) {
    out << ".br\n" << synopsis(command) << "\n";
  }

  out << ".SH DESCRIPTION\n"
      << roff_line("neuron-cache manages caches of Neuron compiled models (the NEFF files neuronx-cc writes) kept "
                   "in a cache repo: a Hugging Face Hub model repo (org/name), byte-compatible with "
                   "optimum-neuron's aws-neuron/optimum-neuron-cache, or a plain directory (/path or "
                   "file:///path) on local disk, NFS or FSx for Lustre. It is compatible with optimum-cli "
                   "neuron cache: the same commands, option names (--repo_id and --repo-id both work) and files.")
      << ".PP\n"
      << roff_line("The cache repo is chosen as optimum-neuron chooses it: --repo-id, then $CUSTOM_CACHE_REPO, "
                   "then the name saved by set in $HF_HOME/optimum_neuron_custom_cache, then "
                   "aws-neuron/optimum-neuron-cache.")
      << ".PP\n"
      << roff_line("Results go to standard output, diagnostics to standard error. Every command takes --format "
                   "human|json|quiet (or --json, -q): json for programs, quiet for one value per line.");

  out << ".SH COMMANDS\n";
  for (const auto& command : all_commands()) {
    out << ".SS " << bold(command.name) << "\n" << synopsis(command) << "\n.PP\n" << roff_line(command.summary);
    if (!command.description.empty()) {
      out << ".PP\n" << roff_line(command.description);
    }
    for (const auto& positional : command.positionals) {
      out << ".TP\n" << italic(positional.name) << "\n" << roff_line(positional.help);
    }
    for (const auto& option : command.options) {
      write_option(out, option);
    }
    if (!command.examples.empty()) {
      out << ".PP\nExamples:\n";
      write_examples(out, command.examples);
    }
  }

  out << ".SH OPTIONS\nEvery command also takes these options; the output options may come before the "
         "command too.\n";
  for (const auto& option : global_options()) {
    write_option(out, option);
  }

  out << ".SH ENVIRONMENT\n";
  for (const auto& [name, text] : k_environment) {
    out << ".TP\n" << bold(name) << "\n" << roff_line(text);
  }
  out << ".SH FILES\n";
  for (const auto& [name, text] : k_files) {
    out << ".TP\n" << italic(name) << "\n" << roff_line(text);
  }
  out << ".SH EXIT STATUS\n";
  for (const auto& [name, text] : k_exit_status) {
    out << ".TP\n" << bold(name) << "\n" << roff_line(text);
  }

  out << ".SH EXAMPLES\n";
  for (const auto& command : all_commands()) {
    if (!command.examples.empty()) {
      out << ".PP\n" << roff_line(command.summary);
      write_examples(out, {command.examples.front()});
    }
  }
  out << ".SH SEE ALSO\n" << bold("optimum-cli") << "(1), " << bold("neuronx-cc") << "(1)\n";
  return out.str();
}

int run_man(Invocation& invocation)
{
  invocation.out().raw(man_page());
  return k_exit_ok;
}

} // namespace

CommandSpec make_man_command()
{
  CommandSpec command;
  command.name = "man";
  command.summary = "Print this program's manual page (roff, for man).";
  command.description = "Installed builds ship it as share/man/man1/neuron-cache.1, so 'man neuron-cache' works.";
  command.examples = {"neuron-cache man | man -l -", "neuron-cache man > neuron-cache.1"};
  command.run = run_man;
  return command;
}


} // namespace neuron_cache
