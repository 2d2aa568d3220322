// legalize-ncnn (and its table-driven form `legalize`): leaves every broadcasting op in a form
// the target runs natively. For ncnn (seed 001) that is: equal-rank operands (or scalar-like
// ones), one side of each pair with the output shape (ncnn's BinaryOp broadcasts B into A,
// either way round), and ranks <= 4 beyond a leading batch axis of 1.
//
// Before (after align-ranks):
//   g (float[1,2,1,4] a, float[1,1,3,4] b) => (float[1,2,3,4] y) {
//     y = Add(a, b)                 # bidirectional: neither side has the output shape
//   }
// After:
//   <int64[4] expand_shape = {1,2,3,4}> {
//     a_expanded = Expand(a, expand_shape)
//     y = Add(a_expanded, b)        # explicit broadcast of b, which ncnn runs
//   }
//
// `legalize-ncnn` uses the built-in ncnn table; `legalize` uses the table of the target being
// run (--target or --target-file). Operands are first aligned to equal rank when the table asks
// for it, then expanded one at a time (the one closest to the output shape first) until the
// op's broadcast class is in the table.
// Requires: numpy semantics (opset >= 7). Guarantees: every node it can legalize conforms to
// the table; a node it cannot (a rank beyond the table's maximum, a broadcast no Expand makes
// native, unknown ranks) is left as it is with a debug reason, and the target check
// (CheckTarget) lists it, so `opt` fails on it (exit 3) unless --allow-partial, with every
// such node named rather than the first. Idempotent: yes.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_NCNN_H_
#define ONNX_BCAST_PASSES_LEGALIZE_NCNN_H_

#include <memory>

#include "passes/pass.h"

namespace onnx_bcast::passes {

/// legalize-ncnn: the built-in ncnn table.
std::unique_ptr<Pass> CreateLegalizeNcnnPass();
/// legalize: the table in PassOptions::target (FailedPrecondition when none is given).
std::unique_ptr<Pass> CreateLegalizeTargetPass();

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_LEGALIZE_NCNN_H_
