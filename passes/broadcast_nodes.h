// The walk align-ranks and materialize-broadcast share: every node of a graph that broadcasts
// in a numpy form (RewriteContext::NumpyFormBroadcast), visited once, in order.
#ifndef ONNX_BCAST_PASSES_BROADCAST_NODES_H_
#define ONNX_BCAST_PASSES_BROADCAST_NODES_H_

#include <optional>

#include "absl/status/status.h"
#include "analysis/broadcast_ops.h"
#include "passes/rewrite_context.h"
#include "support/status_macros.h"

namespace onnx_bcast::passes {

/// Calls `visit(id, op)` (an absl::Status) for each original node of `ctx`'s graph that
/// broadcasts in a numpy form, in order; stops at the first error and returns it.
template <typename Visit>
absl::Status ForEachNumpyFormBroadcast(RewriteContext& ctx, const Visit& visit) {
  for (int id = 0; id < ctx.graph().original_node_count(); ++id) {
    const std::optional<analysis::BroadcastOp> op = ctx.NumpyFormBroadcast(id);
    if (op.has_value()) BCAST_RETURN_IF_ERROR(visit(id, *op));
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_BROADCAST_NODES_H_
