// legalize-measured's expand strategy (see expand.h).
#include "passes/legalize/expand.h"

#include <optional>
#include <string>

#include "passes/legalize/align.h"
#include "passes/operand_rewrites.h"
#include "support/status_macros.h"

namespace onnx_bcast::passes::legalize {

using broadcast::Shape;

bool ExpandOffered(const Node& node, int slot) {
  RewriteContext* ctx = node.ctx;
  const onnx::NodeProto& n = ctx->graph().node(node.id);
  const std::optional<Shape> full = FullShape(node, slot);
  if (!full || node.shapes[slot] == *full) return false;
  // A constant shape, or a run-time one where the target takes those.
  if (!full->Extents().has_value() && !ctx->RuntimeShapesAllowed()) return false;
  // A constant too large to fold would become an Expand with only constant inputs, which a
  // target without run-time shapes refuses as well.
  return !(node.constant[slot] && !ctx->RuntimeShapesAllowed() &&
           !FoldsToConstant(*ctx, n.input(slot), *full));
}

absl::Status ApplyExpand(Node* node, int slot) {
  RewriteContext* ctx = node->ctx;
  const Shape full = *FullShape(*node, slot);
  const std::string name = ctx->graph().node(node->id).input(slot);
  if (!FoldsToConstant(*ctx, name, full)) {
    // Expand with an input of the output's rank: the form static engines import (some refuse
    // a lower-rank Expand input).
    AlignOperandRank(ctx, node->id, slot, full.rank());
  }
  BCAST_RETURN_IF_ERROR(ExpandOperand(*ctx, node->id, slot, full).status());
  return absl::OkStatus();
}

}  // namespace onnx_bcast::passes::legalize
