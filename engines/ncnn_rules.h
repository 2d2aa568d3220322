// ncnn's broadcast rule family: how its BinaryOp aligns and runs a pair of operands (seed 001),
// and the portability lint `check --lint` gives where ncnn and numpy pair elements differently.
// ncnn's own knowledge, so it lives with its adapter; analysis/ runs the lint through
// AnalysisOptions::binary_lints, which driver/ fills from engines/lints.h.
#ifndef ONNX_BCAST_ENGINES_NCNN_RULES_H_
#define ONNX_BCAST_ENGINES_NCNN_RULES_H_

#include <string_view>

#include "analysis/shape_propagation.h"
#include "broadcast/shape.h"

namespace onnx_bcast::engines {

/// How ncnn's BinaryOp would run a pair natively (seed 001).
enum class NcnnForm {
  kSameShape,       ///< Identical shapes.
  kScalarLike,      ///< The smaller side is a scalar or all 1s.
  kExplicit,        ///< Equal rank, one side's dims are each 1 or equal.
  kInnerAxis,       ///< The lower-rank side equals the leading numpy dims of the other;
                    ///< ncnn aligns it to the OUTER numpy axes (opposite of numpy).
  kOuterAxisRank1,  ///< Rank-1 side equals the last numpy dim of the other (as numpy).
  kUnsupported,     ///< None of the above, or rank > 4.
};

/// "same", "scalar-like", "explicit", "inner-axis", "outer-axis-rank1", "unsupported".
std::string_view NcnnFormName(NcnnForm form);

/// ncnn's treatment of a pair (numpy-order shapes in).
struct NcnnBinaryForm {
  NcnnForm form = NcnnForm::kUnsupported;
  /// ncnn's output shape (numpy order); rank unknown when unsupported.
  broadcast::Shape output = broadcast::Shape::UnknownRank();
  /// True when ncnn computes what numpy (ONNX) computes for this pair: same
  /// output shape and same element pairing. False when unsupported.
  bool matches_numpy = false;
};

/// Classifies (a, b) the way ncnn's BinaryOp does; either operand may be the
/// larger one (ncnn swaps). Checks in order: same shape, scalar-like, explicit,
/// inner-axis, rank-1 outer-axis (so inner wins on a tie, e.g. (2,2)+(2,)).
/// Dims are compared structurally (a symbol equals only itself); unknown dims
/// and ranks make a pair unsupported.
NcnnBinaryForm ClassifyNcnn(const broadcast::Shape& a, const broadcast::Shape& b);

/// check --lint's "ncnn-outer-axis" warning: a two-operand broadcast of unequal ranks that
/// ncnn runs, aligning the lower-rank operand differently from numpy.
void NcnnOuterAxisLint(analysis::NodeVerdict* v);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_NCNN_RULES_H_
