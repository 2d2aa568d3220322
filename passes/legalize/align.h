// legalize-measured's rank-align strategy (Edit::kAlign): an operand given leading 1s up to
// AlignRank (the output's rank; PRelu's slope X's rank; MatMul's operands the larger one).
// A constant gets them folded in; a static computed operand a Reshape to a constant shape
// (static engines run that where a multi-axis Unsqueeze is refused); any other an Unsqueeze.
// Cost 1 for a constant, 2 for a computed operand. Guarantees: the same values.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_ALIGN_H_
#define ONNX_BCAST_PASSES_LEGALIZE_ALIGN_H_

#include <cstdint>

#include "passes/legalize/node.h"

namespace onnx_bcast::passes::legalize {

/// Whether operand `slot` of `node` is offered kAlign (AlignRank above its rank).
bool AlignOffered(const Node& node, int slot);

/// Leading 1s for operand `slot` of node `id` up to `rank` (nothing when it has that rank or
/// an unknown one). Expand and Concat align their operand first with it.
void AlignOperandRank(RewriteContext* ctx, int id, int slot, int64_t rank);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_ALIGN_H_
