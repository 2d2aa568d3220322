// `onnx-bcast opt MODEL -o OUT`: rewrites broadcasts for a target (driver::OptimizeAtDims:
// the dims bound, then the passes), optionally verifies the result on our executor and on the
// target's engine, and writes the model and its report.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "driver/driver.h"
#include "driver/opt_text.h"
#include "driver/verify.h"
#include "engines/engine_verify.h"
#include "engines/live_probe.h"
#include "engines/registry.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"
#include "proto/dim_binding.h"
#include "proto/model_io.h"
#include "proto/safe_write.h"
#include "report/opt_report.h"
#include "targets/targets.h"
#include "tools/common_options.h"
#include "tools/outputs.h"
#include "verify/verify.h"

namespace onnx_bcast::tools {
namespace {

struct OptArgs : CommonArgs {
  std::optional<std::string> output;
  std::string target;
  std::string target_file;
  std::optional<std::string> passes;
  std::optional<std::string> report;
  bool verify = false;
  bool verify_engine = false;
  bool no_verify_engine = false;
  bool verify_each = false;
  bool dry_run = false;
  bool in_place = false;
  bool external_data = false;
  bool list_passes = false;
  std::vector<std::string> dims;          // SYMBOL=N
  std::vector<std::string> input_shapes;  // NAME=d0,d1,...
  std::optional<int64_t> fold_limit;
  bool debug = false;
  bool allow_partial = false;
  bool no_live_probe = false;
  std::optional<std::string> probe_cache;
  std::vector<std::string> input_ranges;  // NAME=LO:HI
};

void DeclareOpt(CommandLine* cl, OptArgs* a) {
  cl->Option("-o,--output", "OUT",
             "where to write the rewritten model ('-': stdout, the text then goes to stderr)",
             &a->output);
  cl->Option("--target", "NAME", "a named pipeline (default explicit; see --list-passes)",
             &a->target);
  cl->Option("--target-file", "FILE", "a target profile file describing an engine",
             &a->target_file);
  cl->Option("--passes", "a,b,c",
             "run these passes in order ('none': only load, validate and save losslessly)",
             &a->passes);
  cl->Option("--report", "FILE",
             "write a JSON log of every rewrite ('-': stdout, the text then goes to stderr)",
             &a->report);
  cl->Flag("--verify", "verify the rewritten model against the original", &a->verify);
  cl->Flag("--verify-engine",
           "require the engine check (done by default where this build has the target's "
           "engine): the written model loaded and run on the engine itself (in a child) and "
           "compared with the original at the bound dims; a build without the engine is a "
           "usage error",
           &a->verify_engine);
  cl->Flag("--no-verify-engine",
           "skip the engine check; by default, where this build has the target's engine, the "
           "written model is run on it (one line, \"engine\" in --report) and any answer but "
           "\"runs\" exits 1 naming the first node that differs, nothing written",
           &a->no_verify_engine);
  cl->Flag("--verify-each",
           "after every pass, validate the graph and compare the kept shape tables with a "
           "fresh analysis",
           &a->verify_each);
  cl->Flag("--dry-run", "print what would change, write nothing", &a->dry_run);
  cl->Flag("--in-place", "write the result back to MODEL (no -o needed)", &a->in_place);
  cl->Flag("--external-data", "save large initializers to OUT.data", &a->external_data);
  cl->Flag("--list-passes", "list the passes and targets, then exit", &a->list_passes);
  cl->Repeated("--dim", "SYMBOL=N",
               "bind a symbolic dim before the passes (or several: H=640,W=640): the written "
               "model has that number there; exit 1 naming the node when a broadcast fails at "
               "it",
               &a->dims);
  cl->Repeated("--input-shape", "NAME=d0,d1,...",
               "bind every dim of graph input NAME, named or not", &a->input_shapes);
  cl->Option("--fold-limit", "BYTES",
             "largest constant a pass writes: a broadcast folded into an initializer (default "
             "4096) and a result of fold-constants (default 1 MiB)",
             &a->fold_limit);
  cl->Flag("--debug", "print every rewrite and why nodes were left alone", &a->debug);
  cl->Flag("--allow-partial",
           "write OUT even when some nodes cannot be put into the target's form (they are "
           "listed on stderr; exit 0); without it such a model is not written (exit 3)",
           &a->allow_partial);
  cl->Flag("--no-live-probe",
           "decide forms by the target's table only; by default, when this build has the "
           "target's engine, each broadcasting node and candidate rewrite is run on it at its "
           "exact shapes (in a child process) and compared with the bundled executor",
           &a->no_live_probe);
  cl->Option("--probe-cache", "DIR",
             "keep the live probes' results in DIR (one small file per form) across runs",
             &a->probe_cache);
  DeclareInputRange(cl, &a->input_ranges, "fed by --verify and the engine check");
  // Most tools' -q: a command that succeeds prints nothing (issue 44 item 7).
  cl->Flag("-q,--quiet",
           "print nothing on success but errors and warnings (and no progress display)", &a->quiet);
  DeclareProgress(cl, a);
}

// --input-shape NAME=d0,d1,..., one graph input per flag.
absl::Status ParseInputShapeSpecs(const std::vector<std::string>& specs,
                                  proto::InputShapes* shapes) {
  for (const std::string& spec : specs) {
    std::pair<std::string, std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    std::vector<int64_t> extents;
    bool ok = !kv.first.empty() && !kv.second.empty();
    for (absl::string_view d : absl::StrSplit(kv.second, ',')) {
      int64_t n = 0;
      ok = ok && absl::SimpleAtoi(d, &n) && n >= 1;
      extents.push_back(n);
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape expects NAME=d0,d1,... with every d >= 1, got '", spec, "'"));
    }
    if (shapes->count(kv.first) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape ", kv.first, " is given twice"));
    }
    (*shapes)[kv.first] = std::move(extents);
  }
  return absl::OkStatus();
}

// --list-passes: the registry's passes, then the built-in targets.
int ListPassesAndTargets() {
  std::printf("Passes:\n");
  for (const passes::PassInfo& info : passes::AllPasses()) {
    std::printf("  %-32s %s\n", info.name, info.summary);
  }
  if (passes::AllPasses().empty()) std::printf("  (none yet)\n");
  std::printf("\nTargets:\n");
  for (const targets::TargetProfile& t : targets::BuiltinTargets()) {
    std::printf("  %-32s %s\n", t.name.c_str(), absl::StrJoin(t.passes, ",").c_str());
  }
  return kExitOk;
}

// Static engines are measured at static shapes: an engine given a model whose inputs keep
// symbolic dims may compute ops over them wrongly (OpenCV 4.6's ReduceMean over an unbound H, W
// gives NaN). Says which dims are left to bind, or nothing.
std::string UnboundInputDimsHint(const proto::Model& model) {
  const std::vector<std::string> symbols = proto::UnboundInputSymbols(model.proto.graph());
  if (symbols.empty()) return "";
  return absl::StrCat("; its inputs keep the symbolic dims ", absl::StrJoin(symbols, ", "),
                      ", which the engine ran at the values above: bind them with --dim");
}

// One opt command: every combination of options is checked before the model is read (a
// mistake costs nothing), then each step below in turn. A step that ends the command returns
// its exit code.
class OptRun {
 public:
  OptRun(const Command& cmd, const OptArgs& args) : cmd_(cmd), args_(args) {}
  int Run();

