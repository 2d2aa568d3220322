// Command-line plumbing shared by the onnx-bcast subcommands: option tables (which also drive
// --help), parsing, exit codes and one-line error reporting.
#ifndef ONNX_BCAST_TOOLS_CLI_H_
#define ONNX_BCAST_TOOLS_CLI_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace onnx_bcast::cli {

/// Exit codes, identical for every subcommand.
enum ExitCode : int {
  kExitOk = 0,
  kExitFound = 1,        ///< a broadcast error (check) or a numeric mismatch (run, verify)
  kExitBadModel = 2,     ///< the model cannot be loaded or is invalid
  kExitUnsupported = 3,  ///< the model needs something not supported
  kExitCannotWrite = 4,  ///< the output cannot be written
  kExitUsage = 64,       ///< usage error
  kExitBadInput = 65,    ///< run: a given input does not fit the model's declared type or shape
};

/// One option of a subcommand. `metavar` is null for flags that take no value.
struct OptionSpec {
  const char* name;  ///< long name without dashes, e.g. "output"
  char short_name;   ///< e.g. 'o', or 0
  const char* metavar;
  bool repeatable;
  const char* help;
};

/// Parsed command line of one subcommand.
struct ParsedArgs {
  std::vector<std::string> positionals;
  std::map<std::string, std::vector<std::string>> values;  ///< flags map to {"1"}

  bool Has(const std::string& name) const { return values.count(name) > 0; }
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  const std::vector<std::string>& GetAll(const std::string& name) const;
};

/// Parses `args` against `options`; errors are usage errors naming the offending argument.
absl::Status ParseArgs(const std::vector<std::string>& args,
                       const std::vector<OptionSpec>& options, ParsedArgs* out);

/// Formats the option table for --help.
std::string FormatOptions(const std::vector<OptionSpec>& options);

/// Parses a number option; usage error naming the option when it is not one.
absl::Status ParseDoubleOption(const ParsedArgs& args, const std::string& name, double* value);
absl::Status ParseIntOption(const ParsedArgs& args, const std::string& name, int64_t* value);

/// Maps a load-phase status to its exit code: Unimplemented -> 3, anything else -> 2.
int LoadExitCode(const absl::Status& status);

/// `text` with every control character a terminal would act on made visible: C0 controls but
/// newline and tab, DEL, and UTF-8-encoded C1 controls (U+0080..U+009F, e.g. CSI) become
/// \xHH or \u00HH. A model's names are data: a carriage return or an ANSI escape in a name
/// must not rewrite what the user sees. Every printer of the CLI goes through it.
std::string TerminalSafe(std::string_view text);

/// Prints one line to stderr (newlines folded, TerminalSafe).
void PrintError(const std::string& message);

/// Writes `text` to stdout, TerminalSafe; to stderr with `to_stderr` (when stdout carries the
/// machine-readable output: `--json -`, `--report -`, `-o -`).
void PrintOut(std::string_view text, bool to_stderr = false);

/// The stdin convention: a MODEL of "-" is read from stdin, and "-" as an output path is stdout.
inline constexpr char kStdio[] = "-";

/// True when stderr is a terminal (progress output is only printed then).
bool StderrIsTerminal();

}  // namespace onnx_bcast::cli

#endif  // ONNX_BCAST_TOOLS_CLI_H_
