// legalize-measured's rewrite by a chosen candidate (see apply.h).
#include "passes/legalize/apply.h"

#include "passes/legalize/align.h"
#include "passes/legalize/concat.h"
#include "passes/legalize/expand.h"
#include "passes/legalize/multiply_by_ones.h"
#include "passes/legalize/swap.h"
#include "passes/legalize/view.h"
#include "support/status_macros.h"

namespace onnx_bcast::passes::legalize {

absl::Status ApplyPlan(Node* node, const Plan& plan, const ConstantTypes& types) {
  if (plan.fold_node) return ApplyFold(node, types);
  if (plan.use_view) return ApplyView(node, plan);
  if (plan.swap) ApplySwap(node);
  for (size_t k = 0; k < plan.edits.size(); ++k) {
    const int slot = static_cast<int>(k);
    switch (plan.edits[k]) {
      case Edit::kKeep:
        break;
      case Edit::kAlign:
        AlignOperandRank(node->ctx, node->id, slot, *AlignRank(*node, slot));
        break;
      case Edit::kMulOnes:
        ApplyMulOnes(node, slot);
        break;
      case Edit::kConcat:
        ApplyConcat(node, slot);
        break;
      case Edit::kFull:
        BCAST_RETURN_IF_ERROR(ApplyExpand(node, slot));
        break;
    }
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::passes::legalize
