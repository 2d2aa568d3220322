// legalize-measured's node and plans (see node.h).
#include "passes/legalize/node.h"

#include <algorithm>

namespace onnx_bcast::passes::legalize {

using broadcast::Shape;

Node ReadNode(RewriteContext* ctx, int id, const analysis::BroadcastOp& op) {
  Node node;
  node.ctx = ctx;
  node.id = id;
  node.op = op;
  const onnx::NodeProto& n = ctx->graph().node(id);
  for (int k = 0; k < n.input_size(); ++k) {
    node.shapes.push_back(n.input(k).empty() ? Shape::UnknownRank() : ctx->ShapeOfInput(id, k));
    node.constant.push_back(!n.input(k).empty() &&
                            ctx->graph().ConstantValue(n.input(k)) != nullptr);
  }
  return node;
}

Shape PrependOnes(const Shape& s, int64_t n) {
  Shape out = s;
  out.dims.insert(out.dims.begin(), static_cast<size_t>(std::max<int64_t>(n, 0)),
                  broadcast::Dim::Value(1));
  return out;
}

std::optional<int64_t> AlignRank(const Node& node, int slot) {
  const std::vector<Shape>& shapes = node.shapes;
  if (node.op.multidirectional()) return node.output.rank();
  if (node.op.kind == analysis::BroadcastOpKind::kPRelu && slot == 1) return shapes[0].rank();
  if (node.op.kind == analysis::BroadcastOpKind::kMatMul && shapes.size() == 2 &&
      shapes[0].rank() >= 2 && shapes[1].rank() >= 2) {
    return std::max(shapes[0].rank(), shapes[1].rank());
  }
  return std::nullopt;
}

std::optional<Shape> FullShape(const Node& node, int slot) {
  if (node.op.multidirectional()) return node.output;
  if (node.op.kind == analysis::BroadcastOpKind::kPRelu && slot == 1) return node.shapes[0];
  return std::nullopt;
}

}  // namespace onnx_bcast::passes::legalize
