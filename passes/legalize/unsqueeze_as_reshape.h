// legalize-measured's unsqueeze-as-reshape strategy: an Unsqueeze or Squeeze (opset >= 13) at
// static shapes that the target's engine refuses or miscomputes, decided live (form_oracle.h),
// becomes a Reshape to its constant output shape where the engine runs and matches that. An engine
// may refuse Unsqueeze(axes = [-1]) at load; with the dims bound the same view is a Reshape to a
// constant shape, which it may run.
//
// Before (x [1,16] computed):  y = Unsqueeze (x, axes)        # axes = [-1]
// After:                       y = Reshape (x, shape)         # shape = [1,16,1]
//
// Requires: a live oracle (PassOptions::live); without one nothing is rewritten, as no table
// measures views. Guarantees: values unchanged (both are views of the same elements), the
// output keeps its name; a node the engine already runs is never touched.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_UNSQUEEZE_AS_RESHAPE_H_
#define ONNX_BCAST_PASSES_LEGALIZE_UNSQUEEZE_AS_RESHAPE_H_

#include "absl/status/status.h"
#include "passes/rewrite_context.h"

namespace onnx_bcast::passes::legalize {

/// The view strategy over every node of `ctx`'s graph (main graph only: the oracle takes
/// fragments of it).
absl::Status LegalizeViews(RewriteContext& ctx);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_UNSQUEEZE_AS_RESHAPE_H_
