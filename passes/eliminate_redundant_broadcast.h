// eliminate-redundant-broadcast: the inverse of align-ranks and materialize-broadcast. Removes
// Expand, Unsqueeze, Reshape and Tile nodes whose only effect is a broadcast that every
// consumer performs anyway, cuts constants that are themselves broadcasts (all slices along an
// axis equal) back to extent 1 there, drops leading 1s of constants (keeping rank >= 1), and
// merges constants that became identical.
//
// Before:
//   g (float[N,3,4] x, float[3,1] v) => (float[N,3,4] y) {
//     x_shape = Shape(x)
//     v_expanded = Expand(v, x_shape)
//     y = Add(x, v_expanded)
//   }
// After:
//   g (float[N,3,4] x, float[3,1] v) => (float[N,3,4] y) {
//     y = Add(x, v)
//   }
//
// A node is removed only when provably equivalent: it is a pure broadcast (Expand; Unsqueeze
// of leading axes; Reshape that only prepends 1s; Tile of extent-1 axes), its output is not a
// graph output nor read by a subgraph, and every consumer is a numpy-broadcasting op (or
// PRelu's slope, Gemm's C) whose output shape is unchanged without it (onnx/optimizer's
// eliminate_nop_expand once got this wrong, its issue 275). Shape/Constant nodes and
// initializers left without uses are removed too. Nodes are visited last to first, so chains
// (Expand of an Unsqueeze) go in one run.
// Working for a target with equal ranks (whose pipeline runs it before align-ranks), only
// nodes that keep the rank go (Expand, Tile): nothing that raises a rank is removed and no constant
// is shrunk, since align-ranks would put them back and the pipeline would not be idempotent.
// Requires: nothing; an Expand whose input cannot be expanded to its constant shape is an
// InvalidArgument error. Guarantees: same values and output shapes. Idempotent: yes.
#ifndef ONNX_BCAST_PASSES_ELIMINATE_REDUNDANT_BROADCAST_H_
#define ONNX_BCAST_PASSES_ELIMINATE_REDUNDANT_BROADCAST_H_

#include "passes/pass.h"

namespace onnx_bcast::passes {

BCAST_DECLARE_PASS(EliminateRedundantBroadcast);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_ELIMINATE_REDUNDANT_BROADCAST_H_