 private:
  std::optional<int> PlanOutputs();
  std::optional<int> PlanPipeline();
  std::optional<int> RefuseUnwritableOutputs();
  int Refuse(int exit, std::string why);
  std::optional<int> Optimize();
  void PrintOptText() const;
  int OptimizeFailure(const absl::Status& status);
  void WarnUnsupportedOps() const;
  void PrintWaived() const;
  void PrintViolations() const;
  std::optional<int> VerifyRewrite();
  std::optional<int> ReportEngine(const driver::OptimizeOutcome& outcome);
  int WriteOutputs();

  const Command& cmd_;
  const OptArgs& args_;
  // The plan, from the command line.
  std::string output_;
  bool model_to_stdout_ = false;
  bool text_to_stderr_ = false;  // with the model or the JSON on stdout
  driver::OptSettings settings_;
  passes::ResolvedPipeline pipeline_;
  driver::DimBindingRequest bind_;
  std::map<std::string, runtime::ValueRange> ranges_;  // --input-range
  std::unique_ptr<support::ProgressSink> progress_;
  // The run.
  std::optional<proto::Model> model_;
  std::string label_;  // "<stdin>" for '-'
  absl::StatusOr<proto::InputFiles> inputs_ = proto::InputFiles{};
  report::OptReport report_;
  std::optional<proto::Model> original_;  // --verify
  std::optional<driver::OptimizeOutcome> outcome_;
};

// -o, --in-place, --dry-run, --report and stdout: who writes where.
std::optional<int> OptRun::PlanOutputs() {
  const std::string& model_path = args_.positionals[0];
  output_ = args_.output.value_or("");
  if (args_.in_place) {
    if (model_path == kStdio) return Usage(cmd_, "--in-place needs a MODEL file, not stdin");
    if (args_.dry_run) {
      return Usage(cmd_, "--in-place and --dry-run conflict (--dry-run writes nothing)");
    }
    if (args_.output.has_value() && output_ != model_path) {
      return Usage(cmd_, "--in-place writes MODEL itself: drop -o OUT");
    }
    output_ = model_path;
  }
  if (output_.empty() && !args_.dry_run) {
    return Usage(cmd_, "needs -o OUT (or --in-place, or --dry-run)");
  }
  if (!args_.dry_run && args_.report.has_value() && SamePath(output_, *args_.report)) {
    return Usage(cmd_, "the model and --report FILE name the same file");
  }
  model_to_stdout_ = !args_.dry_run && output_ == kStdio;
  const bool report_to_stdout = args_.report == kStdio;
  if (model_to_stdout_ && report_to_stdout) {
    return Usage(cmd_, "-o - and --report - both want stdout");
  }
  if (model_to_stdout_ && args_.external_data) {
    return Usage(cmd_, "-o - writes one stream: --external-data needs an output file");
  }
  text_to_stderr_ = model_to_stdout_ || report_to_stdout;
  return std::nullopt;
}

// The settings, the pipeline (target or passes) and the dims to bind.
std::optional<int> OptRun::PlanPipeline() {
  settings_.verify_each = args_.verify_each;
  // The rewrite list has three readers: the text lines (--dry-run, --debug), --report and
  // --verify's pass attribution. Without them it is only counted.
  settings_.keep_rewrite_log =
      args_.dry_run || args_.debug || args_.report.has_value() || args_.verify;
  if (args_.fold_limit.has_value()) {
    if (*args_.fold_limit < 0) return Usage(cmd_, "--fold-limit must not be negative");
    settings_.fold_limit_bytes = *args_.fold_limit;
    settings_.constant_fold_limit_bytes = *args_.fold_limit;
  }
  passes::PipelineRequest request;
  request.target = args_.target;
  request.target_file = args_.target_file;
  for (absl::string_view name :
       absl::StrSplit(args_.passes.value_or(""), ',', absl::SkipWhitespace())) {
    request.passes.emplace_back(absl::StripAsciiWhitespace(name));
  }
  if (args_.passes.has_value() && request.passes.empty()) {
    return Usage(cmd_, "--passes needs at least one name ('none' for load and save only)");
  }
  absl::StatusOr<passes::ResolvedPipeline> resolved = passes::ResolvePipeline(request);
  if (!resolved.ok()) {
    // A bad profile file is the file's fault and names it; anything else is the command line's.
    if (!request.target_file.empty() &&
        absl::StartsWith(resolved.status().message(), request.target_file)) {
      PrintError(std::string(resolved.status().message()));
      return kExitUsage;
    }
    return Usage(cmd_, std::string(resolved.status().message()));
  }
  pipeline_ = *std::move(resolved);
  if (absl::Status s = ParseDimSpecs(args_.dims, &bind_.dims); !s.ok()) {
    return Usage(cmd_, std::string(s.message()));
  }
  if (absl::Status s = ParseInputShapeSpecs(args_.input_shapes, &bind_.input_shapes); !s.ok()) {
    return Usage(cmd_, std::string(s.message()));
  }
  if (absl::Status s = ParseInputRanges(args_.input_ranges, &ranges_); !s.ok()) {
    return Usage(cmd_, std::string(s.message()));
  }
  if (args_.allow_partial && !pipeline_.profile.has_value()) {
    return Usage(cmd_, "--allow-partial relaxes a target's promise: give a target");
  }
  return std::nullopt;
}

// An output the save (or the report's write) would refuse fails opt only after every pass ran
// and printed a report that reads as success: refused now, with the save's own words (issue 44
// item 3): -o naming MODEL (or its external data), a folder that does not exist or cannot be
// written in, a destination that is a directory, a link or a device. --in-place is the way to
// replace MODEL (written safely, through a temporary).
std::optional<int> OptRun::RefuseUnwritableOutputs() {
  const proto::InputFiles none;
  const proto::InputFiles& inputs = inputs_.ok() ? *inputs_ : none;
  if (!args_.dry_run && !model_to_stdout_) {
    if (absl::Status s = proto::CheckOutputPath(output_, inputs, args_.in_place); !s.ok()) {
      PrintError(std::string(s.message()));
      return kExitCannotWrite;
    }
  }
  if (args_.report.has_value() && *args_.report != kStdio) {
    if (absl::Status s = proto::CheckOutputPath(*args_.report, inputs); !s.ok()) {
      PrintError(std::string(s.message()));
      return kExitCannotWrite;
    }
  }
  return std::nullopt;
}

// A refusal: nothing is written but the report, which is then the one place a CI job finds the
// reasons as data (issue 44 item 1): the violations, the engine's verdict and `refused` with
// the exit code and why. Returns `exit` (a report that cannot be written is said, and the
// refusal's code kept: it is what the job must act on).
int OptRun::Refuse(int exit, std::string why) {
  report_.refused_exit = exit;
  report_.refused = std::move(why);
  if (args_.report.has_value()) {
    SideOutput report_file;
    report_file.Write(*args_.report, report::FormatOptJson(report_), inputs_);
  }
  return exit;
}

int OptRun::OptimizeFailure(const absl::Status& status) {
  PrintError(absl::StrCat(label_, ": ", status.message()));
  switch (status.code()) {
    case absl::StatusCode::kUnimplemented:
      return Refuse(kExitUnsupported, std::string(status.message()));
    case absl::StatusCode::kFailedPrecondition:
      return kExitUsage;
    default:
      return Refuse(kExitBadModel, std::string(status.message()));
  }
}

// Ops the engine has no layer for: warnings, before the verdict on the broadcasts (exit 0 when
// every broadcast is placed: they are not broadcast forms).
void OptRun::WarnUnsupportedOps() const {
  for (const auto& [op, count] : report_.unsupported_ops) {
    PrintError(absl::StrCat(label_, ": warning: ", report_.target, " has no layer for ", op, " (",
                            count,
                            " node(s)): the engine stops there; not a broadcast form, "
                            "so no rewrite of opt changes it"));
  }
}

// Nodes outside the target's form, said once, here (the report gives only their count): one
// self-contained line per node (model, target, what happened to OUT, the node), then each hint
// that several nodes share, once with its count.
// Nodes the table puts outside the target's form but the engine ran as given (the waiver of
// driver::OptimizeAtDims): notes, never a refusal.
void OptRun::PrintWaived() const {
  if (args_.quiet) return;
  for (const std::string& w : report_.waived) {
    PrintError(absl::StrCat(label_, ": note: not refused: ", w));
  }
}

void OptRun::PrintViolations() const {
  if (report_.violations.empty()) return;
  const bool partial = args_.allow_partial;
  // A node of an op the engine has no layer for runs at no binding of dims: its hint is not
  // one to count.
  std::vector<std::string> no_layer(report_.violations.size());
  if (pipeline_.profile.has_value()) {
    const std::vector<std::string>& ops = pipeline_.profile->unsupported_ops;
    for (size_t k = 0; k < report_.violation_details.size() && k < no_layer.size(); ++k) {
      const std::string& op = report_.violation_details[k].op;
      if (std::find(ops.begin(), ops.end(), op) != ops.end()) {
        no_layer[k] =
            absl::StrCat(report_.target, " has no layer for ", op, ": no --dim makes it run");
      }
    }
  }
  const driver::FoldedViolations folded = driver::FoldViolationHints(report_.violations, no_layer);
  const std::string outcome = partial ? "written anyway: --allow-partial"
                                      : "nothing written, --allow-partial writes it anyway";
  const size_t total = folded.nodes.size();
  for (size_t k = 0; k < total; ++k) {
    PrintError(absl::StrCat(label_, ": target ", report_.target, " not met (node ", k + 1, " of ",
                            total, " not in its form; ", outcome, "): ", folded.nodes[k]));
  }
  for (const std::string& hint : folded.hints) {
    PrintError(absl::StrCat(label_, ": target ", report_.target, " not met (", total,
                            " nodes not in its form; ", outcome, "): ", hint));
  }
}

// --verify: the rewritten model against the one loaded (with the dims bound).
std::optional<int> OptRun::VerifyRewrite() {
  if (!original_.has_value()) return std::nullopt;
  driver::VerifyRequest request;
  // The run's own report, in memory, names the pass behind a divergence.
  request.options.report = &report_;
  request.options.progress = progress_.get();
  request.options.ranges = ranges_;
  absl::StatusOr<verify::VerifyResult> result = driver::Verify(*original_, *model_, request);
  if (!result.ok()) {
    PrintError(absl::StrCat(label_, ": --verify: ", result.status().message()));
    return LoadExitCode(result.status());
  }
  const bool dry_run = args_.dry_run;
  if (!args_.quiet || !result->match) {
    PrintOut(
        verify::FormatVerifyText(*result, label_, dry_run ? "(rewritten)" : report_.output_path),
        text_to_stderr_);
  }
  if (!result->match) {
    PrintError(absl::StrCat(dry_run ? label_ : report_.output_path,
                            ": the rewritten model differs from the original; not written"));
    return Refuse(kExitFound, "--verify: the rewritten model differs from the original");
  }
  return std::nullopt;
}

// The engine's verdict on the written model (driver::OptimizeAtDims ran it): its line, or why
// it was not run; a model it refuses, crashes on or computes wrongly is not written, and the
// first node that differs there is named.
std::optional<int> OptRun::ReportEngine(const driver::OptimizeOutcome& outcome) {
  if (!report_.engine_line.empty() && (!args_.quiet || outcome.engine_failed)) {
    PrintOut(absl::StrCat(
                 report_.engine_line,
                 report_.engine_dims.empty() ? "" : absl::StrCat(" (at ", report_.engine_dims, ")"),
                 "\n"),
             text_to_stderr_);
  } else if (!report_.engine_note.empty() && !args_.quiet) {
    PrintError(absl::StrCat(label_, ": note: ", report_.engine_note));
  }
  const std::string engine = report_.engine_line.substr(0, report_.engine_line.find(':'));
  if (!report_.engine_divergence.empty()) {
    PrintError(absl::StrCat(label_, ": on ", engine, ": ", report_.engine_divergence));
  }
  if (!outcome.engine_failed) {
    if (!report_.engine_outcome.empty() && report_.engine_outcome != "ran") {
      PrintError(absl::StrCat(label_, ": warning: ", engine, " does not run the written model (",
                              report_.engine_outcome, "); written anyway: --allow-partial"));
    }
    return std::nullopt;
  }
  PrintError(absl::StrCat(args_.dry_run ? label_ : report_.output_path,
                          ": the rewritten model does not run correctly on ", engine, " (",
                          report_.engine_outcome, ")", UnboundInputDimsHint(*model_),
                          "; not written"));
  return Refuse(kExitFound, absl::StrCat("the rewritten model does not run correctly on ", engine,
                                         " (", report_.engine_outcome, ")"));
}

// The report is committed once the model is (with --dry-run it is the output): a save that
// fails leaves none (a refusal before it wrote the report alone: Refuse). Staged first, so a
// report that cannot be written stops opt before the model is saved.
int OptRun::WriteOutputs() {
  SideOutput report_file;
  // Streamed to its temporary (77 MB at 1M nodes, never whole in memory); on stdout it is
  // held until the model is saved.
  auto write_report = [this](proto::StagedOutputFiles::Sink sink) {
    return report::WriteOptJson(report_, sink);
  };
  if (args_.report.has_value() &&
      !report_file.StageStreamed(*args_.report, write_report, inputs_, /*stdout_now=*/false)) {
    return kExitCannotWrite;
  }
  if (args_.dry_run) return report_file.Commit() ? kExitOk : kExitCannotWrite;
  if (model_to_stdout_) {
    if (absl::Status s = WriteModelToStdout(*model_); !s.ok()) {
      PrintError(absl::StrCat(label_, ": -o -: ", s.message()));
      return kExitCannotWrite;
    }
    return report_file.Commit() ? kExitOk : kExitCannotWrite;
  }
  proto::SaveOptions save;
  save.in_place = args_.in_place;
  save.external_data = args_.external_data;
  if (inputs_.ok()) save.inputs = &*inputs_;
  support::ProgressStep save_step(progress_.get(), absl::StrCat("saving ", output_));
  const absl::Status saved = proto::SaveModel(*model_, output_, save);
  save_step.End(saved.ok() ? "" : "failed");
  if (!saved.ok()) {
    PrintError(std::string(saved.message()));
    return kExitCannotWrite;
  }
  return report_file.Commit() ? kExitOk : kExitCannotWrite;
}

// With --passes none, the report is the "dims bound" line when dims were bound. Its last line
// names the ops the target's engine has no layer for, as its profile measured them.
void OptRun::PrintOptText() const {
  if (pipeline_.passes.empty() && report_.bindings.empty()) return;
  // -q: the report is what success prints; --dry-run and --debug asked for their lines.
  if (args_.quiet && !args_.dry_run && !args_.debug) return;
  const std::vector<std::string> unsupported_ops = pipeline_.profile.has_value()
                                                       ? pipeline_.profile->unsupported_ops
                                                       : std::vector<std::string>{};
  PrintOut(driver::FormatOptText(report_, model_->proto.graph(), unsupported_ops,
                                 args_.dry_run || args_.debug, args_.debug,
                                 /*list_violations=*/false),
           text_to_stderr_);
}

// --dim and --input-shape bound, the copies to verify against kept, the passes run and their
// text printed (driver::OptimizeAtDims). A node left outside the target's form fails opt
// unless --allow-partial.
std::optional<int> OptRun::Optimize() {
  driver::OptimizeRequest request;
  request.bind = bind_;
  request.allow_partial = args_.allow_partial;
  request.before_passes = [this](const proto::Model& bound) {
    // --verify compares against the model as loaded (with the dims bound: the same inputs feed
    // both).
    if (args_.verify) original_ = bound;
    return absl::OkStatus();
  };
  request.engine.live_probe = !args_.no_live_probe;
  request.engine.verify = !args_.no_verify_engine;
  request.engine.required = args_.verify_engine;
  request.engine.probe_cache = args_.probe_cache.value_or("");
  request.engine.input_ranges = ranges_;
  report_.output_path = args_.dry_run ? "" : model_to_stdout_ ? "<stdout>" : output_;
  absl::StatusOr<driver::OptimizeOutcome> outcome =
      driver::OptimizeAtDims(&*model_, pipeline_, settings_, request, &report_);
  if (!outcome.ok()) {
    PrintError(absl::StrCat(label_, ": ", outcome.status().message()));
    return LoadExitCode(outcome.status());
  }
  if (!outcome->engine_usage.empty()) {
    return Usage(cmd_, absl::StrCat("--verify-engine: ", outcome->engine_usage));
  }
  if (!outcome->bind_usage.empty()) {
    // driver::CheckInputRanges words a range's mistake "input range NAME=LO:HI: ...".
    const bool range = absl::StartsWith(outcome->bind_usage, "input range ");
    return Usage(cmd_,
                 absl::StrCat(label_, ": ",
                              range ? InputRangeWords(outcome->bind_usage) : outcome->bind_usage));
  }
  if (!outcome->bind_failure.empty()) {
    // As check --dim: the first node that fails at these dims; nothing is written.
    PrintError(absl::StrCat(label_, ": ", outcome->bind_failure));
    return Refuse(kExitFound, outcome->bind_failure);
  }
  PrintOptText();
  if (!outcome->status.ok()) return OptimizeFailure(outcome->status);
  WarnUnsupportedOps();
  PrintWaived();
  PrintViolations();
  if (outcome->target_not_met) {
    return Refuse(kExitUnsupported,
                  absl::StrCat("target ", report_.target, " not met: ", report_.violations.size(),
                               " node(s) not in its form"));
  }
  outcome_ = *std::move(outcome);
  return std::nullopt;
}

int OptRun::Run() {
  if (args_.positionals.size() != 1) return Usage(cmd_, "expects exactly one MODEL");
  if (std::optional<int> exit = PlanOutputs()) return *exit;
  if (std::optional<int> exit = PlanPipeline()) return *exit;
  progress_ = MakeProgress(args_);
  settings_.progress = progress_.get();
  absl::StatusOr<proto::Model> model = Load(args_.positionals[0], args_, progress_.get());
  if (!model.ok()) {
    PrintError(std::string(model.status().message()));
    return LoadExitCode(model.status());
  }
  model_ = *std::move(model);
  label_ = model_->path;
  // The files the model reads as loaded: no output may replace one, whatever the passes do.
  inputs_ = proto::InputFilesOf(*model_);
  if (std::optional<int> exit = RefuseUnwritableOutputs()) return *exit;
  if (std::optional<int> exit = Optimize()) return *exit;
  if (std::optional<int> exit = VerifyRewrite()) return *exit;
  if (std::optional<int> exit = ReportEngine(*outcome_)) return *exit;
  return WriteOutputs();
}

int RunOpt(const Command& cmd, const OptArgs& args) {
  if (args.list_passes) return ListPassesAndTargets();
  return OptRun(cmd, args).Run();
}

}  // namespace

const Command& OptCommand() {
  static const Command kCommand = {
      "opt", "onnx-bcast opt MODEL -o OUT [options]   (MODEL '-': stdin; OUT '-': stdout)",
      "rewrite broadcasts for a target (default: explicit; --passes none: load and save)",
      CommandMain<OptArgs, DeclareOpt, RunOpt>, CommandHelp<OptArgs, DeclareOpt>};
  return kCommand;
}

}  // namespace onnx_bcast::tools
