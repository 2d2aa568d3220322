// materialize-broadcast (see materialize_broadcast.h).
#include "passes/materialize_broadcast.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "passes/broadcast_nodes.h"
#include "passes/operand_rewrites.h"
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
    analysis::NodeVerdict v;  // one record for every node (DecideNode reuses its buffers)
    return ForEachNumpyFormBroadcast(ctx, [&](int id, const analysis::BroadcastOp& op) {
      return MaterializeNode(ctx, id, op, &v);
    });
  }

  static absl::Status MaterializeNode(RewriteContext& ctx, int id, const analysis::BroadcastOp& op,
                                      analysis::NodeVerdict* verdict) {
    analysis::NodeVerdict& v = *verdict;
    const onnx::NodeProto& n = ctx.graph().node(id);
    if (op.multidirectional()) {
      if (!ctx.Decide(id, &v)) return absl::OkStatus();  // a wrong number of inputs
      if (v.verdict == broadcast::Verdict::kError) return absl::InvalidArgumentError(v.message);
      if (v.verdict == broadcast::Verdict::kUnknown) {
        ctx.Debug(id, v.message);
        return absl::OkStatus();
      }
      // A scalar or all-ones operand is ok against unknown extents, but its expanded shape
      // would be computed at run time; left as is (as when such verdicts were unknown).
      bool vague_output = !v.output.rank_known;
      for (const broadcast::Dim& d : v.output.dims) vague_output |= d.is_unknown();
      if (vague_output) {
        ctx.Debug(id, absl::StrCat("output extent not known: ", v.output.ToString()));
        return absl::OkStatus();
      }
      const broadcast::Shape out = v.output;
      const std::vector<std::string> operands(n.input().begin(), n.input().end());
      for (int k = 0; k < n.input_size(); ++k) {
        BCAST_RETURN_IF_ERROR(ExpandOperand(ctx, id, k, out, &operands).status());
      }
    } else if (op.kind == analysis::BroadcastOpKind::kPRelu) {
      // The slope expands to X, symbolic extents included (Expand to Shape(X)).
      if (!ctx.Decide(id, &v) || v.verdict != broadcast::Verdict::kOk) {
        ctx.Debug(id, "slope not provably broadcastable to X");
        return absl::OkStatus();
      }
      BCAST_RETURN_IF_ERROR(ExpandOperand(ctx, id, 1, v.inputs[0]).status());
    } else if (op.kind == analysis::BroadcastOpKind::kGemm && n.input_size() >= 3 &&
               !n.input(2).empty()) {
      BCAST_RETURN_IF_ERROR(ExpandGemmC(ctx, id));
    } else if (op.kind == analysis::BroadcastOpKind::kMatMul) {
      ctx.Debug(id, "MatMul batch broadcast left to the engine");
    }
    return absl::OkStatus();
  }
};

}  // namespace

BCAST_DEFINE_PASS(MaterializeBroadcast)

}  // namespace onnx_bcast::passes
