// legalize-measured's candidate rewrites of one node: what every strategy of this folder
// offers (fold_node, swap, align, expand, multiply_by_ones, concat per operand and their
// combinations, view, rank_raise), cheapest first. Knows no engine: the op's measured ranks
// come in as OpRanks.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_CANDIDATES_H_
#define ONNX_BCAST_PASSES_LEGALIZE_CANDIDATES_H_

#include <vector>

#include "passes/legalize/node.h"
#include "passes/legalize/view.h"

namespace onnx_bcast::passes::legalize {

/// The candidates for `node`, by cost, ties in enumeration order. Every combination of per-slot
/// edits is offered (n-ary ops beyond 4 operands: uniform ones only), each also swapped where
/// the op allows; the costs add up.
std::vector<Plan> Candidates(const Node& node, const OpRanks& ranks);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_CANDIDATES_H_
