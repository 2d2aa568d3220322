// legalize-measured's rewrite of a node by a chosen candidate: each part of the plan handed to
// the strategy that offered it (fold_node, swap, then per operand align, expand,
// multiply_by_ones or concat; or view for a view or rank-raise plan).
#ifndef ONNX_BCAST_PASSES_LEGALIZE_APPLY_H_
#define ONNX_BCAST_PASSES_LEGALIZE_APPLY_H_

#include "absl/status/status.h"
#include "passes/legalize/fold_node.h"
#include "passes/legalize/node.h"

namespace onnx_bcast::passes::legalize {

/// Rewrites `node` as `plan` says (`types`: the constants a fold may leave).
absl::Status ApplyPlan(Node* node, const Plan& plan, const ConstantTypes& types);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_APPLY_H_
