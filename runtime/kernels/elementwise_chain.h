// A chain of float elementwise ops over one tensor and scalar constants (GELU's
// x * (erf(x / c) + 1) * 0.5), computed tile by tile in L1 instead of one whole-tensor pass
// per op. The executor finds such chains in a graph (executor.cc) and runs them here.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_ELEMENTWISE_CHAIN_H_
#define ONNX_BCAST_RUNTIME_KERNELS_ELEMENTWISE_CHAIN_H_

#include <cstdint>
#include <vector>

#include "runtime/kernels/conv.h"

namespace onnx_bcast::runtime::kernels {

/// One step: register `dst` = op(a, b) (binary) or op(a) (kErf, kHardSigmoid). Register 0 is the
/// chain's input x; step i writes register i + 1; the last step's register is the result.
struct ChainStep {
  enum class Op { kAdd, kSub, kMul, kDiv, kErf, kHardSigmoid };
  /// An operand: a register (0 = x, i + 1 = step i's result) or a scalar (index into the
  /// scalars passed to RunChain).
  struct Operand {
    bool scalar = false;
    int index = 0;
  };
  Op op = Op::kAdd;
  Operand a, b;  ///< b unused by kErf and kHardSigmoid
  /// kHardSigmoid's attributes: max(0, min(1, alpha * a + beta)), as the op computes it
  /// (kernels/unary_ops.h), so MobileNetV3's hard-swish (HardSigmoid, Mul) is a chain too.
  float alpha = 0, beta = 0;
};

/// At most this many steps (registers live in a fixed L1-sized scratch).
inline constexpr int kMaxChainSteps = 16;

/// y[i] = the chain applied to x[i] for i in [0, n), each step the same float operation as the
/// op run alone (IEEE +, -, *, /, ErfFloats for Erf, the unary kernel's element function for
/// HardSigmoid), so the result has the same bits as
/// running the ops one after the other. Tiles run as `parallel` tasks when given. y must not
/// overlap x. `steps` is not empty and has at most kMaxChainSteps entries.
void RunChain(const std::vector<ChainStep>& steps, const float* scalars, const float* x, float* y,
              int64_t n, const ParallelFor* parallel = nullptr);

/// The unfused order: each step over the whole array into its own buffer, plain loops (Erf
/// through ErfFloats, as the Erf op). The oracle RunChain is tested against.
void RunChainReference(const std::vector<ChainStep>& steps, const float* scalars, const float* x,
                       float* y, int64_t n);

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_ELEMENTWISE_CHAIN_H_
