// legalize-measured's expand strategy (Edit::kFull): an operand given FullShape (the output's
// shape; PRelu's slope X's shape). A constant is broadcast into a new initializer up to the
// fold limit; any other operand is aligned (align.h), then expanded to a constant shape, or to
// a run-time shape where the target allows those. Cost 3 for a constant, 4 for a computed
// operand. Guarantees: the same values.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_EXPAND_H_
#define ONNX_BCAST_PASSES_LEGALIZE_EXPAND_H_

#include "absl/status/status.h"
#include "passes/legalize/node.h"

namespace onnx_bcast::passes::legalize {

/// Whether operand `slot` of `node` is offered kFull.
bool ExpandOffered(const Node& node, int slot);

/// Gives operand `slot` of `node` its FullShape.
absl::Status ApplyExpand(Node* node, int slot);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_EXPAND_H_
