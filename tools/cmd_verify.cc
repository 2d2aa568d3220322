// `onnx-bcast verify ORIGINAL REWRITTEN`: proves numerically that two models compute the same
// outputs (driver::Verify), and writes the result as text and JSON.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "driver/engine_step.h"
#include "driver/run.h"
#include "driver/verify.h"
#include "tools/common_options.h"
#include "tools/outputs.h"
#include "verify/verify.h"

namespace onnx_bcast::tools {
namespace {

// Upper bound of --samples (all held at once): far above any useful value, far below what
// exhausts the process.
constexpr int64_t kMaxSamples = 100000;

struct VerifyArgs : CommonArgs {
  std::vector<std::string> test_data;
  int64_t seed = 0;
  std::vector<std::string> input_ranges;  // NAME=LO:HI
  std::vector<std::string> dims;
  int64_t samples = 3;
  bool edge_cases = false;
  std::optional<double> rtol;
  std::optional<double> atol;
  bool local = false;
  std::optional<std::string> report;  // opt's report, read
  std::optional<std::string> json;
  int64_t threads = 1;
  std::optional<double> timeout;
  std::optional<int64_t> max_memory;
  std::optional<std::string> engine;
};

void DeclareVerify(CommandLine* cl, VerifyArgs* a) {
  cl->Repeated("--test-data", "DIR", "use these inputs instead of random ones", &a->test_data);
  cl->Option("--seed", "S", "seed for random inputs (default 0)", &a->seed);
  DeclareInputRange(cl, &a->input_ranges, "in every random sample");
  cl->Repeated("--dim", "SYMBOL=N",
               "bind a symbolic dim in every sample (or several: N=1,T=4); dims one model "
               "declares as numbers are bound without it",
               &a->dims);
  cl->Option("--samples", "K",
             "random input sets (default 3): symbols 1 where the broadcast condition allows, "
             "then distinct values > 1 that satisfy it",
             &a->samples);
  cl->Flag("--edge-cases",
           "add a sample with every symbol bound to 0 (empty tensors) and one outside the "
           "broadcast condition, where both models must fail",
           &a->edge_cases);
  cl->Option("--rtol", "R",
             "relative tolerance (default: bit-exact when only exact ops changed, else 1e-3)",
             &a->rtol);
  cl->Option("--atol", "A", "absolute tolerance (default 1e-7)", &a->atol);
  cl->Flag("--local", "check node by node instead of running whole models", &a->local);
  cl->Option("--report", "FILE",
             "the opt --report of the rewrite, to name the pass (an unreadable one is an error)",
             &a->report);
  cl->Option("--json", "FILE",
             "write the result as JSON to FILE ('-': stdout, the text report then goes to "
             "stderr)",
             &a->json);
  cl->Option("--threads", "N", "threads per kernel (default 1)", &a->threads);
  cl->Option("--engine", "NAME",
             "run MODEL (or REWRITTEN) on the engine NAME (opencv, ncnn where built) and name "
             "the first node whose output differs there from our float64 reference of MODEL "
             "(or ORIGINAL), under the error model: engine bisection",
             &a->engine);
  DeclareExecutionLimits(cl, &a->timeout, &a->max_memory);
  DeclareQuiet(cl, a);
  DeclareProgress(cl, a);
}

// The verification the command line asks for, checked before a model is read.
std::optional<int> VerifyOptionsFrom(const Command& cmd, const VerifyArgs& args,
                                     verify::VerifyOptions* options, double* timeout_seconds) {
  options->test_data = args.test_data;
  options->edge_cases = args.edge_cases;
  options->local = args.local;
  options->report_path = args.report.value_or("");
  // Bounded: every sample is held at once, and a value past INT_MAX must not wrap.
  if (args.samples < 1 || args.samples > kMaxSamples || args.threads < 1 ||
      args.threads > kMaxThreads) {
    return Usage(cmd, absl::StrCat("--samples must be between 1 and ", kMaxSamples,
                                   ", --threads between 1 and ", kMaxThreads));
  }
  const absl::StatusOr<double> timeout = TimeoutFrom(args.timeout);
  if (!timeout.ok()) return Usage(cmd, std::string(timeout.status().message()));
  *timeout_seconds = *timeout;
  const absl::StatusOr<int64_t> max_memory = MaxMemoryFrom(args.max_memory);
  if (!max_memory.ok()) return Usage(cmd, std::string(max_memory.status().message()));
  options->max_memory_bytes = *max_memory;
  options->seed = static_cast<uint64_t>(args.seed);
  options->samples = static_cast<int>(args.samples);
  options->threads = static_cast<int>(args.threads);
  if (args.rtol.has_value() || args.atol.has_value()) {
    options->tolerance =
        runtime::Tolerance{args.rtol.value_or(1e-3), args.atol.value_or(1e-7), /*exact=*/false};
  }
  if (args.positionals[0] == kStdio && args.positionals[1] == kStdio) {
    return Usage(cmd, "only one model can come from stdin ('-')");
  }
  if (absl::Status s = ParseDimSpecs(args.dims, &options->dims); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  if (absl::Status s = ParseInputRanges(args.input_ranges, &options->ranges); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  return std::nullopt;
}

// --json: verify's only output, written (and committed) after every run has finished. Neither
// model (nor their external data, nor the report) may be replaced by it.
bool WriteVerifyJson(const VerifyArgs& args, const std::vector<proto::Model>& models,
                     const verify::VerifyResult& result) {
  absl::StatusOr<proto::InputFiles> inputs = proto::InputFilesOf(models[0]);
  if (inputs.ok()) {
    absl::StatusOr<proto::InputFiles> second = proto::InputFilesOf(models[1]);
    if (second.ok()) {
      inputs->AddAll(*second);
      if (args.report.has_value()) inputs->AddPath(*args.report, "the report");
    } else {
      inputs = second.status();
    }
  }
  return SideOutput().Write(
      *args.json, verify::FormatVerifyJson(result, models[0].path, models[1].path), inputs);
}

// Every positional model into `models`; the exit code (after printing why) of the first that
// does not load.
std::optional<int> LoadEach(const VerifyArgs& args, support::ProgressSink* progress,
                            std::vector<proto::Model>* models) {
  for (const std::string& path : args.positionals) {
    absl::StatusOr<proto::Model> model = Load(path, args, progress);
    if (!model.ok()) {
      PrintError(std::string(model.status().message()));
      return LoadExitCode(model.status());
    }
    models->push_back(*std::move(model));
  }
  return std::nullopt;
}

// verify MODEL --engine NAME, or ORIGINAL REWRITTEN --engine NAME: engine bisection.
int RunOnEngine(const Command& cmd, const VerifyArgs& args) {
  std::map<std::string, int64_t> dims;
  if (absl::Status s = ParseDimSpecs(args.dims, &dims); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  std::map<std::string, runtime::ValueRange> ranges;
  if (absl::Status s = ParseInputRanges(args.input_ranges, &ranges); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  const std::unique_ptr<support::ProgressSink> progress = MakeProgress(args);
  std::vector<proto::Model> models;
  if (std::optional<int> exit = LoadEach(args, progress.get(), &models)) return *exit;
  const proto::Model& reference = models.front();
  const proto::Model& on_engine = models.back();
  if (absl::Status s = driver::CheckInputRanges(reference.proto.graph(), ranges); !s.ok()) {
    return Usage(cmd, absl::StrCat(reference.path, ": ", InputRangeWords(s.message())));
  }
  std::string at;
  absl::StatusOr<engines::EngineBisection> b =
      driver::BisectOnNamedEngine(reference, on_engine, *args.engine, dims, &at, ranges);
  if (!b.ok()) {
    if (b.status().code() == absl::StatusCode::kNotFound) {
      return Usage(cmd, absl::StrCat("--engine: ", b.status().message()));
    }
    PrintError(absl::StrCat(on_engine.path, ": ", b.status().message()));
    return LoadExitCode(b.status());
  }
  const bool ok = b->outcome == "ran" && !b->divergence.has_value();
  PrintOut(absl::StrCat(on_engine.path, " on ", *args.engine,
                        at.empty() ? "" : absl::StrCat(" (at ", at, ")"), ": ",
                        ok ? "runs and matches; " : "", b->Summary(), "\n"),
           false);
  return ok ? kExitOk : kExitFound;
}

int RunVerify(const Command& cmd, const VerifyArgs& args) {
  if (args.engine.has_value()) {
    if (args.positionals.empty() || args.positionals.size() > 2) {
      return Usage(cmd, "--engine expects MODEL, or ORIGINAL and REWRITTEN");
    }
    return RunOnEngine(cmd, args);
  }
  if (args.positionals.size() != 2) return Usage(cmd, "expects ORIGINAL and REWRITTEN");
  verify::VerifyOptions options;
  double timeout = 0;
  if (std::optional<int> exit = VerifyOptionsFrom(cmd, args, &options, &timeout)) return *exit;
  const std::unique_ptr<support::ProgressSink> progress = MakeProgress(args);
  options.progress = progress.get();
  std::vector<proto::Model> models;
  if (std::optional<int> exit = LoadEach(args, progress.get(), &models)) return *exit;
  // Ranges name the original's inputs (the random values both models are fed).
  if (absl::Status s = driver::CheckInputRanges(models[0].proto.graph(), options.ranges); !s.ok()) {
    return Usage(cmd, absl::StrCat(models[0].path, ": ", InputRangeWords(s.message())));
  }
  // The deadline starts after loading, like run's.
  absl::StatusOr<verify::VerifyResult> result =
      driver::Verify(models[0], models[1], {std::move(options), timeout});
  if (!result.ok()) {
    // No input both models accept, a --dim that fits neither: the command line's mistake.
    if (verify::IsUsageError(result.status())) {
      return Usage(cmd, absl::StrCat(models[0].path, " vs ", models[1].path, ": ",
                                     result.status().message()));
    }
    PrintError(absl::StrCat(models[0].path, ": ", result.status().message()));
    if (verify::IsBadInputError(result.status())) return kExitBadInput;
    return LoadExitCode(result.status());
  }
  PrintOut(verify::FormatVerifyText(*result, models[0].path, models[1].path),
           /*to_stderr=*/args.json == kStdio);
  if (args.json.has_value() && !WriteVerifyJson(args, models, *result)) return kExitCannotWrite;
  return result->match ? kExitOk : kExitFound;
}

}  // namespace

const Command& VerifyCommand() {
  static const Command kCommand = {
      "verify",
      "onnx-bcast verify ORIGINAL REWRITTEN [options]   (one of them may be '-': stdin)\n"
      "       onnx-bcast verify MODEL --engine NAME [options]",
      "prove numerically that two models compute the same outputs",
      CommandMain<VerifyArgs, DeclareVerify, RunVerify>, CommandHelp<VerifyArgs, DeclareVerify>};
  return kCommand;
}

}  // namespace onnx_bcast::tools
