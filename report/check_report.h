// Renders a broadcast Analysis as the human report of `onnx-bcast check` and as JSON.
#ifndef ONNX_BCAST_REPORT_CHECK_REPORT_H_
#define ONNX_BCAST_REPORT_CHECK_REPORT_H_

#include <string>

#include "absl/status/status.h"
#include "analysis/dim_evaluation.h"
#include "analysis/shape_propagation.h"
#include "report/report_json.h"

namespace onnx_bcast::report {

/// How much of the readable report FormatCheckText writes.
enum class CheckDetail {
  kSummary,  ///< the summary line only (check --quiet)
  kIssues,   ///< what needs attention, each node once; ok nodes only counted (the default)
  kAll,      ///< kIssues, then every node grouped by class (check --verbose)
};

/// The readable report, most urgent first: the summary line (its form is parsed by tools and
/// kept), then every error, condition (and the combined one) and unknown (naming the node its
/// unknown shape comes from), each on one line naming node, op, shapes, rule and reason; with
/// `at` (check --dim), an "At <bindings>:" section counting the nodes that fail, hold and stay
/// conditional there (naming the unbound symbols) and listing each failing node's message at
/// those dims and each node still conditional; with `lint`, the portability warnings. Nodes in
/// subgraphs and function bodies are named by NodePath.
std::string FormatCheckText(const analysis::Analysis& analysis, const std::string& model_path, bool lint,
                            const analysis::DimEvaluation* at = nullptr,
                            CheckDetail detail = CheckDetail::kIssues);

/// A node as people read it: its name, behind its compact graph path when it is in a subgraph
/// or a function body ("If#0/then/Add#1", "layer_1/Block/Add#0").
std::string NodePath(const analysis::NodeVerdict& v);

/// `message` about `v` (as the analysis writes them: "<op> '<node>': ...") with the node named
/// by NodePath; a message of another form gets the graph path appended as " [in <path>]".
std::string LocatedMessage(const analysis::NodeVerdict& v, const std::string& message);

/// The same as data: {"model", "nodes": [...], "combined_condition", "contradiction",
/// "summary": {"ok", "error", "conditional", "unknown", "lint"}}. Conditions are data: their
/// "symbols", "clauses" of atoms {"lhs", "rhs", "symbols"} over dim expressions, exact one-symbol
/// "sets"; combined_condition adds "per_symbol": {symbol: {"set", "clauses", "imposed_by":
/// [{"node", "op", "graph", "condition"}]}}. With `at`, every node gets "at_dims": {"outcome",
/// "inputs", "message", "unbound"} and the document "at_dims": {"bindings", "holds", "fails",
/// "conditional", "unknown", "unbound", "combined", "first_failure"}.
std::string FormatCheckJson(const analysis::Analysis& analysis, const std::string& model_path, bool lint,
                            const analysis::DimEvaluation* at = nullptr);

/// FormatCheckJson's bytes, handed to `sink` in pieces of about 64 KiB as they are written: at
/// 100k nodes the whole document (about 470 bytes a node) cost as much memory as the analysis.
/// Returns the first error of `sink`.
absl::Status WriteCheckJson(const analysis::Analysis& analysis, const std::string& model_path,
                            bool lint, const analysis::DimEvaluation* at, JsonSink sink);

}  // namespace onnx_bcast::report

#endif  // ONNX_BCAST_REPORT_CHECK_REPORT_H_
