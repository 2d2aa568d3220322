// `onnx-bcast run MODEL`: executes the model on the reference CPU executor, on given inputs,
// test data sets or random inputs; compares with expected outputs, writes the outputs, times
// runs (--bench) and profiles them (--profile).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "driver/run.h"
#include "proto/model_io.h"
#include "proto/safe_write.h"
#include "report/report_json.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/input_check.h"
#include "runtime/exec/profile.h"
#include "runtime/exec/test_data.h"
#include "support/status_macros.h"
#include "tools/common_options.h"
#include "tools/outputs.h"
#include "verify/inputs.h"

namespace onnx_bcast::tools {
namespace {

struct RunArgs : CommonArgs {
  std::vector<std::string> test_data;
  std::vector<std::string> inputs;  // NAME=FILE.pb
  std::vector<std::string> dims;    // SYMBOL=N
  int64_t seed = 0;
  std::vector<std::string> input_ranges;  // NAME=LO:HI
  std::optional<std::string> output_dir;
  std::optional<double> rtol;
  std::optional<double> atol;
  int64_t threads = 1;
  int64_t bench = 0;
  bool profile = false;                     // per-op and per-node times as text
  std::optional<std::string> profile_json;  // the same as JSON ('-': stdout)
  std::optional<double> timeout;
  std::optional<int64_t> max_memory;  // bytes the runs may hold
};

void DeclareRun(CommandLine* cl, RunArgs* a) {
  cl->Repeated("--test-data", "DIR", "inputs input_K.pb, compared with output_K.pb", &a->test_data);
  cl->Repeated("--input", "NAME=FILE.pb", "bind one input from a TensorProto file", &a->inputs);
  cl->Repeated("--dim", "SYMBOL=N",
               "bind a symbolic dim: sizes random inputs (default 1, printed on stderr); given "
               "inputs must agree (exit 65)",
               &a->dims);
  cl->Option("--seed", "S", "seed for random inputs (default 0)", &a->seed);
  DeclareInputRange(cl, &a->input_ranges, "(default floats in [-1, 1), integers 0..9)");
  cl->Option("--output-dir", "DIR", "write outputs as output_K.pb", &a->output_dir);
  cl->Option("--rtol", "R", "relative tolerance (default 1e-3)", &a->rtol);
  cl->Option("--atol", "A", "absolute tolerance (default 1e-7)", &a->atol);
  cl->Option("--threads", "N", "threads per kernel (default 1)", &a->threads);
  cl->Option("--bench", "N", "time N runs after a warm-up, print one bench: line", &a->bench);
  // Two options rather than one with an optional value: `--profile MODEL` would take MODEL as
  // the file.
  cl->Flag("--profile",
           "print where the time goes: per op type and the slowest nodes, with shares (over the "
           "--bench runs when given, else the one run, which includes planning)",
           &a->profile);
  cl->Option("--profile-json", "FILE", "write the profile as JSON ('-': stdout)", &a->profile_json);
  DeclareExecutionLimits(cl, &a->timeout, &a->max_memory);
  DeclareQuiet(cl, a);
  DeclareProgress(cl, a);
}

// Binds --dim SYMBOL=N and --input NAME=FILE.pb; usage errors name the argument.
absl::Status ParseRunBindings(const RunArgs& args, std::map<std::string, int64_t>* dims,
                              std::vector<std::pair<std::string, std::string>>* inputs) {
  for (const std::string& list : args.dims) {
    // One binding or a comma list ("H=224,W=224"), as check and opt take them.
    for (absl::string_view spec : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
      std::pair<std::string, std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
      int64_t n = 0;
      if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &n) || n < 0) {
        return absl::InvalidArgumentError(absl::StrCat("--dim expects SYMBOL=N, got '", spec, "'"));
      }
      (*dims)[kv.first] = n;
    }
  }
  for (const std::string& spec : args.inputs) {
    std::pair<std::string, std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    if (kv.first.empty() || kv.second.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input expects NAME=FILE.pb, got '", spec, "'"));
    }
    inputs->push_back(std::move(kv));
  }
  return absl::OkStatus();
}

