// upgrade-legacy-broadcast: rewrites opset < 7 broadcasting (binary ops with `broadcast=1` and
// `axis`, PRelu's per-channel slope, Gemm's `broadcast`) to numpy semantics and raises the
// default-domain opset to 7.
//
// Before (opset 6):
//   g (float[1,3,4,5] a, float[3] b) => (float[1,3,4,5] c) {
//     c = Add <broadcast: int = 1, axis: int = 1> (a, b)
//   }
// After (opset 7):
//   g (float[1,3,4,5] a, float[3] b) => (float[1,3,4,5] c) {
//     b_unsqueezed = Unsqueeze <axes: ints = [1, 2]> (b)    # b becomes [3,1,1]
//     c = Add (a, b_unsqueezed)
//   }
//
// The Unsqueeze is rank-only (trailing axes up to rank(A) - axis), so it is right for any axis
// and for symbolic dims; libonnx 1.12's version converter gets axis != rank(A) - rank(B)
// wrong. When B's trailing 1s run past A's last axis a Reshape (copying kept dims with 0) is
// used instead. Other ops whose schema changes between the model's opset and 7 go through
// libonnx's version converter; when it fails the pass refuses (Unimplemented) naming them.
// Requires: ranks of A and B known for every `broadcast=1` node; no legacy node inside a
// subgraph. Guarantees: default-domain opset 7, no `broadcast`/`axis` attributes, same values.
// Idempotent: yes (a model at opset >= 7 is left unchanged).
#ifndef ONNX_BCAST_PASSES_UPGRADE_LEGACY_BROADCAST_H_
#define ONNX_BCAST_PASSES_UPGRADE_LEGACY_BROADCAST_H_

#include "passes/pass.h"

namespace onnx_bcast::passes {

BCAST_DECLARE_PASS(UpgradeLegacyBroadcast);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_UPGRADE_LEGACY_BROADCAST_H_
