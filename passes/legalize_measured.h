// legalize-measured: moves every broadcasting node that the target's measured table (its per-op
// rules, `onnx-bcast probe-engine`) does not mark as running into a cell that it does, by the
// cheapest rewrite that lands there. Each candidate is decided by DecideForm, the lookup the
// target check uses, on the shapes and operand kinds the node would have after the rewrite;
// a node already in a running cell is never touched.
//
// Before (OpenCV 4.6: Max with a computed rank-0 operand crashes the engine; Div(small, big)
// computes wrongly):
//   g (float[1,3,4,5] x, float s, float[1,3,1,1] d) => (float[1,3,4,5] y, float[1,3,4,5] z) {
//     y = Max (x, s)
//     z = Div (d, x)
//   }
// After:
//   s_reshaped = Reshape (s, reshape_shape_1_1_1_1)
//   s_reshaped_expanded = Expand (s_reshaped, expand_shape)    # computed, same shape: runs
//   y = Max (x, s_reshaped_expanded)
//   d_expanded = Expand (d, expand_shape)
//   z = Div (d_expanded, x)
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
// A node no candidate places is left as it is with a debug reason; the target check lists it
// (opt exits 3).
// Requires: numpy semantics (opset >= 7) and a target (PassOptions::target) with per-op rules.
// Guarantees: every node it rewrites, and every Expand it inserts, is in a cell the table marks
// as running, by the same lookup as the target check; values unchanged. Idempotent: yes (a placed node fits, so a
// second run leaves it; an unplaceable one is left both times).
#ifndef ONNX_BCAST_PASSES_LEGALIZE_MEASURED_H_
#define ONNX_BCAST_PASSES_LEGALIZE_MEASURED_H_

#include <memory>

#include "passes/pass.h"

namespace onnx_bcast::passes {

/// legalize-measured: the table in PassOptions::target (FailedPrecondition when none is given).
std::unique_ptr<Pass> CreateLegalizeMeasuredPass();

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_LEGALIZE_MEASURED_H_
