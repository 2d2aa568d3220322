// legalize-measured's swap strategy (see swap.h).
#include "passes/legalize/swap.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "passes/legalize/record.h"

namespace onnx_bcast::passes::legalize {

std::string SwappedOp(const std::string& op) {
  static const std::set<std::string> kCommutative = {
      "Add", "Mul", "Max", "Min",        "Sum",       "Mean",      "Equal",
      "And", "Or",  "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  if (kCommutative.count(op) > 0) return op;
  if (op == "Greater") return "Less";
  if (op == "Less") return "Greater";
  if (op == "GreaterOrEqual") return "LessOrEqual";
  if (op == "LessOrEqual") return "GreaterOrEqual";
  return "";
}

bool SwapOffered(const Node& node) {
  const onnx::NodeProto& n = node.ctx->graph().node(node.id);
  return n.input_size() == 2 && !SwappedOp(n.op_type()).empty();
}

void ApplySwap(Node* node) {
  proto::GraphEditor& g = node->ctx->graph();
  onnx::NodeProto* m = g.mutable_node(node->id);
  const std::string a = m->input(0);
  const std::string b = m->input(1);
  const std::string before = m->op_type();
  m->set_op_type(SwappedOp(before));
  g.SetInput(node->id, 0, b);
  g.SetInput(node->id, 1, a);
  RecordRewrite(node->ctx, node->id, "converted", a, "", "",
                absl::StrCat("operands swapped: ", before, "(", a, ", ", b, ") -> ", m->op_type(),
                             "(", b, ", ", a, ")"));
  std::swap(node->shapes[0], node->shapes[1]);
  node->constant.swap(node->constant[0], node->constant[1]);
}

}  // namespace onnx_bcast::passes::legalize