// Exit code of a failed run: unsupported -> 3, anything else (a bad model) -> 2. The message
// names the model first, as every other refusal does.
int RunFailure(const std::string& model_path, const absl::Status& status) {
  const absl::string_view message = status.message();
  PrintError(absl::StartsWith(message, absl::StrCat(model_path, ": "))
                 ? std::string(message)
                 : absl::StrCat(model_path, ": ", message));
  return status.code() == absl::StatusCode::kUnimplemented ? kExitUnsupported : kExitBadModel;
}

// Writes run's output files (atomically, as one set): never onto a link, a non-regular file,
// the model, its external data, an --input file or a file of a --test-data directory.
absl::Status WriteRunOutputs(const proto::Model& model, const RunArgs& args,
                             const std::vector<std::string>& dirs,
                             const std::vector<proto::OutputFile>& files) {
  BCAST_ASSIGN_OR_RETURN(proto::InputFiles inputs, proto::InputFilesOf(model));
  for (const std::string& spec : args.inputs) {
    const size_t eq = spec.find('=');
    if (eq != std::string::npos) inputs.AddPath(spec.substr(eq + 1), "an --input file");
  }
  for (const std::string& dir : args.test_data) {
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      inputs.AddPath(it->path().string(), "a --test-data file");
    }
  }
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return absl::PermissionDeniedError(absl::StrCat(dir, ": cannot create: ", ec.message()));
    }
  }
  return proto::WriteOutputFiles(files, inputs);
}

// Refuses a given input that does not fit the model's declaration (exit 65): the message names
// the model, where the input came from (a test data directory), the input and what disagrees.
int BadInput(const std::string& model_path, const std::string& source, const absl::Status& s) {
  PrintError(absl::StrCat(model_path, ": ", source.empty() ? "" : absl::StrCat(source, ": "),
                          s.message()));
  return kExitBadInput;
}

// One stderr line naming the value each symbol of the random inputs takes (a model run with
// every symbol at 1 by default may compute on nothing: say so, and how to change it).
void PrintRandomBindings(const runtime::Graph& graph, const std::set<std::string>& given,
                         const std::map<std::string, int64_t>& dim_options,
                         const std::map<std::string, int64_t>& bound) {
  std::map<std::string, std::string> shown;
  int64_t unnamed = 0;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    if (given.count(graph.inputs[i]) > 0 || !graph.input_shape_known[i]) continue;
    for (size_t k = 0; k < graph.input_shapes[i].size(); ++k) {
      if (graph.input_shapes[i][k] >= 0) continue;
      const std::string& symbol = graph.input_symbols[i][k];
      if (symbol.empty()) {
        ++unnamed;
        continue;
      }
      auto it = bound.find(symbol);
      shown[symbol] = it == bound.end()               ? "1 (default)"
                      : dim_options.count(symbol) > 0 ? absl::StrCat(it->second)
                                                      : absl::StrCat(it->second, " (as given)");
    }
  }
  if (shown.empty() && unnamed == 0) return;
  std::vector<std::string> parts;
  for (const auto& [symbol, value] : shown) parts.push_back(absl::StrCat(symbol, "=", value));
  if (unnamed > 0) parts.push_back(absl::StrCat(unnamed, " unnamed dim(s)=1 (default)"));
  PrintError(absl::StrCat("run: random inputs with ", absl::StrJoin(parts, ", "),
                          " (set with --dim NAME=VALUE)"));
}

