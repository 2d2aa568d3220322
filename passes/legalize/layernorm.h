// legalize-measured's LayerNorm decomposition: LayerNormalization (opset 17) as the opset-13
// chain exporters write below opset 17 and converters fuse back: ReduceMean, Sub, Pow 2,
// ReduceMean, Add epsilon, Sqrt, Div, Mul scale, Add bias, over the normalized axes, for an
// engine that lacks the op (the driver decides whether it does). Only float32 with stash_type
// 1, a known rank, and the Mean and InvStdDev outputs unused. The chain is exact in real
// arithmetic, not bit for bit: the variance is a mean of squares in float32 as the exporters'
// chain computes it. Its broadcasts are placed afterwards like any other.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_LAYERNORM_H_
#define ONNX_BCAST_PASSES_LEGALIZE_LAYERNORM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "broadcast/shape.h"
#include "passes/rewrite_context.h"

namespace onnx_bcast::passes::legalize {

/// The decomposition of one LayerNormalization node.
struct LayerNormPlan {
  std::vector<int64_t> axes;  ///< the normalized axes, ascending
  float epsilon = 1e-5f;
  broadcast::Shape x;  ///< X's shape, also Y's
};

/// The decomposition of LayerNormalization node `id`, or nullopt with a --debug reason where it
/// cannot be made (another type or stash_type, an unknown rank, Mean or InvStdDev used).
std::optional<LayerNormPlan> LayerNormCandidate(RewriteContext* ctx, int id);

/// Replaces node `id` by `plan`'s chain, Y under its own name; `how` ends the record's detail.
void ApplyLayerNorm(RewriteContext* ctx, int id, const LayerNormPlan& plan, const std::string& how);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_LAYERNORM_H_
