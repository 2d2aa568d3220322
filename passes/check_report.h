// Renders a broadcast Analysis as the human report of `onnx-bcast check` and as JSON.
#pragma once

#include <string>

#include "passes/shape_propagation.h"

namespace onnx_bcast::passes {

/// The readable report: a summary line, nodes grouped by class, then every error, condition,
/// unknown and (with `lint`) portability warning, each on one line naming node, op, shapes,
/// rule and reason.
std::string FormatCheckText(const Analysis& analysis, const std::string& model_path, bool lint);

/// The same as data: {"model", "nodes": [...], "combined_condition", "contradiction",
/// "summary": {"ok", "error", "conditional", "unknown", "lint"}}.
std::string FormatCheckJson(const Analysis& analysis, const std::string& model_path, bool lint);

}  // namespace onnx_bcast::passes