// run --profile: the op types by total time, then the slowest nodes (at most 25). Each time is
// given twice: the median over the runs (what a typical run took: one preempted run on a
// shared machine does not move it) and the mean (the shares add up to the run with it).
std::string FormatProfileText(const runtime::RunProfile& p) {
  const double runs = static_cast<double>(std::max<int64_t>(p.runs(), 1));
  const double total_ms = p.total_seconds() * 1000 / runs;
  auto share = [&](double seconds) {
    return p.total_seconds() > 0 ? 100 * seconds / p.total_seconds() : 0.0;
  };
  std::string out = absl::StrFormat(
      "profile: %.3f ms per run (median; mean %.3f ms) over %lld run(s)%s, main-graph nodes "
      "(control flow includes its bodies)\n%-24s %6s %12s %12s %7s\n",
      p.median_run_seconds() * 1000, total_ms, static_cast<long long>(p.runs()),
      p.median_runs() < p.runs() ? absl::StrFormat(" (medians over the first %lld)",
                                                   static_cast<long long>(p.median_runs()))
                                 : "",
      "op", "nodes", "median ms", "mean ms", "share");
  for (const runtime::RunProfile::OpTime& o : p.Ops()) {
    absl::StrAppendFormat(&out, "%-24s %6lld %12.3f %12.3f %6.1f%%\n", o.op,
                          static_cast<long long>(o.nodes), o.median_seconds * 1000,
                          o.seconds * 1000 / runs, share(o.seconds));
  }
  const std::vector<runtime::RunProfile::NodeTime> nodes = p.Nodes();
  // Plan-time cost (prepared state: weights packed, primitives built), apart from run time.
  absl::StrAppendFormat(&out, "plan time: %.3f ms once (not in the run times), %.1f KiB prepared\n",
                        p.prepare_seconds() * 1000, p.prepared_bytes() / 1024.0);
  absl::StrAppendFormat(&out, "slowest nodes:\n%13s %13s %7s  %-18s %-18s %10s %-11s %s\n",
                        "median ms", "mean ms", "share", "op", "output", "plan ms", "path", "node");
  for (size_t i = 0; i < nodes.size() && i < 25; ++i) {
    const runtime::RunProfile::NodeTime& t = nodes[i];
    absl::StrAppendFormat(&out, "%10.3f ms %10.3f ms %6.1f%%  %-18s %-18s %10.3f %-11s %s\n",
                          t.median_seconds * 1000, t.seconds * 1000 / runs, share(t.seconds), t.op,
                          t.output_shape, t.prepare_seconds * 1000,
                          t.prepared.empty() ? "-" : t.prepared, t.node);
  }
  return out;
}

// run --profile-json: the same figures as data (docs/report-schema.md).
report::Json ProfileJson(const runtime::RunProfile& p) {
  const double runs = static_cast<double>(std::max<int64_t>(p.runs(), 1));
  report::Json doc;
  doc["schema_version"] = report::kReportSchemaVersion;
  doc["kind"] = "profile";
  doc["runs"] = p.runs();
  doc["ms_per_run"] = report::JsonNumber(p.total_seconds() * 1000 / runs);
  doc["median_ms_per_run"] = report::JsonNumber(p.median_run_seconds() * 1000);
  doc["median_runs"] = p.median_runs();
  auto share = [&](double seconds) {
    return report::JsonNumber(p.total_seconds() > 0 ? seconds / p.total_seconds() : 0.0);
  };
  report::Json ops = report::Json::array();
  for (const runtime::RunProfile::OpTime& o : p.Ops()) {
    ops.push_back(report::Json{{"op", o.op},
                               {"nodes", o.nodes},
                               {"ms_per_run", report::JsonNumber(o.seconds * 1000 / runs)},
                               {"median_ms_per_run", report::JsonNumber(o.median_seconds * 1000)},
                               {"share", share(o.seconds)}});
  }
  doc["ops"] = std::move(ops);
  report::Json nodes = report::Json::array();
  for (const runtime::RunProfile::NodeTime& t : p.Nodes()) {
    nodes.push_back(report::Json{{"node", t.node},
                                 {"op", t.op},
                                 {"output_shape", t.output_shape},
                                 {"ms_per_run", report::JsonNumber(t.seconds * 1000 / runs)},
                                 {"median_ms_per_run", report::JsonNumber(t.median_seconds * 1000)},
                                 {"share", share(t.seconds)},
                                 {"plan_ms", report::JsonNumber(t.prepare_seconds * 1000)},
                                 {"prepared_bytes", t.prepared_bytes},
                                 {"path", t.prepared}});
  }
  doc["nodes"] = std::move(nodes);
  return doc;
}

// One run command: the options checked, the executor prepared, the inputs read and checked,
// then each job run in turn (a test data set, or random inputs), --bench, and the outputs. A
// step that ends the command returns its exit code.
class ModelRun {
 public:
  ModelRun(const Command& cmd, const RunArgs& args) : cmd_(cmd), args_(args) {}
  int Run();

