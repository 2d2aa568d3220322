// legalize-measured: moves every broadcasting node that the target's measured table (its per-op
// rules, `onnx-bcast probe-engine`) does not mark as running into a cell that it does, by the
// cheapest rewrite that lands there. Each candidate is decided by DecideForm, the lookup the
// target check uses, on the shapes and operand kinds the node would have after the rewrite;
// a node already in a running cell is never touched.
//
// Before (OpenCV 4.6: Div(small, big) computes wrongly unless both have the output's shape):
//   g (float[2,3,4,5] x, float[3,4,5] d) => (float[2,3,4,5] z) {
//     z = Div (d, x)
//   }
// After:
//   d_reshaped = Reshape (d, reshape_shape_1_3_4_5)
//   d_reshaped_expanded = Expand (d_reshaped, expand_shape)   # one leading axis: runs
//   z = Div (d_reshaped_expanded, x)                           # computed, same shape: runs
//
// Candidates, cheapest first (costs add up; the first that fits is applied):
//   - swap the operands of a commutative op (Add, Mul, Max, Min, Sum, Mean, Equal, And, Or,
//     Xor, Bitwise*), or of Greater/Less (and ...OrEqual), which then become Less/Greater;
//   - fold a node whose operands are all constant into one initializer (with the driver's
//     evaluator);
//   - per operand: align its rank (a constant gets leading 1s folded in; a computed operand a
//     Reshape to a constant shape when static, which static engines run where a multi-axis
//     Unsqueeze is refused, else an Unsqueeze), or give it the output's shape (a constant is
//     broadcast into a new initializer up to the fold limit; otherwise the operand is aligned,
//     then expanded to a constant shape, or to a run-time shape where the target allows it).
//     PRelu's slope takes X's rank or shape; MatMul operands only align.
//   - on a view of the operands (static shapes): reshaped to the collapsed broadcast, the two
//     axes of a rank-2 view optionally transposed, the result reshaped back (see View);
// When none lands, the candidates are tried once more with constants broadcast up to
// fold-constants' limit (PassOptions::constant_fold_limit_bytes) instead of --fold-limit.
// A node no candidate places is left as it is with a debug reason; the target check lists it
// (opt exits 3).
// Requires: numpy semantics (opset >= 7) and a target (PassOptions::target) with per-op rules.
// Guarantees: every node it rewrites, and every Expand it inserts, is in a cell the table marks
// as running, by the same lookup as the target check; values unchanged. Idempotent: yes (a placed
// node fits, so a second run leaves it; an unplaceable one is left both times).
#ifndef ONNX_BCAST_PASSES_LEGALIZE_MEASURED_H_
#define ONNX_BCAST_PASSES_LEGALIZE_MEASURED_H_

#include <memory>

#include "passes/pass.h"

namespace onnx_bcast::passes {

/// legalize-measured: the table in PassOptions::target (FailedPrecondition when none is given).
std::unique_ptr<Pass> CreateLegalizeMeasuredPass();

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_LEGALIZE_MEASURED_H_
