// align-ranks: gives the lower-rank operands of every broadcasting op leading 1s, so that each
// broadcast is between operands of equal rank (pnnx insert_reshape_numpy_binaryop_broadcast,
// and converters' other rank-alignment passes), in one linear walk.
//
// Before:
//   g (float[N,8,16,16] x, float[16] v) => (float[N,8,16,16] y) <float[8,1,1] b = {...}> {
//     t = Add(x, b)
//     y = Mul(t, v)
//   }
// After:
//   <float[1,8,1,1] b = {...}> {       # constant: leading 1s folded (copy when shared)
//     t = Add(x, b)
//     v_unsqueezed = Unsqueeze(v, unsqueeze_axes_0_1_2)   # non-constant: rank-only Unsqueeze
//     y = Mul(t, v_unsqueezed)
//   }
//
// Covers Add/Sub/.../Equal, Sum/Mean/Max/Min (opset >= 8), Where, PRelu's slope (to X's rank),
// Gemm's C (to rank 2) and MatMul batch dims (both operands of rank >= 2).
// Requires: numpy semantics (opset >= 7; legacy-form nodes are left alone, see
// upgrade-legacy-broadcast). Operands of unknown rank are left alone; operands that cannot
// broadcast are an InvalidArgument error naming the node, its shapes and the rule.
// Guarantees: every covered op whose operand ranks are known has operands of equal rank;
// values and output shapes are unchanged (Unsqueeze and dims changes are exact).
// Idempotent: yes.
#ifndef ONNX_BCAST_PASSES_ALIGN_RANKS_H_
#define ONNX_BCAST_PASSES_ALIGN_RANKS_H_

#include "passes/pass.h"

namespace onnx_bcast::passes {

BCAST_DECLARE_PASS(AlignRanks);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_ALIGN_RANKS_H_
