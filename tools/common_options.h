// What every onnx-bcast subcommand shares: the command table's entry, the options every command
// accepts (limits, --help, progress), their checks, and the one-line usage error. Each
// subcommand (tools/cmd_*.cc) declares its own options beside its code and calls the driver.
#ifndef ONNX_BCAST_TOOLS_COMMON_OPTIONS_H_
#define ONNX_BCAST_TOOLS_COMMON_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/model_io.h"
#include "runtime/exec/random_inputs.h"
#include "support/progress.h"
#include "tools/cli.h"

namespace onnx_bcast::tools {

/// One subcommand: its names for --help, and how it runs a command line.
struct Command {
  const char* name;
  const char* usage;
  const char* summary;
  /// Parses `args` (what follows the command's name) and runs the command: the exit code.
  int (*main)(const Command& self, const std::vector<std::string>& args);
  /// The command's --help text (its own options, then the shared ones).
  std::string (*help)(const Command& self);
};

/// The subcommands, one file each (tools/cmd_<name>.cc), in the order --help lists them.
const Command& CheckCommand();
const Command& OptCommand();
const Command& RunCommand();
const Command& VerifyCommand();
const Command& ProbeEngineCommand();

/// What every command line can say, filled by CommandLine::Parse. Each command's own options
/// extend it (CheckArgs, OptArgs, ...); a command declares, and so accepts, only its own.
struct CommonArgs {
  std::vector<std::string> positionals;  // MODEL, or ORIGINAL and REWRITTEN
  bool help = false;
  bool quiet = false;
  bool progress = false;
  // Resource limits, every command; unset ones keep proto::Limits' defaults (see LimitsFrom).
  std::optional<int64_t> max_file_bytes;
  std::optional<int64_t> max_nodes;
  std::optional<int64_t> max_tensor_elements;
  std::optional<int64_t> max_nesting;
  std::optional<int64_t> max_function_inlines;
};

/// -q,--quiet: no progress display (check declares its own: it also shortens the report).
void DeclareQuiet(CommandLine* cl, CommonArgs* a);
/// --progress: progress on stderr even when it is not a terminal.
void DeclareProgress(CommandLine* cl, CommonArgs* a);
/// The resource limits every subcommand accepts, then --help, last in the list.
void DeclareShared(CommandLine* cl, CommonArgs* a);
/// --timeout and --max-memory (run, verify: the commands that execute models).
void DeclareExecutionLimits(CommandLine* cl, std::optional<double>* timeout,
                            std::optional<int64_t>* max_memory);

/// Upper bound of --threads, --jobs and --parallel (one OS thread or child each): far above
/// any useful value, far below what exhausts the process.
inline constexpr int64_t kMaxThreads = 1024;

/// Prints "onnx-bcast CMD: MESSAGE (see 'onnx-bcast help CMD')"; returns kExitUsage.
int Usage(const Command& cmd, const std::string& message);

/// The limits given on the command line; a usage error for a non-positive value.
absl::StatusOr<proto::Limits> LimitsFrom(const CommonArgs& args);

/// driver::Load under the command line's limits (validated before any command runs).
absl::StatusOr<proto::Model> Load(const std::string& path, const CommonArgs& args,
                                  support::ProgressSink* progress);

/// The progress sink of --quiet and --progress (null: none).
std::unique_ptr<support::ProgressSink> MakeProgress(const CommonArgs& args);

/// --timeout (run, verify): wall-clock seconds for the executions, default 600.
absl::StatusOr<double> TimeoutFrom(const std::optional<double>& timeout);
/// --max-memory (run, verify): default a quarter of physical memory.
absl::StatusOr<int64_t> MaxMemoryFrom(const std::optional<int64_t>& max_memory);

/// --dim SYMBOL=N values (check, opt, verify), each flag one binding or a comma list of them
/// ("H=640,W=640"), parsed before the model is read.
absl::Status ParseDimSpecs(const std::vector<std::string>& specs,
                           std::map<std::string, int64_t>* dims);

/// --input-range NAME=LO:HI (run, verify, opt): the values of one input's random elements
/// (runtime::ValueRange; repeatable, one input per flag). The names are checked against the model's
/// inputs once it is read.
void DeclareInputRange(CommandLine* cl, std::vector<std::string>* specs, const char* where);
absl::Status ParseInputRanges(const std::vector<std::string>& specs,
                              std::map<std::string, runtime::ValueRange>* ranges);
/// A message of driver::CheckInputRanges in the command line's words ("--input-range mask=0:1:
/// the model has no input 'mask' ...").
std::string InputRangeWords(absl::string_view message);

/// After the options are declared: parses `args`, checks what every command checks (limits,
/// --help, --quiet with --progress) and calls `run` at the command boundary, where an
/// exception or a failed stdout ends the command with one line and its exit code.
int ParseAndRun(const Command& cmd, CommandLine* command_line, CommonArgs* parsed,
                const std::vector<std::string>& args, const std::function<int()>& run);

/// Command::main for a command whose options are `A`, declared by `Declare`, run by `Run`.
template <class A, void (*Declare)(CommandLine*, A*), int (*Run)(const Command&, const A&)>
int CommandMain(const Command& cmd, const std::vector<std::string>& args) {
  A parsed;
  CommandLine command_line(cmd.usage, cmd.summary);
  Declare(&command_line, &parsed);
  DeclareShared(&command_line, &parsed);
  return ParseAndRun(cmd, &command_line, &parsed, args, [&] { return Run(cmd, parsed); });
}

/// Command::help for the same command.
template <class A, void (*Declare)(CommandLine*, A*)>
std::string CommandHelp(const Command& cmd) {
  A ignored;  // only the declarations are needed
  CommandLine command_line(cmd.usage, cmd.summary);
  Declare(&command_line, &ignored);
  DeclareShared(&command_line, &ignored);
  return command_line.Help();
}

}  // namespace onnx_bcast::tools

#endif  // ONNX_BCAST_TOOLS_COMMON_OPTIONS_H_
