// `onnx-bcast check MODEL|DIR ...`: one model analysed here (driver::Check), several (or a
// folder) each in a child of this binary with the reports aggregated (tools/check_set.h).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/dim_evaluation.h"
#include "analysis/shape_propagation.h"
#include "driver/driver.h"
#include "report/check_report.h"
#include "report/check_set_report.h"
#include "tools/check_set.h"
#include "tools/common_options.h"
#include "tools/outputs.h"

namespace onnx_bcast::tools {
namespace {

struct CheckArgs : CommonArgs {
  std::optional<std::string> json;
  bool verbose = false;
  bool strict = false;
  std::vector<std::string> dims;  // SYMBOL=N
  bool lint = false;
  bool annotate = false;
  std::optional<std::string> output;
  // over many models
  std::optional<int64_t> jobs;
  std::optional<std::string> junit;
  std::optional<std::string> sarif;
  std::optional<std::string> baseline;
};

void DeclareCheck(CommandLine* cl, CheckArgs* a) {
  cl->Option("--json", "FILE",
             "write the verdicts as JSON to FILE ('-': stdout, the text report then goes to "
             "stderr)",
             &a->json);
  cl->Flag("-q,--quiet", "print only the summary line (and no progress)", &a->quiet);
  cl->Flag("-v,--verbose", "also list every broadcasting node by class (ok ones included)",
           &a->verbose);
  cl->Flag("--strict", "exit 1 also when a condition or unknown remains", &a->strict);
  cl->Repeated("--dim", "SYMBOL=N",
               "evaluate at this value of a symbolic dim: exit 1 naming the first node that "
               "fails there, 0 when every node holds",
               &a->dims);
  cl->Flag("--lint", "also warn about broadcasts engines interpret differently", &a->lint);
  cl->Flag("--annotate", "write the model with inferred value_info (needs -o)", &a->annotate);
  cl->Option("-o,--output", "OUT", "output model for --annotate", &a->output);
  cl->Option("-j,--jobs", "N",
             "with several models (or a folder): check N at a time (default: the cores)", &a->jobs);
  cl->Option("--junit", "FILE", "write JUnit XML: one testcase per model ('-': stdout)", &a->junit);
  cl->Option("--sarif", "FILE", "write SARIF 2.1.0: one result per finding ('-': stdout)",
             &a->sarif);
  cl->Option("--baseline", "FILE",
             "a previous --json of the same models: findings already in it do not count toward "
             "the exit code (new findings and new models do)",
             &a->baseline);
  DeclareProgress(cl, a);
}

// --- check over a set of models: each in a child of this binary (issue 25) ---

// The set's usage errors, before any model is looked for; fills the child count.
std::optional<int> CheckSetUsage(const Command& cmd, const CheckArgs& args, int64_t* jobs) {
  if (args.annotate || args.output.has_value()) {
    return Usage(cmd, "--annotate and -o take one MODEL, not several");
  }
  if (args.verbose) return Usage(cmd, "--verbose takes one MODEL; --json holds every node");
  for (const std::string& p : args.positionals) {
    if (p == kStdio) return Usage(cmd, "'-' (stdin) takes one MODEL, not several");
  }
  int stdout_users = 0;
  for (const auto* out : {&args.json, &args.junit, &args.sarif}) stdout_users += *out == kStdio;
  if (stdout_users > 1) return Usage(cmd, "only one of --json, --junit, --sarif can be '-'");
  const int64_t cores = std::max<int64_t>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
  *jobs = args.jobs.value_or(cores);
  if (*jobs < 1 || *jobs > kMaxThreads) {
    return Usage(cmd, absl::StrCat("--jobs must be between 1 and ", kMaxThreads));
  }
  return std::nullopt;
}

// --baseline FILE: a previous --json of the set; unreadable or malformed is a usage error.
std::optional<int> ReadBaseline(const CheckArgs& args, std::optional<report::Baseline>* baseline) {
  if (!args.baseline.has_value()) return std::nullopt;
  absl::StatusOr<std::string> text = proto::ReadFileBytes(*args.baseline, int64_t{1} << 30);
  if (!text.ok()) {
    PrintError(absl::StrCat(*args.baseline, ": ", text.status().message()));
    return kExitUsage;
  }
  absl::StatusOr<report::Baseline> parsed = report::ParseBaseline(*text);
  if (!parsed.ok()) {
    PrintError(absl::StrCat(*args.baseline, ": ", parsed.status().message()));
    return kExitUsage;
  }
  *baseline = *std::move(parsed);
  return std::nullopt;
}

// Findings the baseline holds, its models matched to this run's however either names them
// (`check zoo/` against `check ./zoo`, an absolute path, another working directory); a
// baseline that matches none of the models checked is said, since every finding then counts.
void MarkKnownFindings(const CheckArgs& args, const report::Baseline& baseline,
                       const std::vector<report::CheckSetEntry>& entries,
                       std::vector<report::Finding>* findings) {
  std::error_code ec;
  report::BaselinePaths where;
  where.cwd = std::filesystem::current_path(ec).string();
  where.baseline_dir = std::filesystem::absolute(*args.baseline, ec).parent_path().string();
  std::vector<std::string> models;
  for (const report::CheckSetEntry& e : entries) models.push_back(e.path);
  const std::map<std::string, std::string> matched =
      report::MatchBaselineModels(baseline, models, where);
  report::ApplyBaseline(baseline, matched, findings);
  if (matched.empty() && !baseline.models.empty()) {
    PrintError(absl::StrCat(
        "check: warning: --baseline ", *args.baseline, ": none of its ", baseline.models.size(),
        " model(s) is among the ", models.size(), " checked (it holds ", *baseline.models.begin(),
        baseline.models.size() > 1 ? ", ..." : "",
        "; paths match relative to the baseline's folder or the current directory, or by "
        "their trailing folders): every finding counts as new"));
  }
}

// What each child needs of this command line.
std::vector<std::string> ChildArgs(const CheckArgs& args,
                                   const std::map<std::string, int64_t>& dims) {
  std::vector<std::string> child_args;
  if (args.lint) child_args.push_back("--lint");
  for (const auto& [symbol, value] : dims) {
    child_args.push_back("--dim");
    child_args.push_back(absl::StrCat(symbol, "=", value));
  }
  auto pass_limit = [&](const char* flag, const std::optional<int64_t>& v) {
    if (!v.has_value()) return;
    child_args.push_back(flag);
    child_args.push_back(absl::StrCat(*v));
  };
  pass_limit("--max-file-bytes", args.max_file_bytes);
  pass_limit("--max-nodes", args.max_nodes);
  pass_limit("--max-tensor-elements", args.max_tensor_elements);
  pass_limit("--max-nesting", args.max_nesting);
  pass_limit("--max-function-inlines", args.max_function_inlines);
  return child_args;
}

// What a child's check found, in a few words for its progress line: "ok", "1 error,
// 2 conditional", "unreadable (exit 2)".
std::string CheckOutcomeWords(const report::CheckSetEntry& e) {
  if (e.exit_code != 0 && e.exit_code != 1)
    return absl::StrCat("unreadable (exit ", e.exit_code, ")");
  const report::Json summary = e.report.is_object() && e.report.contains("summary")
                                   ? e.report["summary"]
                                   : report::Json::object();
  std::vector<std::string> parts;
  for (const char* kind : {"error", "conditional", "unknown"}) {
    const auto it = summary.find(kind);
    if (it != summary.end() && it->is_number_integer() && it->get<int64_t>() > 0) {
      parts.push_back(absl::StrCat(it->get<int64_t>(), " ", kind));
    }
  }
  return parts.empty() ? "ok" : absl::StrJoin(parts, ", ");
}

// Checks every model in a child of this binary; exit 2 when the set cannot be checked at all.
// Each model is a step line as its child ends (on a terminal, or with --progress in a log):
// a folder of large models is not minutes of silence (issue 44 item 8).
std::optional<int> CheckEachModel(const CheckArgs& args, const std::vector<std::string>& child_args,
                                  int64_t jobs, std::vector<report::CheckSetEntry>* entries) {
  const std::vector<std::string> models = tools::FindModels(args.positionals);
  if (models.empty()) {
    PrintError("check: no *.onnx or *.onnxtxt model found in the given folders");
    return kExitBadModel;
  }
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    PrintError("check: cannot find this program's own path (/proc/self/exe)");
    return kExitBadModel;
  }
  self[n] = '\0';
  const std::unique_ptr<support::ProgressSink> progress = MakeProgress(args);
  tools::CheckDone done;
  if (progress != nullptr) {
    done = [&progress](const report::CheckSetEntry& e, size_t finished, size_t total) {
      progress->Finished(absl::StrCat("check ", finished, "/", total, ": ", e.path),
                         CheckOutcomeWords(e), e.seconds);
    };
  }
  absl::StatusOr<std::vector<report::CheckSetEntry>> checked =
      tools::CheckModels(self, models, child_args, static_cast<int>(jobs), done);
  if (!checked.ok()) {
    PrintError(absl::StrCat("check: ", checked.status().message()));
    return kExitBadModel;
  }
  *entries = *std::move(checked);
  return std::nullopt;
}

// The set's text (on stderr when a report takes stdout), then its reports.
int ReportCheckSet(const CheckArgs& args, const std::vector<report::CheckSetEntry>& entries,
                   const std::vector<report::Finding>& findings, bool has_baseline) {
  int stdout_users = 0;
  for (const auto* out : {&args.json, &args.junit, &args.sarif}) stdout_users += *out == kStdio;
  std::string text = report::FormatCheckSetText(entries, findings, args.strict, has_baseline);
  if (args.quiet) {
    // --quiet: the summary line only, as for one model (the set's is the last line).
    const size_t start = text.rfind('\n', text.size() >= 2 ? text.size() - 2 : 0);
    if (start != std::string::npos) text.erase(0, start + 1);
  }
  PrintOut(text, /*to_stderr=*/stdout_users > 0);
  // The three reports are staged, then committed together: all of them or none.
  const absl::StatusOr<proto::InputFiles> inputs = proto::InputFiles{};
  SideOutput json, junit, sarif;
  if ((args.json.has_value() &&
       !json.Stage(*args.json, report::FormatCheckSetJson(entries, findings, args.strict),
                   inputs)) ||
      (args.junit.has_value() &&
       !junit.Stage(*args.junit, report::FormatJUnit(entries, findings, args.strict), inputs)) ||
      (args.sarif.has_value() &&
       !sarif.Stage(*args.sarif, report::FormatSarif(entries, findings, BCAST_VERSION), inputs))) {
    return kExitCannotWrite;
  }
  if (!json.Commit() || !junit.Commit() || !sarif.Commit()) return kExitCannotWrite;
  return report::SetExitCode(entries, findings, args.strict);
}

int RunCheckSet(const Command& cmd, const CheckArgs& args) {
  int64_t jobs = 0;
  if (std::optional<int> exit = CheckSetUsage(cmd, args, &jobs)) return *exit;
  std::map<std::string, int64_t> dims;
  if (absl::Status s = ParseDimSpecs(args.dims, &dims); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  std::optional<report::Baseline> baseline;
  if (std::optional<int> exit = ReadBaseline(args, &baseline)) return *exit;
  std::vector<report::CheckSetEntry> entries;
  if (std::optional<int> exit = CheckEachModel(args, ChildArgs(args, dims), jobs, &entries)) {
    return *exit;
  }
  std::vector<report::Finding> findings = report::CollectFindings(entries);
  if (baseline.has_value()) MarkKnownFindings(args, *baseline, entries, &findings);
  return ReportCheckSet(args, entries, findings, baseline.has_value());
}

// --- check of one model ---

// The one-model command line's mistakes, before the model is read.
std::optional<int> CheckOneUsage(const Command& cmd, const CheckArgs& args) {
  if (args.jobs.has_value()) return Usage(cmd, "--jobs is for several models or a folder");
  if (args.annotate != args.output.has_value()) {
    return Usage(cmd, "--annotate and -o OUT go together");
  }
  if (args.output.has_value() && args.json.has_value() && SamePath(*args.output, *args.json)) {
    return Usage(cmd, "-o OUT and --json FILE name the same file");
  }
  if (args.quiet && args.verbose) {
    return Usage(cmd, "--quiet and --verbose exclude each other");
  }
  // stdout carries one thing: the annotated model or the JSON; the text report then goes to
  // stderr.
  if (args.output == kStdio && args.json == kStdio) {
    return Usage(cmd, "-o - and --json - both want stdout");
  }
  return std::nullopt;
}

// --annotate: the model with value_info for every inferred tensor, to -o OUT.
bool SaveAnnotated(const CheckArgs& args, const proto::Model& model, proto::Model* annotated,
                   support::ProgressSink* progress) {
  const bool model_to_stdout = args.output == kStdio;
  annotated->path = model.path;
  annotated->base_dir = model.base_dir;
  annotated->file_dev = model.file_dev;
  annotated->file_ino = model.file_ino;
  support::ProgressStep save_step(model_to_stdout ? nullptr : progress,
                                 absl::StrCat("saving ", *args.output));
  absl::Status s =
      model_to_stdout ? WriteModelToStdout(*annotated) : proto::SaveModel(*annotated, *args.output);
  save_step.End(s.ok() ? "" : "failed");
  if (!s.ok()) {
    PrintError(model_to_stdout ? absl::StrCat(model.path, ": -o -: ", s.message())
                               : std::string(s.message()));
    return false;
  }
  return true;
}

// 1 for a broadcast error (or a node failing at --dim); with --strict also for what remains
// conditional or unknown.
int CheckExitCode(const CheckArgs& args, const driver::CheckOutcome& outcome) {
  const analysis::Analysis& analysis = outcome.analysis;
  const std::optional<analysis::DimEvaluation>& at = outcome.at;
  if (analysis.HasError() || (at && at->Fails(analysis))) return kExitFound;
  if (at) {
    // At bound dims a conditional node that holds there is fine.
    if (args.strict && (at->conditional > 0 || at->unknown > 0)) return kExitFound;
    return kExitOk;
  }
  if (args.strict) {
    const analysis::VerdictCounts counts = analysis.CountVerdicts();
    if (counts.conditional > 0 || counts.unknown > 0) return kExitFound;
  }
  return kExitOk;
}

// Prints the text, stages the JSON, names the first node failing at --dim, saves the annotated
// model, then commits the JSON: a failed save leaves neither.
int ReportCheck(const CheckArgs& args, const proto::Model& model,
                const driver::CheckOutcome& outcome, proto::Model* annotated,
                support::ProgressSink* progress) {
  const std::string& path = model.path;  // "<stdin>" for '-'
  const analysis::Analysis& analysis = outcome.analysis;
  const analysis::DimEvaluation* at = outcome.at ? &*outcome.at : nullptr;
  const report::CheckDetail detail = args.quiet     ? report::CheckDetail::kSummary
                                     : args.verbose ? report::CheckDetail::kAll
                                                    : report::CheckDetail::kIssues;
  // With the JSON or the model on stdout, the text report goes to stderr: a pipe gets nothing
  // but the machine-readable stream.
  PrintOut(report::FormatCheckText(analysis, path, args.lint, at, detail),
           /*to_stderr=*/args.json == kStdio || args.output == kStdio);
  SideOutput json;
  // Streamed to its file (or to stdout when no model is saved after it).
  if (args.json.has_value() &&
      !json.StageStreamed(
          *args.json,
          [&](proto::StagedOutputFiles::Sink sink) {
            return report::WriteCheckJson(analysis, path, args.lint, at, sink);
          },
          proto::InputFilesOf(model), /*stdout_now=*/!args.annotate)) {
    return kExitCannotWrite;
  }
  if (at != nullptr && at->first_failure >= 0) {
    const analysis::NodeVerdict& v = analysis.nodes[at->first_failure];
    PrintError(
        absl::StrCat(path, ": ", report::LocatedMessage(v, at->nodes[at->first_failure].message)));
  }
  if (args.annotate && !SaveAnnotated(args, model, annotated, progress)) return kExitCannotWrite;
  if (!json.Commit()) return kExitCannotWrite;
  return CheckExitCode(args, outcome);
}

int RunCheck(const Command& cmd, const CheckArgs& args) {
  if (args.positionals.empty()) return Usage(cmd, "expects a MODEL (or several, or a folder)");
  bool set = args.positionals.size() > 1 || args.junit.has_value() || args.sarif.has_value() ||
             args.baseline.has_value();
  std::error_code ec;
  set = set ||
        (args.positionals[0] != kStdio && std::filesystem::is_directory(args.positionals[0], ec));
  if (set) return RunCheckSet(cmd, args);
  if (std::optional<int> exit = CheckOneUsage(cmd, args)) return *exit;
  // --dim values are parsed before loading (a malformed one is a usage error whatever the
  // model); the names are checked against the model's symbols once it is analyzed.
  driver::CheckRequest request;
  if (absl::Status s = ParseDimSpecs(args.dims, &request.dims); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  const std::unique_ptr<support::ProgressSink> progress = MakeProgress(args);
  absl::StatusOr<proto::Model> model = Load(args.positionals[0], args, progress.get());
  if (!model.ok()) {
    PrintError(std::string(model.status().message()));
    return LoadExitCode(model.status());
  }
  request.analysis.lint = args.lint;
  request.progress = progress.get();
  proto::Model annotated;
  if (args.annotate) request.annotated = &annotated.proto;
  absl::StatusOr<driver::CheckOutcome> outcome = driver::Check(*model, request);
  if (!outcome.ok()) {
    PrintError(absl::StrCat(model->path, ": ", outcome.status().message()));
    return LoadExitCode(outcome.status());
  }
  if (!outcome->dims_status.ok()) return Usage(cmd, std::string(outcome->dims_status.message()));
  return ReportCheck(args, *model, *outcome, &annotated, progress.get());
}

}  // namespace

const Command& CheckCommand() {
  static const Command kCommand = {
      "check",
      "onnx-bcast check MODEL|DIR ... [options]   (MODEL '-': read stdin; a DIR is searched "
      "for *.onnx, *.onnxtxt)",
      "infer shapes and give every broadcasting node a verdict",
      CommandMain<CheckArgs, DeclareCheck, RunCheck>, CommandHelp<CheckArgs, DeclareCheck>};
  return kCommand;
}

}  // namespace onnx_bcast::tools
