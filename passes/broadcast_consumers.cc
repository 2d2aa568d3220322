// Consumers that broadcast anyway (see broadcast_consumers.h).
#include "passes/broadcast_consumers.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/broadcast_ops.h"
#include "proto/graph.h"

namespace onnx_bcast::passes {

using broadcast::Shape;

bool LeadingOnesOnly(const Shape& sy, const Shape& sx, const std::vector<Shape>& after) {
  if (!sy.rank_known || !sx.rank_known || sy.rank() < sx.rank()) return false;
  const int64_t lead = sy.rank() - sx.rank();
  for (int64_t i = 0; i < sy.rank(); ++i) {
    if (i < lead ? !sy.dims[i].Is(1)
                 : sy.dims[i].is_unknown() || !(sy.dims[i] == sx.dims[i - lead])) {
      return false;
    }
  }
  for (const Shape& other : after) {
    if (other.rank_known && other.rank() >= sy.rank()) return true;
  }
  return false;
}

bool BroadcastConsumers::Accept(const std::string& y, const Shape& sy, const Shape& sx,
                                std::string* why) {
  proto::GraphEditor& g = ctx_->graph();
  if (g.IsGraphOutput(y) || g.IsUsedBySubgraph(y)) {
    *why = "output is a graph output or read by a subgraph";
    return false;
  }
  const std::vector<proto::Use> uses = g.ConsumerList(y);
  if (uses.empty()) {
    *why = "output has no consumer";
    return false;
  }
  for (const proto::Use& use : uses) {
    const onnx::NodeProto& c = g.node(use.node);
    const analysis::BroadcastOp op = ctx_->OpOf(use.node);
    std::vector<Shape> before, after;
    for (int k = 0; k < c.input_size(); ++k) {
      before.push_back(c.input(k) == y ? sy : ctx_->ShapeOf(c.input(k)));
      after.push_back(c.input(k) == y ? sx : before.back());
    }
    // The consumer decided at both shapes (the routine `check` uses): the operand may go
    // when both are fine with the same output. Only operands that broadcast count: PRelu's
    // slope, Gemm's C, every operand of the numpy forms.
    const bool operand_broadcasts = op.multidirectional() ||
                                    (!op.legacy && op.kind == analysis::BroadcastOpKind::kPRelu &&
                                     c.input_size() == 2 && c.input(0) != y) ||
                                    (!op.legacy && op.kind == analysis::BroadcastOpKind::kGemm &&
                                     c.input_size() >= 3 && c.input(0) != y && c.input(1) != y);
    bool ok = operand_broadcasts && ctx_->DecideWith(use.node, before, &before_v_) &&
              ctx_->DecideWith(use.node, after, &after_v_) &&
              before_v_.verdict == broadcast::Verdict::kOk &&
              after_v_.verdict == broadcast::Verdict::kOk && before_v_.output == after_v_.output;
    if (!ok && op.multidirectional()) ok = LeadingOnesOnly(sy, sx, after);
    if (!ok) {
      std::vector<std::string> b, a;
      for (const Shape& t : before) b.push_back(t.ToString());
      for (const Shape& t : after) a.push_back(t.ToString());
      *why = absl::StrCat("consumer ", ctx_->Label(use.node), " (", c.op_type(),
                          ") would change or does not broadcast: ", absl::StrJoin(b, " and "),
                          " vs ", absl::StrJoin(a, " and "));
      return false;
    }
  }
  return true;
}

}  // namespace onnx_bcast::passes
