// Renders a broadcast Analysis as the human report of `onnx-bcast check` and as JSON.
#pragma once

#include <string>

#include "passes/dim_evaluation.h"
#include "passes/shape_propagation.h"

namespace onnx_bcast::passes {

/// The readable report: a summary line, nodes grouped by class, then every error, condition,
/// unknown and (with `lint`) portability warning, each on one line naming node, op, shapes,
/// rule and reason.
/// With `at` (check --dim), an "At <bindings>:" section counts the nodes that fail, hold and
/// stay conditional there (naming the unbound symbols) and lists each failing node's message
/// at those dims and each node still conditional.
std::string FormatCheckText(const Analysis& analysis, const std::string& model_path, bool lint,
                            const DimEvaluation* at = nullptr);

/// The same as data: {"model", "nodes": [...], "combined_condition", "contradiction",
/// "summary": {"ok", "error", "conditional", "unknown", "lint"}}. Conditions are data: their
/// "symbols", "clauses" of atoms {"lhs", "rhs", "symbols"} over dim expressions, exact one-symbol
/// "sets"; combined_condition adds "per_symbol": {symbol: {"set", "clauses", "imposed_by":
/// [{"node", "op", "graph", "condition"}]}}. With `at`, every node gets "at_dims": {"outcome",
/// "inputs", "message", "unbound"} and the document "at_dims": {"bindings", "holds", "fails",
/// "conditional", "unknown", "unbound", "combined", "first_failure"}.
std::string FormatCheckJson(const Analysis& analysis, const std::string& model_path, bool lint,
                            const DimEvaluation* at = nullptr);

}  // namespace onnx_bcast::passes
