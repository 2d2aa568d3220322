#include "tools/common_options.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "driver/driver.h"
#include "runtime/memory_budget.h"
#include "tools/progress_display.h"

namespace onnx_bcast::tools {

// Progress (step lines with timings) is shown on stderr when it is a terminal; these turn it
// off, or on for a log. check's --quiet has its own entry: it also shortens the report.
void DeclareQuiet(CommandLine* cl, CommonArgs* a) {
  cl->Flag("-q,--quiet", "no progress display on stderr", &a->quiet);
}
void DeclareProgress(CommandLine* cl, CommonArgs* a) {
  cl->Flag("--progress", "show progress on stderr even when it is not a terminal", &a->progress);
}

// Resource limits every subcommand accepts (hostile models are refused with exit 2 before
// they can exhaust memory); defaults admit every real model. Then --help, last in the list.
void DeclareShared(CommandLine* cl, CommonArgs* a) {
  cl->Option("--max-file-bytes", "N", "refuse model files larger than N bytes (default 2 GiB - 1)",
             &a->max_file_bytes);
  cl->Option("--max-nodes", "N", "refuse models with more than N nodes (default 20000000)",
             &a->max_nodes);
  cl->Option("--max-tensor-elements", "N",
             "refuse tensors (declared or computed) with more than N elements (default 2^32 at "
             "run)",
             &a->max_tensor_elements);
  cl->Option("--max-nesting", "N", "refuse messages nested deeper than N (default 100)",
             &a->max_nesting);
  cl->Option("--max-function-inlines", "N",
             "refuse models whose function calls expand to more than N inlined calls (default "
             "100000)",
             &a->max_function_inlines);
  cl->Flag("-h,--help", "show this help", &a->help);
}

// --max-memory: the bytes the executions of run and verify may hold at once, checked before
// each intermediate is allocated and before a Loop or Scan stacks its scan outputs.
void DeclareExecutionLimits(CommandLine* cl, std::optional<double>* timeout,
                            std::optional<int64_t>* max_memory) {
  cl->Option("--timeout", "SECONDS",
             "stop with exit 2 after SECONDS of execution (default 600, 0: no limit)", timeout);
  cl->Option("--max-memory", "BYTES",
             "stop with exit 2 before the run holds more than BYTES (default a quarter of "
             "physical memory)",
             max_memory);
}

int Usage(const Command& cmd, const std::string& message) {
  PrintError(absl::StrCat("onnx-bcast ", cmd.name, ": ", message, " (see 'onnx-bcast help ",
                          cmd.name, "')"));
  return kExitUsage;
}

absl::StatusOr<proto::Limits> LimitsFrom(const CommonArgs& args) {
  proto::Limits limits;
  limits.max_file_bytes = args.max_file_bytes.value_or(limits.max_file_bytes);
  limits.max_nodes = args.max_nodes.value_or(limits.max_nodes);
  limits.max_tensor_elements = args.max_tensor_elements.value_or(limits.max_tensor_elements);
  limits.max_function_inlines = args.max_function_inlines.value_or(limits.max_function_inlines);
  const int64_t nesting = args.max_nesting.value_or(limits.max_nesting);
  if (limits.max_file_bytes <= 0 || limits.max_nodes <= 0 || limits.max_tensor_elements <= 0 ||
      limits.max_function_inlines <= 0 || nesting <= 0 || nesting > 10000) {
    return absl::InvalidArgumentError("limits must be positive (and --max-nesting <= 10000)");
  }
  limits.max_nesting = static_cast<int>(nesting);
  return limits;
}

absl::StatusOr<proto::Model> Load(const std::string& path, const CommonArgs& args,
                                  support::ProgressSink* progress) {
  // Limits validated in ParseAndRun before any command runs.
  return driver::Load(path, *LimitsFrom(args), progress);
}

std::unique_ptr<support::ProgressSink> MakeProgress(const CommonArgs& args) {
  return tools::MakeProgress(args.quiet, args.progress);
}

// --timeout: wall-clock seconds for the executions of run and verify; a Loop with a huge trip
// count or a kernel that would run for hours ends with exit 2 instead of hanging CI.
constexpr double kDefaultTimeoutSeconds = 600;
absl::StatusOr<double> TimeoutFrom(const std::optional<double>& timeout) {
  const double seconds = timeout.value_or(kDefaultTimeoutSeconds);
  if (!(seconds >= 0) || seconds > 1e9) {
    return absl::InvalidArgumentError("--timeout must be between 0 (no limit) and 1e9 seconds");
  }
  return seconds;
}

absl::StatusOr<int64_t> MaxMemoryFrom(const std::optional<int64_t>& max_memory) {
  const int64_t bytes = max_memory.value_or(runtime::DefaultMaxMemoryBytes());
  if (bytes <= 0) return absl::InvalidArgumentError("--max-memory must be positive");
  return bytes;
}

// A malformed --dim is a usage error whatever the model. The names are checked against the
// model's symbols once it is analyzed.
absl::Status ParseDimSpecs(const std::vector<std::string>& specs,
                           std::map<std::string, int64_t>* dims) {
  for (const std::string& list : specs) {
    for (absl::string_view spec : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
      std::pair<std::string, std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
      absl::StripAsciiWhitespace(&kv.first);
      absl::StripAsciiWhitespace(&kv.second);
      int64_t n = 0;
      if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &n) || n < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("--dim expects SYMBOL=N with N >= 1, got '", spec, "'"));
      }
      if (dims->count(kv.first) > 0 && (*dims)[kv.first] != n) {
        return absl::InvalidArgumentError(absl::StrCat("--dim ", kv.first, " is given twice"));
      }
      (*dims)[kv.first] = n;
    }
  }
  return absl::OkStatus();
}