 private:
  // One run per test data set, or one on random inputs.
  struct Job {
    std::string label;
    runtime::Feeds feeds;
    std::vector<runtime::Value> expected;
    std::vector<std::string> expected_names;
  };

  std::optional<int> CheckOptions();
  std::optional<int> PrepareExecutor();
  std::optional<int> CheckDimNames() const;
  std::optional<int> ReadGivenInputs();
  runtime::Feeds WithGiven(runtime::Feeds feeds) const;
  std::optional<int> MakeJobs();
  std::optional<int> RunJob(const Job& job);
  void PrintOutputs(const Job& job, const std::vector<runtime::Value>& outputs) const;
  std::optional<int> CollectOutputFiles(const Job& job, const std::vector<runtime::Value>& outputs);
  std::optional<int> Bench();
  int WriteOutputs();

  const Command& cmd_;
  const RunArgs& args_;
  runtime::Tolerance tolerance_;
  double timeout_ = 0;
  int64_t max_memory_ = 0;
  std::map<std::string, int64_t> dims_;  // --dim
  std::map<std::string, runtime::ValueRange> ranges_;  // --input-range
  std::vector<std::pair<std::string, std::string>> input_files_;
  std::unique_ptr<support::ProgressSink> progress_;
  std::optional<proto::Model> model_;
  int64_t max_tensor_elements_ = 0;  // the runs' bound, and the random inputs'
  runtime::RunProfile profile_;
  bool profiling_ = false;
  std::unique_ptr<runtime::Executor> exec_;
  runtime::Feeds given_;  // --input files
  std::vector<Job> jobs_;
  std::optional<std::set<std::string>> random_skip_;  // set when the inputs are random
  std::map<std::string, int64_t> random_dims_;        // the symbols they were made at
  bool text_to_stderr_ = false;                       // with the profile's JSON on stdout
  bool mismatch_ = false;
  std::vector<proto::OutputFile> output_files_;
  std::vector<std::string> output_dirs_;
};

std::optional<int> ModelRun::CheckOptions() {
  tolerance_.rtol = args_.rtol.value_or(tolerance_.rtol);
  tolerance_.atol = args_.atol.value_or(tolerance_.atol);
  if (args_.threads < 1 || args_.threads > kMaxThreads || args_.bench < 0) {
    return Usage(
        cmd_, absl::StrCat("--threads must be between 1 and ", kMaxThreads, " and --bench >= 0"));
  }
  const absl::StatusOr<double> timeout = TimeoutFrom(args_.timeout);
  if (!timeout.ok()) return Usage(cmd_, std::string(timeout.status().message()));
  timeout_ = *timeout;
  const absl::StatusOr<int64_t> max_memory = MaxMemoryFrom(args_.max_memory);
  if (!max_memory.ok()) return Usage(cmd_, std::string(max_memory.status().message()));
  max_memory_ = *max_memory;
  if (absl::Status s = ParseRunBindings(args_, &dims_, &input_files_); !s.ok()) {
    return Usage(cmd_, std::string(s.message()));
  }
  if (absl::Status s = ParseInputRanges(args_.input_ranges, &ranges_); !s.ok()) {
    return Usage(cmd_, std::string(s.message()));
  }
  if (args_.output_dir == kStdio) {
    return Usage(cmd_, "--output-dir takes a directory (one file per output); '-' is not one");
  }
  text_to_stderr_ = args_.profile_json == kStdio;
  return std::nullopt;
}

// The runtime model and its executor, with the profile's hooks and the deadline.
std::optional<int> ModelRun::PrepareExecutor() {
  driver::ExecutorSettings settings;
  settings.load.max_function_inlines = LimitsFrom(args_)->max_function_inlines;
  settings.threads = static_cast<int>(args_.threads);
  settings.max_memory_bytes = max_memory_;
  settings.max_tensor_elements = args_.max_tensor_elements;
  settings.timeout_seconds = timeout_;
  profiling_ = args_.profile || args_.profile_json.has_value();
  if (profiling_) settings.profile = &profile_;
  settings.progress = progress_.get();
  absl::StatusOr<std::unique_ptr<runtime::Executor>> exec = driver::PrepareExecutor(*model_, settings);
  if (!exec.ok()) {
    PrintError(absl::StrCat(model_->path, ": ", exec.status().message()));
    return LoadExitCode(exec.status());
  }
  exec_ = *std::move(exec);
  max_tensor_elements_ =
      settings.max_tensor_elements.value_or(runtime::RunOptions().max_tensor_elements);
  return std::nullopt;
}

