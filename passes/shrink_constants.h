// The constant half of eliminate-redundant-broadcast: constants that are broadcasts of a
// smaller tensor are cut back to it, then shrunk constants identical to another are merged.
// Requires a target without equal ranks (align-ranks would give the leading 1s back).
#ifndef ONNX_BCAST_PASSES_SHRINK_CONSTANTS_H_
#define ONNX_BCAST_PASSES_SHRINK_CONSTANTS_H_

#include <set>
#include <string>

#include "passes/broadcast_consumers.h"
#include "passes/rewrite_context.h"

namespace onnx_bcast::passes {

/// Cuts every constant whose consumers all broadcast it to extent 1 along its uniform axes and
/// drops its leading 1s (keeping rank >= 1); returns the names of the constants it shrank.
std::set<std::string> ShrinkConstants(RewriteContext& ctx, BroadcastConsumers& consumers);

/// Replaces a shrunk constant identical to another constant (type, dims, bytes) by it:
/// materialize-broadcast's per-shape copies of one constant come back together.
void MergeShrunkConstants(RewriteContext& ctx, const std::set<std::string>& shrunk);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_SHRINK_CONSTANTS_H_
