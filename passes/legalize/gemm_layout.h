// legalize-measured's Gemm strategy: a Gemm with a constant B and transB = 0 that the target's
// engine refuses or computes wrongly at its exact shapes, decided live (form_oracle.h), takes B
// transposed (a new initializer) and transB = 1 where the engine runs and matches that: PyTorch's
// Linear form, which converters map to a fully connected layer. A converter may write a
// generic Gemm layer for transB = 0 that treats a flattened [1,K] activation as a column and
// answers [K,N] (or dies loading the model), and a fully connected layer for transB = 1, which
// runs and matches, as measured (the engine pages, docs/engines-*.md).
//
// Before (B [8,10] constant):   y = Gemm (a, B, c)
// After:                         y = Gemm <transB = 1> (a, Bt, c)    # Bt = B^T [10,8]
//
// Requires: a live oracle (PassOptions::live); without one nothing is rewritten (no table
// measures Gemm's B layout). Guarantees: values unchanged up to rounding (the same products);
// a Gemm the engine already runs is never touched.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_GEMM_LAYOUT_H_
#define ONNX_BCAST_PASSES_LEGALIZE_GEMM_LAYOUT_H_

#include "absl/status/status.h"
#include "passes/rewrite_context.h"

namespace onnx_bcast::passes::legalize {

/// The Gemm strategy over every Gemm of `ctx`'s graph (main graph only).
absl::Status LegalizeGemmLayout(RewriteContext& ctx);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_GEMM_LAYOUT_H_
