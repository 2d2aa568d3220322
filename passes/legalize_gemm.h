// legalize-measured's Gemm strategy: a Gemm with a constant B and transB = 0 that the target's
// engine refuses or computes wrongly at its exact shapes, decided live (form_oracle.h), takes B
// transposed (a new initializer) and transB = 1 where the engine runs and matches that: PyTorch's
// Linear form, which converters map to a fully connected layer. ncnn's onnx2ncnn writes its
// generic Gemm layer for transB = 0, which treats a flattened [1,K] activation as a column and
// answers [K,N] (or dies of SIGFPE loading the model); for transB = 1 it writes InnerProduct,
// which runs and matches.
//
// Before (B [8,10] constant):   y = Gemm (a, B, c)
// After:                         y = Gemm <transB = 1> (a, Bt, c)    # Bt = B^T [10,8]
//
// Requires: a live oracle (PassOptions::live); without one nothing is rewritten (no table
// measures Gemm's B layout). Guarantees: values unchanged up to rounding (the same products);
// a Gemm the engine already runs is never touched.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_GEMM_H_
#define ONNX_BCAST_PASSES_LEGALIZE_GEMM_H_

#include "absl/status/status.h"
#include "passes/rewrite_context.h"

namespace onnx_bcast::passes {

/// The Gemm strategy over every Gemm of `ctx`'s graph (main graph only).
absl::Status LegalizeGemmLayout(RewriteContext& ctx);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_LEGALIZE_GEMM_H_
