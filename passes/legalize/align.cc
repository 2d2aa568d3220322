// legalize-measured's rank-align strategy (see align.h).
#include "passes/legalize/align.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/legalize/record.h"
#include "passes/operand_rewrites.h"

namespace onnx_bcast::passes::legalize {

using broadcast::Shape;

bool AlignOffered(const Node& node, int slot) {
  const std::optional<int64_t> rank = AlignRank(node, slot);
  return rank && *rank > node.shapes[slot].rank();
}

void AlignOperandRank(RewriteContext* ctx, int id, int slot, int64_t rank) {
  proto::GraphEditor& g = ctx->graph();
  const std::string name = g.node(id).input(slot);
  const Shape s = ctx->ShapeOfInput(id, slot);
  if (!s.rank_known || s.rank() >= rank) return;
  const Shape aligned = PrependOnes(s, rank - s.rank());
  const std::optional<std::vector<int64_t>> extents = aligned.Extents();
  if (g.ConstantValue(name) != nullptr || !extents) {
    AlignOperand(*ctx, id, slot, rank);
    return;
  }
  const std::string out = ctx->InsertReshape(name, *extents, aligned, id);
  g.SetInput(id, slot, out);
  RecordRewrite(ctx, id, "inserted", name, s.ToString(), aligned.ToString(),
                absl::StrCat("Reshape to ", aligned.ToString(), " -> '", out, "'"));
}

}  // namespace onnx_bcast::passes::legalize
