// Command-line plumbing shared by the onnx-bcast subcommands.
#include "tools/cli.h"

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace onnx_bcast::tools {

namespace {

// A value that parsing refuses in our own words ("option '--threads': 'x' is not an integer"),
// thrown from a conversion so that Parse reports it verbatim.
class ValueError : public CLI::ParseError {
 public:
  explicit ValueError(std::string message)
      : CLI::ParseError("ValueError", std::move(message), kExitUsage) {}
};

// The layout --help has always had: "  -q, --quiet" or "      --json FILE" in a 30-column field
// (a longer one on a line of its own), then the help; every option in declaration order.
class HelpFormatter : public CLI::Formatter {
 public:
  explicit HelpFormatter(std::string usage) : usage_(std::move(usage)) { column_width(30); }

  std::string make_help(const CLI::App* app, std::string /*name*/,
                        CLI::AppFormatMode /*mode*/) const override {
    std::string text =
        absl::StrCat("Usage: ", usage_, "\n\n", app->get_description(), ".\n\nOptions:\n");
    for (const CLI::Option* opt : app->get_options()) {
      if (!opt->get_positional()) absl::StrAppend(&text, make_option(opt, false));
    }
    return text;
  }
  std::string make_option_name(const CLI::Option* opt, bool /*is_positional*/) const override {
    const std::vector<std::string>& shorts = opt->get_snames();
    return absl::StrCat(shorts.empty() ? "    " : absl::StrCat("-", shorts[0], ", "), "--",
                        opt->get_lnames().front());
  }
  std::string make_option_opts(const CLI::Option* opt) const override {
    return IsFlag(*opt) ? "" : absl::StrCat(" ", opt->get_type_name());
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    // Said once, here: a help text that also says it would print it twice.
    const std::string& desc = opt->get_description();
    const bool said = absl::StrContains(desc, "(repeatable");
    return absl::StrCat(desc, IsRepeatable(*opt) && !said ? " (repeatable)" : "");
  }

  static bool IsFlag(const CLI::Option& opt) { return opt.get_items_expected_max() == 0; }
  static bool IsRepeatable(const CLI::Option& opt) { return opt.get_items_expected_max() > 1; }

 private:
  std::string usage_;
};

// "--max-nodes" from CLI11's "--max-nodes" or "-o,--output": the name messages quote.
std::string LongName(const std::string& names) {
  for (absl::string_view name : absl::StrSplit(names, ',')) {
    if (absl::StartsWith(name, "--")) return std::string(name);
  }
  return names;
}

// Adds an option taking one value, handed to `set` (which may refuse it with a ValueError).
// Given twice is refused by Parse, so CLI11 only has to keep one.
void AddValue(CLI::App* app, const std::string& names, const std::string& metavar,
              const std::string& help, std::function<void(const std::string&)> set) {
  app->add_option_function<std::string>(names, std::move(set), help)
      ->type_name(metavar)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// absl rather than CLI11's conversions: decimal only, and a value out of range is refused.
int64_t ToInt(const std::string& name, const std::string& text) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    throw ValueError(absl::StrCat("option '", name, "': '", text, "' is not an integer"));
  }
  return value;
}

double ToDouble(const std::string& name, const std::string& text) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value)) {
    throw ValueError(absl::StrCat("option '", name, "': '", text, "' is not a number"));
  }
  return value;
}

// CLI11's words for a missing value ("--json: 1 required FILE missing") or a flag given one
// ("quiet was given a disallowed flag override") in ours; anything else as CLI11 says it.
std::string ArgumentMismatchMessage(const CLI::App& app, const std::string& what) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_positional()) continue;
    const std::string name = opt->get_name();
    if (absl::StartsWith(what, absl::StrCat(name, ":"))) {
      return absl::StrCat("option '", name, "' needs a value (", opt->get_type_name(), ")");
    }
    for (const std::string& long_name : opt->get_lnames()) {
      if (absl::StartsWith(what, absl::StrCat(long_name, " was given a disallowed flag"))) {
        return absl::StrCat("option '", name, "' takes no value");
      }
    }
  }
  return what;
}

}  // namespace

CommandLine::CommandLine(std::string usage, std::string summary)
    : app_(std::make_unique<CLI::App>(std::move(summary))) {
  app_->formatter(std::make_shared<HelpFormatter>(std::move(usage)));
  // -h/--help is declared by the caller like any flag, last in --help's list.
  app_->set_help_flag();
  // Unknown options are collected rather than thrown, to be reported in our words.
  app_->allow_extras();
}