void DeclareInputRange(CommandLine* cl, std::vector<std::string>* specs, const char* where) {
  cl->Repeated("--input-range", "NAME=LO:HI",
               absl::StrCat("values of input NAME's random elements ", where,
                            ": floats in [LO, HI], integers and bools whole numbers in it "
                            "(mask=0:1 is 0s and 1s); LO:HI:int gives a float input whole "
                            "numbers too"),
               specs);
}

// A malformed range is a usage error whatever the model; the names are checked against the
// model's inputs once it is read.
absl::Status ParseInputRanges(const std::vector<std::string>& specs,
                              std::map<std::string, runtime::ValueRange>* ranges) {
  for (const std::string& spec : specs) {
    std::pair<std::string, std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    absl::StatusOr<runtime::ValueRange> range = runtime::ParseValueRange(kv.second);
    if (kv.first.empty() || !range.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-range expects NAME=LO:HI, got '", spec, "'",
                       range.ok() ? "" : absl::StrCat(": ", range.status().message())));
    }
    if (ranges->count(kv.first) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-range ", kv.first, " is given twice"));
    }
    (*ranges)[kv.first] = *range;
  }
  return absl::OkStatus();
}

std::string InputRangeWords(absl::string_view message) {
  if (absl::ConsumePrefix(&message, "input range ")) return absl::StrCat("--input-range ", message);
  return absl::StrCat("--input-range: ", message);
}

namespace {

// The command boundary: an allocation that fails (the allocator throws instead of aborting,
// see main) or a thread that cannot start ends the command with exit 2 and one line naming
// the model, never a signal.
int RunGuarded(const Command& cmd, const CommonArgs& parsed, const std::function<int()>& run) {
  const std::string subject =
      parsed.positionals.empty() ? absl::StrCat("onnx-bcast ", cmd.name) : parsed.positionals[0];
  try {
    const int code = run();
    // A report that did not reach stdout (a full disk, a closed pipe) is not a success.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      PrintError(absl::StrCat(subject, ": cannot write to stdout: ", std::strerror(errno)));
      return code == kExitOk || code == kExitFound ? kExitCannotWrite : code;
    }
    return code;
  } catch (const std::bad_alloc&) {
    PrintError(absl::StrCat(subject,
                            ": out of memory (the model needs more memory than the "
                            "process may use; see --max-tensor-elements)"));
  } catch (const std::system_error& e) {
    PrintError(absl::StrCat(subject, ": out of resources: ", e.what()));
  } catch (const std::exception& e) {
    PrintError(absl::StrCat(subject, ": internal error: ", e.what()));
  }
  return kExitBadModel;
}

}  // namespace

int ParseAndRun(const Command& cmd, CommandLine* command_line, CommonArgs* parsed,
                const std::vector<std::string>& args, const std::function<int()>& run) {
  if (absl::Status s = command_line->Parse(args, &parsed->positionals); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  if (absl::StatusOr<proto::Limits> limits = LimitsFrom(*parsed); !limits.ok()) {
    return Usage(cmd, std::string(limits.status().message()));
  }
  if (parsed->help) {
    std::printf("%s", command_line->Help().c_str());
    return kExitOk;
  }
  if (parsed->quiet && parsed->progress) {
    return Usage(cmd, "--quiet and --progress exclude each other");
  }
  return RunGuarded(cmd, *parsed, run);
}

}  // namespace onnx_bcast::tools
