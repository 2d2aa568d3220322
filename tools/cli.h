// Command-line plumbing shared by the onnx-bcast subcommands: a subcommand's command line
// (parsed by CLI11, which also lists the options for --help), exit codes and one-line error
// reporting.
#ifndef ONNX_BCAST_TOOLS_CLI_H_
#define ONNX_BCAST_TOOLS_CLI_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace onnx_bcast::tools {

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

/// One subcommand's command line. Options are declared in the order --help lists them, each
/// bound to a typed field that parsing fills; `names` are CLI11's ("-o,--output", "--strict"),
/// always with a long name (messages and --help quote it).
/// CLI11 splits the arguments; numbers are converted with absl instead of CLI11's strtoll
/// (base 0 reads "010" as 8, an overflow is clamped silently).
class CommandLine {
 public:
  /// `usage` and `summary` open the --help text.
  CommandLine(std::string usage, std::string summary);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  /// A flag: given twice, or with a value (--quiet=1), is a usage error. CLI11 lets
  /// --quiet=true through.
  void Flag(const std::string& names, const std::string& help, bool* value);
  /// An option taking one value; given twice is a usage error. `metavar` names the value in
  /// --help and in the error when it is missing. An optional is set only when given.
  void Option(const std::string& names, const std::string& metavar, const std::string& help,
              std::string* value);
  void Option(const std::string& names, const std::string& metavar, const std::string& help,
              std::optional<std::string>* value);
  void Option(const std::string& names, const std::string& metavar, const std::string& help,
              int64_t* value);
  void Option(const std::string& names, const std::string& metavar, const std::string& help,
              std::optional<int64_t>* value);
  void Option(const std::string& names, const std::string& metavar, const std::string& help,
              std::optional<double>* value);
  /// A repeatable option: every occurrence takes one value.
  void Repeated(const std::string& names, const std::string& metavar, const std::string& help,
                std::vector<std::string>* values);

  /// Parses `args` (what follows the subcommand's name) into the bound fields; the other
  /// arguments, '-' included and everything after "--", go to `positionals` in order. A usage
  /// error names the offending argument in one line. Called once.
  absl::Status Parse(const std::vector<std::string>& args, std::vector<std::string>* positionals);

  /// The --help text: usage, summary, then every option with its metavar and help.
  std::string Help() const;

 private:
  std::unique_ptr<CLI::App> app_;
};

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

}  // namespace onnx_bcast::tools

#endif  // ONNX_BCAST_TOOLS_CLI_H_
