// Reports over a set of models checked in one call (`check MODEL|DIR ...`, issue 25): the text
// summary, one JSON document holding every model's report, JUnit XML for test reporters and
// SARIF 2.1.0 for code-scanning dashboards, and a baseline that accepts known findings.
//
// Each model's own report is the `check --json` document (docs/report-schema.md); a finding is
// one node of it that is not ok (an error, a condition, an unknown) or one lint warning, keyed
// by model path, node path, op and kind (never by line or order), so that a baseline matches
// across runs and reorderings.
#ifndef ONNX_BCAST_REPORT_CHECK_SET_REPORT_H_
#define ONNX_BCAST_REPORT_CHECK_SET_REPORT_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "report/report_json.h"

namespace onnx_bcast::report {

/// One model of the set.
struct CheckSetEntry {
  std::string path;   ///< as the user named it (or as found under a folder)
  int exit_code = 0;  ///< the single-model check's: 0, 1 (findings), 2 (unreadable), 3, 64
  std::string text;   ///< what the single-model check printed (its summary line, or the error)
  Json report;        ///< its --json document; null when it could not be read
  double seconds = 0;
};

/// What a finding is, for the exit code, JUnit and SARIF.
enum class FindingKind { kError, kConditional, kUnknown, kLint };

struct Finding {
  std::string model;
  std::string node_path;  ///< the report's "path" (owning graphs / node)
  std::string op;
  FindingKind kind = FindingKind::kError;
  std::string
      rule;  ///< "broadcast-error", "conditional-broadcast", "unknown-shape", "lint/<class>"
  std::string message;
  bool known = false;  ///< in the baseline

  /// The key a baseline matches on.
  std::tuple<std::string, std::string, std::string, std::string> Key() const {
    return {model, node_path, op, rule};
  }
};

/// Every finding of `entries`, in model order then report order.
std::vector<Finding> CollectFindings(const std::vector<CheckSetEntry>& entries);

/// A baseline: the finding keys of a previous `check --json` (a set document or one model's),
/// and the models it covered. InvalidArgument when `text` is not such a document.
struct Baseline {
  std::set<std::tuple<std::string, std::string, std::string, std::string>> findings;
  std::set<std::string> models;
};
absl::StatusOr<Baseline> ParseBaseline(std::string_view text);

/// Where the relative model paths of a baseline and of this run start from: a baseline made
/// with `check zoo/` matches `check ./zoo`, an absolute path, another working directory or
/// another checkout (issue 44 item 8).
struct BaselinePaths {
  std::string cwd;           ///< this run's working directory, absolute
  std::string baseline_dir;  ///< the folder the baseline file is in, absolute
};

/// The model of `baseline` each of `models` (this run's paths) is, when any: the same file
/// (both resolved, the baseline's relative paths against `where.cwd` and against
/// `where.baseline_dir`), else the one baseline model whose path ends in the most trailing
/// components of the model's absolute path (at least its folder and name, or the whole
/// baseline path; a tie matches none).
std::map<std::string, std::string> MatchBaselineModels(const Baseline& baseline,
                                                       const std::vector<std::string>& models,
                                                       const BaselinePaths& where);

/// Marks findings the baseline holds as known, matching models by MatchBaselineModels' map.
/// Returns how many of this run's models the baseline matched.
int64_t ApplyBaseline(const Baseline& baseline, const std::map<std::string, std::string>& matched,
                      std::vector<Finding>* findings);
/// Marks findings the baseline holds as known, model paths compared as written.
void ApplyBaseline(const Baseline& baseline, std::vector<Finding>* findings);

/// A stable identity of a finding for SARIF's partialFingerprints: a hash of its model path
/// (lexically normalized, leading "./" and "../" dropped), node path, op and rule, the same
/// across runs that name the model alike.
std::string FindingFingerprint(const Finding& f);

/// True when `f` counts toward the exit code: an error always, a condition or an unknown with
/// `strict`, a lint never; and only when it is new (not known).
bool Counts(const Finding& f, bool strict);

/// The exit code of the set: 2 when a model cannot be read (or its check failed otherwise),
/// else 1 when a finding counts, else 0.
int SetExitCode(const std::vector<CheckSetEntry>& entries, const std::vector<Finding>& findings,
                bool strict);

/// Per model its summary line (and, with a baseline or for findings that count, one indented
/// line per finding, marked new or known), then one total line.
std::string FormatCheckSetText(const std::vector<CheckSetEntry>& entries,
                               const std::vector<Finding>& findings, bool strict,
                               bool with_baseline);

/// {"schema_version", "kind": "check-set", "models": [report | {"model", "error", "exit"}],
///  "summary": {...}}.
std::string FormatCheckSetJson(const std::vector<CheckSetEntry>& entries,
                               const std::vector<Finding>& findings, bool strict);

/// JUnit XML: one testsuite, one testcase per model; <failure> for findings that count
/// (errors; conditions and unknowns under strict), <error> for an unreadable model.
std::string FormatJUnit(const std::vector<CheckSetEntry>& entries,
                        const std::vector<Finding>& findings, bool strict);

/// SARIF 2.1.0: one run, one rule per finding kind (each lint class its own), each result with
/// the model file as its artifact location and the node path as a logical location; levels
/// error (broadcast error, unreadable model), warning (condition, unknown), note (lint).
std::string FormatSarif(const std::vector<CheckSetEntry>& entries,
                        const std::vector<Finding>& findings, const std::string& version);

}  // namespace onnx_bcast::report

#endif  // ONNX_BCAST_REPORT_CHECK_SET_REPORT_H_
