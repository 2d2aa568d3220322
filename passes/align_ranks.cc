// align-ranks (see align_ranks.h).
#include "passes/align_ranks.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "passes/broadcast_nodes.h"
#include "passes/operand_rewrites.h"
#include "passes/registry.h"
#include "passes/rewrite_context.h"

namespace onnx_bcast::passes {
namespace {

class AlignRanks : public Pass {
 public:
  absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) override {
    return RewriteEveryGraph(model, kAlignRanksPassName, options, stats, &AlignGraph);
  }

 private:
  static absl::Status AlignGraph(RewriteContext& ctx) {
    analysis::NodeVerdict v;  // one record for every node (DecideNode reuses its buffers)
    return ForEachNumpyFormBroadcast(
        ctx, [&](int id, const analysis::BroadcastOp& op) { return AlignNode(ctx, id, op, &v); });
  }

  static absl::Status AlignNode(RewriteContext& ctx, int id, const analysis::BroadcastOp& op,
                                analysis::NodeVerdict* verdict) {
    analysis::NodeVerdict& v = *verdict;
    const onnx::NodeProto& n = ctx.graph().node(id);
    auto rank = [&](int k) -> int64_t {
      if (k >= n.input_size() || n.input(k).empty()) return -1;
      const broadcast::Shape& s = ctx.ShapeOfInput(id, k);
      return s.rank_known ? s.rank() : -1;
    };
    if (op.multidirectional()) {
      bool known = true;
      for (int k = 0; k < n.input_size(); ++k) known &= rank(k) >= 0;
      if (!known) {
        ctx.Debug(id, "an operand has an unknown rank");
        return absl::OkStatus();
      }
      if (ctx.Decide(id, &v) && v.verdict == broadcast::Verdict::kError) {
        return absl::InvalidArgumentError(v.message);
      }
      // Every operand wants the highest rank (OperandRank's rule for these ops), which
      // aligning one operand does not change: computed once, not once per operand.
      int64_t wanted = 0;
      for (int k = 0; k < n.input_size(); ++k) {
        wanted = std::max(wanted, ctx.ShapeOfInput(id, k).rank());
      }
      for (int k = 0; k < n.input_size(); ++k) AlignOperand(ctx, id, k, wanted);
      return absl::OkStatus();
    } else if (op.kind == analysis::BroadcastOpKind::kMatMul) {
      const int64_t a = rank(0), b = rank(1);
      if ((a < 2 || b < 2) && a != b) ctx.Debug(id, "MatMul with a 1-D or unknown-rank operand");
    }
    for (int k = 0; k < n.input_size(); ++k) {
      if (const std::optional<int64_t> r = OperandRank(ctx, id, k)) AlignOperand(ctx, id, k, *r);
    }
    return absl::OkStatus();
  }
};

}  // namespace

BCAST_DEFINE_PASS(AlignRanks)

}  // namespace onnx_bcast::passes
