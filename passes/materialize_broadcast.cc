// materialize-broadcast (see materialize_broadcast.h).
#include "passes/materialize_broadcast.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "broadcast/rules.h"
#include "passes/registry.h"
#include "passes/rewrite_context.h"
#include "support/status_macros.h"

namespace onnx_bcast::passes {
namespace {

class MaterializeBroadcast : public Pass {
 public:
  absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) override {
    return RewriteEveryGraph(model, kMaterializeBroadcastPassName, options, stats,
                             &MaterializeGraph);
  }

 private:
  static absl::Status MaterializeGraph(RewriteContext& ctx) {
    proto::GraphEditor& g = ctx.graph();
    for (int id = 0; id < g.original_node_count(); ++id) {
      const std::optional<BroadcastOp> found = ctx.NumpyFormBroadcast(id);
      if (!found) continue;
      const BroadcastOp op = *found;
      const onnx::NodeProto& n = g.node(id);
      if (op.multidirectional()) {
        std::vector<bcast::Shape> shapes;
        for (const std::string& in : n.input()) shapes.push_back(ctx.ShapeOf(in));
        const bcast::BroadcastResult res = bcast::BroadcastNumpy(shapes);
        if (res.verdict == bcast::Verdict::kError) {
          return absl::InvalidArgumentError(
              absl::StrCat(n.op_type(), " '", ctx.Label(id),
                           "': operands are not broadcastable (numpy rule, ", res.reason, ")"));
        }
        if (res.verdict == bcast::Verdict::kUnknown) {
          ctx.Debug(id, absl::StrCat("cannot decide the broadcast: ", res.reason));
          continue;
        }
        // A scalar or all-ones operand is ok against unknown extents, but its expanded shape
        // would be computed at run time; left as is (as when such verdicts were unknown).
        bool vague_output = !res.output.rank_known;
        for (const bcast::Dim& d : res.output.dims) vague_output |= d.is_unknown();
        if (vague_output) {
          ctx.Debug(id, absl::StrCat("output extent not known: ", res.output.ToString()));
          continue;
        }
        const std::vector<std::string> operands(n.input().begin(), n.input().end());
        for (int k = 0; k < n.input_size(); ++k) {
          BCAST_RETURN_IF_ERROR(ctx.ExpandOperand(id, k, res.output, &operands).status());
        }
      } else if (op.kind == BroadcastOpKind::kPRelu && n.input_size() == 2) {
        const bcast::Shape x = ctx.ShapeOf(n.input(0));
        if (!bcast::BroadcastUnidirectional(x, ctx.ShapeOf(n.input(1))).ok()) {
          ctx.Debug(id, "slope not provably broadcastable to X");
          continue;
        }
        BCAST_RETURN_IF_ERROR(ctx.ExpandOperand(id, 1, x).status());
      } else if (op.kind == BroadcastOpKind::kGemm && n.input_size() >= 3 && !n.input(2).empty()) {
        BCAST_RETURN_IF_ERROR(ctx.ExpandGemmC(id));
      } else if (op.kind == BroadcastOpKind::kMatMul) {
        ctx.Debug(id, "MatMul batch broadcast left to the engine");
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<Pass> CreateMaterializeBroadcastPass() {
  return std::make_unique<MaterializeBroadcast>();
}

}  // namespace onnx_bcast::passes
