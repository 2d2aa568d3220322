// legalize-measured's rank-raise strategy: the collapsed view (view.h) with unit axes inserted
// at every placement, up to the op's measured maximum rank (at most 5; a rank-0 node is raised
// to the op's minimum rank). Some engines run `[1,1,1,384] - [1,1,1,1]` but compute
// `[1,1,32] - [1,1,1]` with one element, and refuse `[1,32] - [1,1]`: where the axes sit
// decides. Cost 14 plus the axes added, one more swapped: dearer than the views, the smallest
// rank first. Applied as a view (ApplyView). Guarantees: the same values.
#ifndef ONNX_BCAST_PASSES_LEGALIZE_RANK_RAISE_H_
#define ONNX_BCAST_PASSES_LEGALIZE_RANK_RAISE_H_

#include <vector>

#include "passes/legalize/node.h"
#include "passes/legalize/view.h"

namespace onnx_bcast::passes::legalize {

/// Appends the rank-raise plans of `node`.
void AddRaisePlans(const Node& node, const OpRanks& ranks, bool can_swap, int* order,
                   std::vector<Plan>* plans);

}  // namespace onnx_bcast::passes::legalize

#endif  // ONNX_BCAST_PASSES_LEGALIZE_RANK_RAISE_H_
