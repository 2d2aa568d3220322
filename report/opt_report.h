// What `opt` prints and writes: per-pass counts, every rewrite (--dry-run, --debug), and the
// JSON log of --report.
#ifndef ONNX_BCAST_REPORT_OPT_REPORT_H_
#define ONNX_BCAST_REPORT_OPT_REPORT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "passes/pass_manager.h"
#include "report/report_json.h"
#include "targets/targets.h"

namespace onnx_bcast::report {

struct OptReport {
  std::string model_path;
  std::string output_path;  ///< empty for --dry-run
  std::string target;       ///< target name, or empty for --passes
  std::vector<passes::PassRun> runs;
  passes::ModelSummary before;
  passes::ModelSummary after;
  std::vector<std::string> violations;  ///< nodes outside the target's table afterwards
  /// The same violations as records (node, op, shapes, rule), in the same order.
  std::vector<targets::TargetViolation> violation_details;
  /// Violations the engine disproved: nodes left in the form the model as given already had,
  /// in a model the target's engine runs and matches as given (opt never refuses those).
  std::vector<std::string> waived;
  std::string error;                ///< the error that stopped the pipeline, if any
  double target_check_seconds = 0;  ///< time spent checking the target's promise
  /// "live on <engine> <version>: <what it ran>" when the installed engine decided the nodes at
  /// their exact shapes (targets/form_oracle.h); empty when the table alone decided.
  std::string decided_by;
  /// Symbols bound before the passes ran (opt --dim, --input-shape); empty: none.
  std::map<std::string, int64_t> bindings;
  /// Declared dims the bindings made numbers.
  int64_t dims_fixed = 0;
  /// Ops of the written model that the target's engine has no layer for
  /// (TargetProfile::unsupported_ops), with their node counts in every graph, by op name. Not
  /// broadcast forms: reported, never a failure.
  std::map<std::string, int64_t> unsupported_ops;
  /// `opt --verify-engine`: the one line saying how the written model fared on the engine
  /// ("ncnn: runs, max abs 3e-06"), and the outcome's kind ("ran", "wrong", "refused",
  /// "crashed", "timed-out"); empty without the flag.
  std::string engine_line;
  std::string engine_outcome;
  /// The dims the engine ran at ("N=1, H=32, W=32"; the unbound ones chosen by opt, said so).
  std::string engine_dims;
  /// When the engine computes the written model wrongly: the first node whose output differs
  /// there (engine bisection, engines/engine_bisect.h), one line; empty otherwise.
  std::string engine_divergence;
  /// Why the written model was not run on the engine (no adapter in this build, turned off,
  /// our executor cannot run it at those dims); empty when it ran or the target has no engine.
  std::string engine_note;
  /// Set when opt refused to write the result (the report is then the one output, issue 44
  /// item 1): the exit code and why, in one line ("target ncnn not met: 2 node(s) not in its
  /// form"); exit 0 and empty when the result is written.
  int refused_exit = 0;
  std::string refused;
};

/// One line per pass ("align-ranks: 2 inserted, ..."); with `rewrites`, each rewrite indented
/// below its pass; with `debug`, the "does not apply" reasons too.
std::string FormatOptText(const OptReport& report, bool rewrites, bool debug);

/// The --report JSON document (docs/report-schema.md), as data and as text. Without
/// `with_rewrites` every pass's "rewrites" is left empty (FormatOptJson writes them itself,
/// one by one, so the text has the same bytes without the quarter-million-record DOM of a
/// 1M-node model).
Json OptReportJson(const OptReport& report, bool with_rewrites = true);
std::string FormatOptJson(const OptReport& report);

/// FormatOptJson's bytes, handed to `sink` in pieces of about 64 KiB as they are written: at
/// 1M nodes the text is 77 MB. Returns the first error of `sink`.
absl::Status WriteOptJson(const OptReport& report, JsonSink sink);

/// Reads an --report document back (verify names the pass behind a divergence with it).
/// InvalidArgument when `text` is not JSON, has no "passes" array, or comes from a newer
/// schema_version; keys missing from an older document read as empty.
absl::StatusOr<OptReport> ParseOptReport(std::string_view text);

}  // namespace onnx_bcast::report

#endif  // ONNX_BCAST_REPORT_OPT_REPORT_H_