// A misspelt --dim would otherwise leave its symbol at the default: a usage error, as in
// check, opt and verify (one rule for every subcommand).
std::optional<int> ModelRun::CheckDimNames() const {
  const std::set<std::string> symbols = verify::InputSymbols(exec_->graph());
  for (const auto& [symbol, value] : dims_) {
    if (symbols.count(symbol) > 0) continue;
    return Usage(cmd_,
                 absl::StrCat(model_->path, ": --dim ", symbol, "=", value,
                              ": the model's inputs have no symbol '", symbol, "' (they have ",
                              symbols.empty() ? "none" : absl::StrJoin(symbols, ", "), ")"));
  }
  return std::nullopt;
}

// --input files, typed by the model's declaration of the input.
std::optional<int> ModelRun::ReadGivenInputs() {
  for (const auto& [name, path] : input_files_) {
    const onnx::TypeProto* type = nullptr;
    for (const onnx::ValueInfoProto& v : model_->proto.graph().input()) {
      if (v.name() == name) type = &v.type();
    }
    if (type == nullptr) return Usage(cmd_, absl::StrCat("the model has no input '", name, "'"));
    absl::StatusOr<runtime::Value> value = runtime::LoadValue(path, type);
    if (!value.ok()) {
      PrintError(std::string(value.status().message()));
      return kExitBadModel;
    }
    given_.emplace_back(name, std::move(*value));
  }
  return std::nullopt;
}

// `feeds` with the --input values in place of (or beside) theirs.
runtime::Feeds ModelRun::WithGiven(runtime::Feeds feeds) const {
  for (const auto& [name, value] : given_) {
    // A structured binding cannot be captured by clang 14: capture a plain reference.
    const std::string& wanted = name;
    auto it = std::find_if(feeds.begin(), feeds.end(),
                           [&wanted](const auto& f) { return f.first == wanted; });
    if (it != feeds.end()) {
      it->second = value;
    } else {
      feeds.emplace_back(name, value);
    }
  }
  return feeds;
}

// The test data sets, or random inputs; given inputs (files and test data) are checked against
// the declaration before running (exit 65).
std::optional<int> ModelRun::MakeJobs() {
  const runtime::Graph& graph = exec_->graph();
  for (const std::string& dir : args_.test_data) {
    absl::StatusOr<runtime::TestDataSet> set = runtime::LoadTestDataSet(*model_, dir);
    if (!set.ok()) {
      PrintError(std::string(set.status().message()));
      return set.status().code() == absl::StatusCode::kUnimplemented ? kExitUnsupported
                                                                     : kExitBadModel;
    }
    jobs_.push_back({dir, WithGiven(std::move(set->feeds)), std::move(set->expected),
                     std::move(set->output_names)});
  }
  for (const Job& job : jobs_) {
    absl::StatusOr<runtime::SymbolValues> bound = runtime::CheckInputs(graph, job.feeds, dims_, "--dim");
    if (!bound.ok()) return BadInput(model_->path, job.label, bound.status());
  }
  if (!jobs_.empty()) return std::nullopt;
  driver::InputRequest request;
  request.given = given_;
  request.dims = dims_;
  request.dims_label = "--dim";
  request.seed = static_cast<uint64_t>(args_.seed);
  request.max_elements = max_tensor_elements_;
  request.ranges = ranges_;
  // A range naming no input, or one its type cannot hold: the command line's mistake.
  if (absl::Status s = driver::CheckInputRanges(model_->proto.graph(), ranges_); !s.ok()) {
    return Usage(cmd_, absl::StrCat(model_->path, ": ", InputRangeWords(s.message())));
  }
  absl::StatusOr<driver::Inputs> inputs = driver::MakeInputs(graph, request, model_->path);
  if (!inputs.ok()) return RunFailure(model_->path, inputs.status());
  if (!inputs->bad_input.ok()) return BadInput(model_->path, "", inputs->bad_input);
  random_dims_ = std::move(inputs->bound);
  random_skip_.emplace();
  for (const auto& [name, value] : given_) random_skip_->insert(name);
  // The label says where the values came from: every input given (--input) is no random run.
  const char* label = inputs->random.empty() ? "given inputs"
                      : given_.empty()       ? "random inputs"
                                             : "given and random inputs";
  jobs_.push_back({label, WithGiven(std::move(inputs->random)), {}, {}});
  return std::nullopt;
}

