// The one place legalize-measured's strategies build a rewrite record for opt's log and report.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_RECORD_H_
#define ONNX_BCAST_PASSES_LEGALIZE_RECORD_H_

#include <cstdint>
#include <string>

#include "passes/rewrite_context.h"

namespace onnx_bcast::passes::legalize {

/// Logs that node `id` was rewritten: `action` ("inserted", "converted", "folded") on `tensor`,
/// its shape `before` and `after` (either may be empty), `detail`, and `bytes` of initializers
/// added.
void RecordRewrite(RewriteContext* ctx, int id, std::string action, std::string tensor,
                   std::string before, std::string after, std::string detail, int64_t bytes = 0);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_RECORD_H_
