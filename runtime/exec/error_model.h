// The error model: the one comparison that tells float rounding from a wrong answer, for every
// place that compares a model's numbers (verify, opt --verify, live probes, probe-engine,
// --verify-engine, bisection on an engine, the engine corpus tests). docs/error-model.md has
// the model with measured figures.
//
// The reference is the model run in float64 (proto::PromoteToFloat64, our executor). A float32
// result is accepted element by element when its distance from the reference is within
//
//   bound_i = (k + 1) u S_i                    the output's own op, when it sums products
//           + margin * Y                       the float32 executor's own distance (yardstick)
//           + ulps(op) * ulp32(|ref_i|)        the output's own op, rounded
//           + FLT_MIN                          flushed subnormals
//
// - u = 2^-24, float32's unit roundoff.
// - S_i: the output's producing node run in float64 on the absolute values of its inputs (Sub as
//   Add, Gemm with |alpha| and |beta|), for the ops that sum products: MatMul, Gemm, Conv,
//   ConvTranspose, the summing reductions and pools, Sum, Mean, Add, Sub; k is the number of
//   terms each output element sums (MatMul's inner dimension, Conv's C/group * kernel, ...).
//   (k + 1) u S bounds the rounding of any summation order (Higham, Accuracy and Stability of
//   Numerical Algorithms, 3.1): a sum that cancels to near zero may keep an error of the
//   size of the terms, not of the result.
// - Y: max |float32 - float64| of our own executor over the output: the rounding the model's
//   arithmetic accumulates up to the output, which an engine with other kernels repeats to
//   within `margin` times.
// - ulps(op): 4 for ops that select or move values (nothing is rounded there, but a converter
//   may re-round a constant it folds) and for arithmetic, 64 for transcendental ops and any op
//   not listed (engines use their own approximations of exp, tanh, erf).
// A wrong answer (an element taken from the wrong operand or axis) differs by the size of the
// values, orders of magnitude beyond the bound. Integers and bools compare exactly. Where the
// float64 run is impossible (an op our executor lacks in float64, a quantized model), the
// reference is our float32 run and floats compare within rtol 1e-3, atol 1e-7 (`fallback` says
// why).
#ifndef ONNX_BCAST_RUNTIME_EXEC_ERROR_MODEL_H_
#define ONNX_BCAST_RUNTIME_EXEC_ERROR_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/model_io.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/value.h"

namespace onnx_bcast::runtime {

/// The constants of the model (docs/error-model.md says how they were chosen).
struct ErrorModel {
  /// float32's unit roundoff.
  static constexpr double kUnitRoundoff = 0x1p-24;
  /// Multiple of our float32 executor's own distance from float64 an engine may have.
  double margin = 16;
  /// Ops that select or move values round nothing, but a converter may re-round a constant it
  /// folds on the way (ncnn's Min against an expanded scalar came back 3 ulps off).
  int exact_ulps = 4;
  int arithmetic_ulps = 4;
  int transcendental_ulps = 64;
  /// Ulps an op's own rounding contributes (above).
  int UlpsOf(const std::string& op) const;
};

/// One graph output as the error model sees it.
struct OutputReference {
  std::string name;
  /// Our executor's result as the model computes it (float32 for a float32 model).
  Value computed;
  /// Floating tensors with a float64 reference: the reference and the per-element bound, both
  /// float64, of the output's shape. Null otherwise (integers and bools compare exactly with
  /// `computed`; in fallback floats compare with `computed` within rtol 1e-3, atol 1e-7).
  std::shared_ptr<Tensor> reference;
  std::shared_ptr<Tensor> bound;
  /// The producing op, its k (0: not a sum of products) and the yardstick Y.
  std::string op;
  int64_t terms = 0;
  double yardstick = 0;
  /// One line: how the bound is made, e.g. "float64 reference; MatMul sums k=128 products;
  /// yardstick 2.4e-07 x 16".
  std::string Basis(const ErrorModel& model) const;
};

struct Reference {
  std::vector<OutputReference> outputs;
  /// Non-empty when no float64 reference could be made: why (the comparison then falls back
  /// to rtol 1e-3, atol 1e-7 against our float32 run).
  std::string fallback;
  ErrorModel model;
};

struct ReferenceOptions {
  RunOptions run;
  ErrorModel model;
  /// Intermediate tensors to treat as outputs too (bisection): each gets a reference, after the
  /// graph outputs, in this order.
  std::vector<std::string> extra_outputs;
  /// Our executor's float32 outputs of the model on these feeds, when the caller has them
  /// (verify ran the original already): not computed again. Only without extra_outputs.
  const std::vector<Value>* computed = nullptr;
};

/// Runs `model` on `feeds` with our executor as it is (float32) and promoted to float64, and
/// makes each output's reference and bound. Errors: the float32 run's (the model does not run
/// on our executor); a float64 run that fails only sets `fallback`.
absl::StatusOr<Reference> ComputeReference(const proto::Model& model, const Feeds& feeds,
                                           const ReferenceOptions& options = {});

struct CompareOptions {
  /// An engine's output: its own representation of a type is accepted where it holds the values
  /// (any type for an expected integer or bool, compared exactly; a floating type for a float),
  /// and shapes compare up to dims of 1 (OpenCV holds a 1-D tensor as N x 1, ncnn drops a
  /// batch of 1). Otherwise types and shapes must be equal.
  bool engine_representation = false;
};

/// The one comparison: `actual` against `ref` under the error model (`model`), or against the
/// fallback rule when `ref` has no float64 reference. The Comparison's message names the worst
/// element: index, both values and the bound; bound_ratio is the largest error / bound.
Comparison CompareToReference(const Value& actual, const OutputReference& ref,
                              const ErrorModel& model, const CompareOptions& options = {});

/// ulp of float32 at |v| (the spacing of float32 numbers there; subnormal spacing below
/// FLT_MIN).
double Float32Ulp(double v);

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_ERROR_MODEL_H_