// Each output, and whether the expected ones match (not with --bench: its line is the output).
void ModelRun::PrintOutputs(const Job& job, const std::vector<runtime::Value>& outputs) const {
  const runtime::Graph& graph = exec_->graph();
  for (size_t k = 0; k < outputs.size(); ++k) {
    const runtime::Value& v = outputs[k];
    std::string what = v.is_tensor()     ? v.tensor->DebugString()
                       : v.is_sequence() ? absl::StrCat("sequence of ", v.sequence.size())
                                         : std::string("empty optional");
    PrintOut(absl::StrCat(job.label, ": output '", graph.outputs[k], "' ", what, "\n"),
             text_to_stderr_);
  }
  if (!job.expected.empty() && !mismatch_) {
    PrintOut(absl::StrFormat("%s: %zu output(s) match (rtol %g, atol %g)\n", job.label,
                             job.expected.size(), tolerance_.rtol, tolerance_.atol),
             text_to_stderr_);
  }
}

// --output-dir: the job's outputs as files, written once every run succeeded.
std::optional<int> ModelRun::CollectOutputFiles(const Job& job,
                                                const std::vector<runtime::Value>& outputs) {
  const runtime::Graph& graph = exec_->graph();
  std::string dir = *args_.output_dir;
  if (jobs_.size() > 1) {
    const size_t slash = job.label.find_last_of('/');
    dir = absl::StrCat(dir, "/",
                       slash == std::string::npos ? job.label : job.label.substr(slash + 1));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    // The declared type decides the file's message (an optional's value stays wrapped).
    const onnx::TypeProto* type = static_cast<int>(k) < model_->proto.graph().output_size()
                                      ? &model_->proto.graph().output(k).type()
                                      : nullptr;
    absl::StatusOr<proto::RawValue> raw =
        runtime::RawFromValue(outputs[k], k < graph.outputs.size() ? graph.outputs[k] : "", type);
    absl::StatusOr<std::string> bytes = raw.ok() ? proto::SerializeValueFile(*raw) : raw.status();
    if (!bytes.ok()) return RunFailure(model_->path, bytes.status());
    output_files_.push_back({absl::StrCat(dir, "/output_", k, ".pb"), *std::move(bytes)});
  }
  output_dirs_.push_back(dir);
  return std::nullopt;
}

std::optional<int> ModelRun::RunJob(const Job& job) {
  const runtime::Graph& graph = exec_->graph();
  support::ProgressStep run_step(progress_.get(), absl::StrCat("run ", job.label));
  absl::StatusOr<std::vector<runtime::Value>> outputs = exec_->Run(job.feeds);
  run_step.End(outputs.ok() ? "" : "failed");
  if (!outputs.ok()) return RunFailure(model_->path, outputs.status());
  // Said once the run succeeded, so that a refusal stays one line.
  if (random_skip_.has_value()) {
    PrintRandomBindings(graph, *random_skip_, dims_, random_dims_);
  }
  for (size_t k = 0; k < job.expected.size() && k < outputs->size(); ++k) {
    runtime::Comparison c =
        runtime::CompareValues((*outputs)[k], job.expected[k], job.expected_names[k], tolerance_);
    if (!c.match) {
      PrintError(absl::StrCat(job.label, ": ", c.message));
      PrintError(absl::StrCat(job.label, ": ", c.Statistics(job.expected_names[k], tolerance_)));
      mismatch_ = true;
    }
  }
  for (size_t k = 0; k < outputs->size() && k < graph.outputs.size(); ++k) {
    const runtime::Value& v = (*outputs)[k];
    if (v.is_tensor() && v.tensor != nullptr && v.tensor->num_elements() == 0) {
      PrintError(absl::StrCat(job.label, ": warning: output '", graph.outputs[k],
                              "' is empty (shape ", runtime::ShapeToString(v.tensor->shape()), ")"));
    }
  }
  if (args_.bench == 0) PrintOutputs(job, *outputs);
  if (args_.output_dir.has_value()) return CollectOutputFiles(job, *outputs);
  return std::nullopt;
}

