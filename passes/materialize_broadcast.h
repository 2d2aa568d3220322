// materialize-broadcast: for engines that cannot broadcast at all, gives every operand that
// needs a broadcast an explicit Expand to the op's output shape.
//
// Before (after align-ranks):
//   g (float[2,3,4] x, float[1,3,1] v) => (float[2,3,4] y) <float[1,1,4] b = {...}> {
//     t = Add(x, v)
//     y = Mul(t, b)
//   }
// After:
//   <float[2,3,4] b = {...}, int64[3] expand_shape = {2,3,4}> {   # b below --fold-limit
//     v_expanded = Expand(v, expand_shape)
//     t = Add(x, v_expanded)
//     y = Mul(t, b)
//   }
// With symbolic dims the target is `Shape` of the other operands (Expand is bidirectional):
//   x_shape = Shape(x)
//   v_expanded = Expand(v, x_shape)
//
// Covers the multidirectional ops, PRelu's slope and Gemm's C (static shapes only); MatMul
// batch dims are left to the engine. A constant is broadcast into an initializer only when the
// result is at most --fold-limit bytes; the report gives the bytes that costs.
// Requires: numpy semantics (opset >= 7); Expand needs opset 8, raised from 7 when no op in the
// model changes meaning (else Unimplemented). Guarantees: every covered op whose shapes are
// known has operands of exactly its output shape. Idempotent: yes.
#ifndef ONNX_BCAST_PASSES_MATERIALIZE_BROADCAST_H_
#define ONNX_BCAST_PASSES_MATERIALIZE_BROADCAST_H_

#include "passes/pass.h"

namespace onnx_bcast::passes {

BCAST_DECLARE_PASS(MaterializeBroadcast);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_MATERIALIZE_BROADCAST_H_
