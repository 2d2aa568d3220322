// legalize-measured's concat strategy (see concat.h).
#include "passes/legalize/concat.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/legalize/align.h"
#include "passes/legalize/record.h"

namespace onnx_bcast::passes::legalize {
namespace {

using broadcast::Shape;

// The (axis, copies) Concats that give operand `slot` (aligned to full's rank) the static
// shape `full`; empty when not possible (a dim neither 1 nor full's, too many copies or axes,
// a shape not static).
std::vector<std::pair<int64_t, int64_t>> ConcatAxes(const Node& node, int slot, const Shape& full) {
  const Shape& shape = node.shapes[slot];
  const std::optional<std::vector<int64_t>> f = full.Extents();
  const std::optional<std::vector<int64_t>> e =
      PrependOnes(shape, full.rank() - shape.rank()).Extents();
  if (!f || !e || f->size() != e->size()) return {};
  std::vector<std::pair<int64_t, int64_t>> axes;
  for (size_t a = 0; a < f->size(); ++a) {
    if ((*e)[a] == (*f)[a]) continue;
    if ((*e)[a] != 1 || (*f)[a] > kMaxConcatCopies) return {};
    axes.emplace_back(static_cast<int64_t>(a), (*f)[a]);
  }
  if (axes.size() > 2) return {};
  return axes;
}

}  // namespace

bool ConcatOffered(const Node& node, int slot) {
  const std::optional<Shape> full = FullShape(node, slot);
  return node.live && full && !node.constant[slot] && !(node.shapes[slot] == *full) &&
         !ConcatAxes(node, slot, *full).empty();
}

void ApplyConcat(Node* node, int slot) {
  RewriteContext* ctx = node->ctx;
  const int id = node->id;
  const Shape full = *FullShape(*node, slot);
  const std::vector<std::pair<int64_t, int64_t>> axes = ConcatAxes(*node, slot, full);
  AlignOperandRank(ctx, id, slot, full.rank());
  proto::GraphEditor& g = ctx->graph();
  const std::string name = g.node(id).input(slot);
  const int32_t elem = ctx->ElemOf(name);
  const Shape& shape = node->shapes[slot];
  std::vector<int64_t> dims = *PrependOnes(shape, full.rank() - shape.rank()).Extents();
  std::string x = name;
  for (const auto& [axis, copies] : axes) {
    dims[axis] = copies;
    x = ctx->InsertNode("Concat", std::vector<std::string>(copies, x), {{"axis", axis}},
                        absl::StrCat(name, "_tiled"), elem, Shape::OfVector(dims), id);
  }
  g.SetInput(id, slot, x);
  RecordRewrite(ctx, id, "inserted", name, ctx->ShapeOf(name).ToString(), full.ToString(),
                absl::StrCat("Concat of copies to ", full.ToString(), " -> '", x, "'"));
}

}  // namespace onnx_bcast::passes::legalize
