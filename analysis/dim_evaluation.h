// Evaluates a broadcast Analysis with some symbolic dims bound to numbers (`check --dim`, the
// API's CheckOptions::dims, Python's check(dims=...)): which nodes hold there, which fail (with
// the message of a proven error at those dims) and which still depend on unbound symbols.
//
// Requires: an Analysis made with verdicts (AnalysisOptions::verdicts), and its shapes when the
// bound names are to be checked against every symbol the model has (record_shapes).
// Guarantees: no re-analysis; a node's outcome follows from its verdict and its exact
// condition (ConditionSet::Evaluate), so a conditional node holds exactly when its condition
// holds at the bindings. A failing node's message is the walk's own error message
// (DecideAgain, decide_node.h) on its input shapes with the bound symbols substituted. Linear in
// the nodes (and, for the symbol list, in the recorded shapes).
#ifndef ONNX_BCAST_ANALYSIS_DIM_EVALUATION_H_
#define ONNX_BCAST_ANALYSIS_DIM_EVALUATION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/shape_propagation.h"
#include "broadcast/shape.h"

namespace onnx_bcast::analysis {

using DimBindings = std::map<std::string, int64_t>;

/// What a node does at the bound dims.
enum class DimOutcome {
  kHolds,        ///< valid there (ok, or its condition holds)
  kFails,        ///< invalid there (a proven error, or its condition is false)
  kConditional,  ///< its condition needs symbols that are not bound
  kUnknown,      ///< the analysis could not decide it (unknown dims or rank)
};

/// "holds", "fails", "conditional", "unknown".
std::string_view DimOutcomeName(DimOutcome outcome);

struct NodeDimEvaluation {
  DimOutcome outcome = DimOutcome::kHolds;
  /// The node's input shapes with the bound symbols substituted (report order, as
  /// NodeVerdict::inputs); filled for every outcome but kHolds of an ok node.
  std::vector<broadcast::Shape> inputs;
  /// kFails: the one-line error message at these dims (node, op, shapes, rule, reason);
  /// kConditional: what the condition still requires with the bound values substituted;
  /// kUnknown: the verdict's message.
  std::string message;
  /// kConditional: the symbols of its condition that are not bound, sorted.
  std::vector<std::string> unbound;
};

struct DimEvaluation {
  DimBindings bindings;
  /// Parallel to Analysis::nodes.
  std::vector<NodeDimEvaluation> nodes;
  int64_t holds = 0, fails = 0, conditional = 0, unknown = 0;
  /// Index (into nodes) of the first node that fails; -1 when none does.
  int64_t first_failure = -1;
  /// The combined condition at the bindings (nullopt while it needs unbound symbols).
  std::optional<bool> combined;
  /// Symbols that conditions still need and that are not bound, sorted.
  std::vector<std::string> unbound;

  /// True when a node fails at these dims or the combined conditions contradict.
  bool Fails(const Analysis& analysis) const {
    return fails > 0 || !analysis.contradiction.empty();
  }
};

/// Every symbol the analysis knows (graph-input dims, fresh data-dependent extents, symbols of
/// conditions), sorted; opaque placeholders (`opaque#<n>`) are left out.
std::vector<std::string> AnalysisSymbols(const Analysis& analysis);

/// Evaluates every node of `analysis` at `bindings`. InvalidArgument when a bound name is not a
/// symbol of the analysis (the message lists the model's symbols) or a value is below 1
/// (symbols are extents >= 1; docs/symbolic-shapes.md).
absl::StatusOr<DimEvaluation> EvaluateAtDims(const Analysis& analysis, const DimBindings& bindings);

/// "H=24, W=32".
std::string DimBindingsToString(const DimBindings& bindings);

}  // namespace onnx_bcast::analysis

#endif  // ONNX_BCAST_ANALYSIS_DIM_EVALUATION_H_