// --bench N: the runs above were the warm-up; buffers are reused from here on.
std::optional<int> ModelRun::Bench() {
  const int64_t bench = args_.bench;
  std::vector<double> ms;
  support::ProgressStep bench_step(progress_.get(), absl::StrCat("bench ", bench, " runs"));
  for (int64_t i = 0; i < bench; ++i) {
    bench_step.Update(i, bench);
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<runtime::Value>> outputs = exec_->Run(jobs_[0].feeds);
    const auto end = std::chrono::steady_clock::now();
    if (!outputs.ok()) {
      bench_step.End("failed");
      return RunFailure(model_->path, outputs.status());
    }
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    profile_.EndRun();
  }
  std::sort(ms.begin(), ms.end());
  const double median =
      ms.size() % 2 == 1 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  if (bench_step.active()) bench_step.End(absl::StrFormat("median %.3g ms", median));
  PrintOut(absl::StrFormat("bench: runs=%lld median_ms=%.4f min_ms=%.4f\n",
                           static_cast<long long>(bench), median, ms.front()),
           text_to_stderr_);
  return std::nullopt;
}

// Every output file is written only once all runs (--bench's included) succeeded, all of them
// or none; then the profile, a side output.
int ModelRun::WriteOutputs() {
  if (!output_files_.empty()) {
    if (absl::Status s = WriteRunOutputs(*model_, args_, output_dirs_, output_files_); !s.ok()) {
      PrintError(std::string(s.message()));
      return kExitCannotWrite;
    }
  }
  if (profiling_) {
    if (args_.profile) PrintOut(FormatProfileText(profile_), text_to_stderr_);
    if (args_.profile_json.has_value()) {
      const absl::StatusOr<proto::InputFiles> inputs = proto::InputFilesOf(*model_);
      if (!SideOutput().Write(*args_.profile_json, ProfileJson(profile_).dump(1) + "\n", inputs)) {
        return kExitCannotWrite;
      }
    }
  }
  return mismatch_ ? kExitFound : kExitOk;
}

int ModelRun::Run() {
  if (args_.positionals.size() != 1) return Usage(cmd_, "expects exactly one MODEL");
  if (std::optional<int> exit = CheckOptions()) return *exit;
  progress_ = MakeProgress(args_);
  absl::StatusOr<proto::Model> model = Load(args_.positionals[0], args_, progress_.get());
  if (!model.ok()) {
    PrintError(std::string(model.status().message()));
    return LoadExitCode(model.status());
  }
  model_ = *std::move(model);
  if (std::optional<int> exit = PrepareExecutor()) return *exit;
  if (std::optional<int> exit = CheckDimNames()) return *exit;
  if (std::optional<int> exit = ReadGivenInputs()) return *exit;
  if (std::optional<int> exit = MakeJobs()) return *exit;
  for (const Job& job : jobs_) {
    if (std::optional<int> exit = RunJob(job)) return *exit;
  }
  if (profiling_) {
    // The runs above count unless --bench times its own (the first run includes planning).
    if (args_.bench > 0) {
      profile_.ResetRuns();  // plan-time records stay
    } else {
      for (size_t j = 0; j < jobs_.size(); ++j) profile_.EndRun();
    }
  }
  if (args_.bench > 0) {
    if (std::optional<int> exit = Bench()) return *exit;
  }
  return WriteOutputs();
}

int RunRun(const Command& cmd, const RunArgs& args) { return ModelRun(cmd, args).Run(); }

}  // namespace

const Command& RunCommand() {
  static const Command kCommand = {
      "run", "onnx-bcast run MODEL [options]   (MODEL '-': read stdin)",
      "execute the model on the reference CPU executor", CommandMain<RunArgs, DeclareRun, RunRun>,
      CommandHelp<RunArgs, DeclareRun>};
  return kCommand;
}

}  // namespace onnx_bcast::tools
