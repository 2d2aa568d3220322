// legalize-measured: moves every broadcasting node that the target's measured table (its per-op
// rules, `onnx-bcast probe-engine`) does not mark as running into a cell that it does, by the
// cheapest rewrite that lands there. Each candidate is decided by DecideForm, the lookup the
// target check uses, on the shapes and operand kinds the node would have after the rewrite;
// a node already in a running cell is never touched.
//
// Before (a target whose table marks Div(small, big) as computing wrongly unless both operands
// have the output's shape):
//   g (float[2,3,4,5] x, float[3,4,5] d) => (float[2,3,4,5] z) {
//     z = Div (d, x)
//   }
// After:
//   d_reshaped = Reshape (d, reshape_shape_1_3_4_5)
//   d_reshaped_expanded = Expand (d_reshaped, expand_shape)   # one leading axis: runs
//   z = Div (d_reshaped_expanded, x)                           # computed, same shape: runs
//
// Candidates come from the strategies in passes/legalize/, one file each, which know no engine
// (costs add up; the first candidate that fits is applied, ties in enumeration order):
//   - fold_node: a node whose operands are all constant computed into one initializer (with
//     the driver's evaluator);
//   - swap: the operands of a commutative op, or of Greater/Less (and ...OrEqual) swapped;
//   - per operand: align (its rank raised), expand (the output's shape), multiply_by_ones
//     (the output's shape as Mul(ones, operand)), concat (as Concat of copies; live only).
//     PRelu's slope takes X's rank or shape; MatMul operands only align;
//   - view: computed on the collapsed broadcast of its operands (static shapes), the axes of
//     a rank-2 view optionally transposed, the result reshaped back; rank_raise: the same
//     view with unit axes inserted at every placement up to the op's measured rank.
// LayerNormalization comes first: decomposed (layernorm) where the target does not run it.
// Each candidate is judged (legalize/judge.h) by DecideNode and DecideForm at the shapes and
// operand kinds the node would have, or run on the engine when a live oracle is given.
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

#include "passes/pass.h"

namespace onnx_bcast::passes {

/// legalize-measured: the table in PassOptions::target (FailedPrecondition when none is given).
BCAST_DECLARE_PASS(LegalizeMeasured);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_LEGALIZE_MEASURED_H_
