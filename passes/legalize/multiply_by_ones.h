// legalize-measured's multiply-by-ones strategy (Edit::kMulOnes): a computed float32 operand
// given FullShape as Mul(ones, operand), ones a float32 constant of that static shape within
// the fold limit, first (the form some engines' eltwise layers broadcast where they refuse the
// operand's Expand). 1 * x == x for every float32 x, -0, infinities and NaN included (a NaN's
// payload may change; it stays NaN). Cost 5. The inserted Mul is judged too (MulOnesNode).
#ifndef ONNX_BCAST_PASSES_LEGALIZE_MULTIPLY_BY_ONES_H_
#define ONNX_BCAST_PASSES_LEGALIZE_MULTIPLY_BY_ONES_H_

#include <string>

#include "passes/legalize/node.h"

namespace onnx_bcast::passes::legalize {

/// Whether operand `slot` of `node` is offered kMulOnes.
bool MulOnesOffered(const Node& node, int slot);

/// The Mul the strategy inserts, over `operand` and an input named kOnesName, for the judge.
onnx::NodeProto MulOnesNode(const std::string& operand);
inline constexpr char kOnesName[] = "\x01ones";

/// Gives operand `slot` of `node` its FullShape as Mul(ones, operand).
void ApplyMulOnes(Node* node, int slot);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_MULTIPLY_BY_ONES_H_
