// legalize-measured's concat strategy (Edit::kConcat): a computed operand given FullShape by
// Concat of copies of itself along each broadcast axis (after aligning its rank, align.h):
// exact for every type (the same elements, copied). Some engines refuse `[1,1,1,48] /
// [1,1,1,1]` and an Expand of a computed `[1,1,1,1]`, and run the Concat and the same-shape
// op. At most kMaxConcatCopies copies per axis, two axes, static shapes; offered only when the
// live oracle decides (no table measures Concat). Cost 13: it copies the data, dearer than a
// view, cheaper than a rank raise.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_CONCAT_H_
#define ONNX_BCAST_PASSES_LEGALIZE_CONCAT_H_

#include <cstdint>

#include "passes/legalize/node.h"

namespace onnx_bcast::passes::legalize {

inline constexpr int64_t kMaxConcatCopies = 64;

/// Whether operand `slot` of `node` is offered kConcat.
bool ConcatOffered(const Node& node, int slot);

/// Gives operand `slot` of `node` its FullShape by Concat of copies.
void ApplyConcat(Node* node, int slot);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_CONCAT_H_
