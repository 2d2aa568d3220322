// legalize-measured's swap strategy: the two operands of a commutative op (Add, Mul, Max, Min,
// Sum, Mean, Equal, And, Or, Xor, Bitwise*) swapped, or of Greater/Less (and ...OrEqual), which
// then become Less/Greater. Cost 1, added to any other edit's.
// Requires: a two-operand node whose op SwappedOp names. Guarantees: the same values.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_SWAP_H_
#define ONNX_BCAST_PASSES_LEGALIZE_SWAP_H_

#include <string>

#include "passes/legalize/node.h"

namespace onnx_bcast::passes::legalize {

/// The operand-swapped op, when swapping the two operands keeps the meaning ("" otherwise).
std::string SwappedOp(const std::string& op);

/// Whether `node` offers the swap (two operands, an op SwappedOp names).
bool SwapOffered(const Node& node);

/// Swaps the node's operands and op, and `node`'s shapes and constness with them.
void ApplySwap(Node* node);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_SWAP_H_