CommandLine::~CommandLine() = default;

void CommandLine::Flag(const std::string& names, const std::string& help, bool* value) {
  // --quiet=1 and the like are refused; CLI11 lets the flag's own value (--quiet=true) through.
  app_->add_flag(names, *value, help)->disable_flag_override();
}

void CommandLine::Option(const std::string& names, const std::string& metavar,
                         const std::string& help, std::string* value) {
  AddValue(app_.get(), names, metavar, help, [value](const std::string& v) { *value = v; });
}

void CommandLine::Option(const std::string& names, const std::string& metavar,
                         const std::string& help, std::optional<std::string>* value) {
  AddValue(app_.get(), names, metavar, help, [value](const std::string& v) { *value = v; });
}

void CommandLine::Option(const std::string& names, const std::string& metavar,
                         const std::string& help, int64_t* value) {
  AddValue(app_.get(), names, metavar, help,
           [value, name = LongName(names)](const std::string& v) { *value = ToInt(name, v); });
}

void CommandLine::Option(const std::string& names, const std::string& metavar,
                         const std::string& help, std::optional<int64_t>* value) {
  AddValue(app_.get(), names, metavar, help,
           [value, name = LongName(names)](const std::string& v) { *value = ToInt(name, v); });
}

void CommandLine::Option(const std::string& names, const std::string& metavar,
                         const std::string& help, std::optional<double>* value) {
  AddValue(app_.get(), names, metavar, help,
           [value, name = LongName(names)](const std::string& v) { *value = ToDouble(name, v); });
}

void CommandLine::Repeated(const std::string& names, const std::string& metavar,
                           const std::string& help, std::vector<std::string>* values) {
  // One value per occurrence: CLI11 would otherwise let --dim take the MODEL after it too.
  app_->add_option(names, *values, help)->type_name(metavar)->allow_extra_args(false);
}

absl::Status CommandLine::Parse(const std::vector<std::string>& args,
                                std::vector<std::string>* positionals) {
  app_->add_option("positionals", *positionals);
  // CLI11 takes its arguments from the back.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  std::optional<std::string> failure;
  try {
    app_->parse(reversed);
  } catch (const ValueError& e) {
    failure = e.what();
  } catch (const CLI::ArgumentMismatch& e) {
    failure = ArgumentMismatchMessage(*app_, e.what());
  } catch (const CLI::ParseError& e) {
    failure = e.what();
  }
  // An unknown or repeated option is reported before a failure: CLI11 stops at a missing value
  // (so both were earlier on the command line) and converts values only after the whole line.
  for (const std::string& arg : app_->remaining()) {
    if (arg == "--") continue;  // CLI11 keeps the marker that ended the options
    return absl::InvalidArgumentError(absl::StrCat("unknown option '", arg, "'"));
  }
  std::map<const CLI::Option*, int> seen;
  for (const CLI::Option* opt : app_->parse_order()) {
    if (++seen[opt] == 2 && !HelpFormatter::IsRepeatable(*opt)) {
      return absl::InvalidArgumentError(absl::StrCat("option '", opt->get_name(), "' given twice"));
    }
  }
  if (failure.has_value()) return absl::InvalidArgumentError(*failure);
  return absl::OkStatus();
}

std::string CommandLine::Help() const { return app_->help(); }

int LoadExitCode(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnimplemented ? kExitUnsupported : kExitBadModel;
}

std::string TerminalSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
      absl::StrAppend(&out, "\\u00", absl::Hex(next, absl::kZeroPad2));
      ++i;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

// Every line leaves in one write, stdout flushed first: in a log that merges stdout and
// stderr (CI), lines interleave whole, never cut mid-word by the other stream (issue 31).
void PrintError(const std::string& message) {
  const std::string line =
      absl::StrCat(TerminalSafe(absl::StrReplaceAll(message, {{"\n", " "}})), "\n");
  std::fflush(stdout);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void PrintOut(std::string_view text, bool to_stderr) {
  const std::string safe = TerminalSafe(text);
  FILE* stream = to_stderr ? stderr : stdout;
  if (to_stderr) std::fflush(stdout);
  std::string_view rest = safe;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const size_t n = end == std::string_view::npos ? rest.size() : end + 1;
    std::fwrite(rest.data(), 1, n, stream);
    std::fflush(stream);
    rest.remove_prefix(n);
  }
}

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace onnx_bcast::tools
