// legalize-measured's multiply-by-ones strategy (see multiply_by_ones.h).
#include "passes/legalize/multiply_by_ones.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/legalize/record.h"

namespace onnx_bcast::passes::legalize {

using broadcast::Shape;

bool MulOnesOffered(const Node& node, int slot) {
  const std::optional<Shape> full = FullShape(node, slot);
  if (!full || node.constant[slot] || node.shapes[slot] == *full) return false;
  RewriteContext* ctx = node.ctx;
  const onnx::NodeProto& n = ctx->graph().node(node.id);
  if (ctx->ElemOf(n.input(slot)) != onnx::TensorProto::FLOAT) return false;
  const std::optional<std::vector<int64_t>> e = full->Extents();
  if (!e) return false;
  int64_t elements = 1;
  for (int64_t d : *e) elements *= d;
  return elements * 4 <= ctx->fold_limit_bytes();
}

onnx::NodeProto MulOnesNode(const std::string& operand) {
  onnx::NodeProto mul;
  mul.set_op_type("Mul");
  mul.add_input(kOnesName);
  mul.add_input(operand);
  mul.add_output("\x01product");
  return mul;
}

void ApplyMulOnes(Node* node, int slot) {
  RewriteContext* ctx = node->ctx;
  const Shape full = *FullShape(*node, slot);
  proto::GraphEditor& g = ctx->graph();
  const std::string name = g.node(node->id).input(slot);
  const std::vector<int64_t> extents = *full.Extents();
  onnx::TensorProto ones;
  ones.set_data_type(onnx::TensorProto::FLOAT);
  int64_t elements = 1;
  for (int64_t d : extents) {
    ones.add_dims(d);
    elements *= d;
  }
  for (int64_t i = 0; i < elements; ++i) ones.add_float_data(1.0f);
  const std::string ones_name = ctx->FreshName(absl::StrCat("ones_", absl::StrJoin(extents, "_")));
  ones.set_name(ones_name);
  ctx->AllowInitializers();
  g.AddInitializer(std::move(ones));
  ctx->SetShape(ones_name, onnx::TensorProto::FLOAT, full);
  ++ctx->stats().initializers_rewritten;
  ctx->stats().bytes_added += elements * 4;
  const std::string out = ctx->InsertNode("Mul", {ones_name, name}, {}, absl::StrCat(name, "_full"),
                                          onnx::TensorProto::FLOAT, full, node->id);
  g.SetInput(node->id, slot, out);
  RecordRewrite(ctx, node->id, "inserted", name, ctx->ShapeOf(name).ToString(), full.ToString(),
                absl::StrCat("Mul by a constant of ones ", full.ToString(), " -> '", out, "'"),
                elements * 4);
}

}  // namespace onnx_bcast::passes::legalize
