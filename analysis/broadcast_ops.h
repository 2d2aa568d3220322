// Which default-domain ops broadcast, how, and from which opset on. The one table shared by
// `check` (shape_propagation.cc) and the rewrite passes.
#ifndef ONNX_BCAST_ANALYSIS_BROADCAST_OPS_H_
#define ONNX_BCAST_ANALYSIS_BROADCAST_OPS_H_

#include <cstdint>
#include <string>

namespace onnx_bcast::analysis {

enum class BroadcastOpKind {
  kNone,      ///< does not broadcast
  kBinary,    ///< Add, Sub, ..., Equal: two inputs, multidirectional
  kVariadic,  ///< Sum, Mean, Max, Min: n inputs, multidirectional
  kWhere,     ///< condition, X, Y: multidirectional
  kPRelu,     ///< slope unidirectional to X
  kGemm,      ///< C unidirectional to (M,N)
  kMatMul,    ///< batch dims multidirectional
  kExpand,    ///< an explicit broadcast
};

struct BroadcastOp {
  BroadcastOpKind kind = BroadcastOpKind::kNone;
  /// True when the op, at the given opset, still has its pre-numpy form (opset < 7 binary ops
  /// with `broadcast`/`axis`, PRelu with a per-channel slope, Gemm with `broadcast`, or
  /// opset < 8 variadic ops that need equal shapes).
  bool legacy = false;

  /// Multidirectional (numpy) elementwise broadcasting at this opset.
  bool multidirectional() const {
    return !legacy && (kind == BroadcastOpKind::kBinary || kind == BroadcastOpKind::kVariadic ||
                       kind == BroadcastOpKind::kWhere);
  }
};

/// How `op_type` in the default domain broadcasts at default-domain `opset`.
BroadcastOp ClassifyBroadcastOp(const std::string& op_type, int64_t opset);

/// True for the opset < 7 binary ops that carry `broadcast`/`axis` attributes.
bool IsLegacyAxisBinaryOp(const std::string& op_type);

}  // namespace onnx_bcast::analysis

#endif  // ONNX_BCAST_ANALYSIS_BROADCAST_OPS_H_
