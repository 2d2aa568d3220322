// LayerNormalization decomposed for an engine that lacks the op, as part of legalize-measured.
//
// LayerNormalization (opset 17) as the opset-13 chain exporters write below opset 17 and
// converters fuse back: ReduceMean, Sub, Pow 2, ReduceMean, Add epsilon, Sqrt, Div, Mul scale,
// Add bias, over the normalized axes. OpenCV 4.6 and ncnn's converter have no
// LayerNormalization. Decided live when the oracle can run the node (decomposed when it does
// not run and match), else by the table (decomposed when the profile measures no
// op.LayerNormalization rule). Only float32 with stash_type 1, a known rank, and the Mean and
// InvStdDev outputs unused. The chain is exact in real arithmetic, not bit for bit: the
// variance is a mean of squares in float32 as the exporters' chain computes it.
#ifndef ONNX_BCAST_PASSES_LAYERNORM_DECOMPOSER_H_
#define ONNX_BCAST_PASSES_LAYERNORM_DECOMPOSER_H_

#include "absl/status/status.h"
#include "passes/rewrite_context.h"
#include "targets/targets.h"

namespace onnx_bcast::passes {

/// Decomposes LayerNormalization node `id` of `ctx`'s graph where `profile`'s engine (live, or
/// by its table) does not run it; leaves it, with a --debug reason, where it cannot (another
/// type or stash_type, an unknown rank, Mean or InvStdDev used) or need not.
absl::Status DecomposeLayerNorm(RewriteContext* ctx, const targets::TargetProfile& profile, int id);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_LAYERNORM_DECOMPOSER_H_
