// eliminate-redundant-broadcast (see eliminate_redundant_broadcast.h): the node half; the
// consumer test is broadcast_consumers.h, the constant half shrink_constants.h.
#include "passes/eliminate_redundant_broadcast.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broadcast/rules.h"
#include "passes/broadcast_consumers.h"
#include "passes/registry.h"
#include "passes/rewrite_context.h"
#include "passes/shrink_constants.h"
#include "proto/shapes.h"
#include "proto/tensor_data.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"
#include "targets/targets.h"

namespace onnx_bcast::passes {
namespace {

using broadcast::Shape;

class EliminateRedundantBroadcast : public Pass {
 public:
  absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) override {
    return RewriteEveryGraph(model, kEliminateRedundantBroadcastPassName, options, stats,
                             [this](RewriteContext& ctx) -> absl::Status {
                               // Per graph (function trials have their own stats).
                               ctx_ = &ctx;
                               stats_ = &ctx.stats();
                               consumers_.emplace(ctx);
                               proto::GraphEditor& g = ctx.graph();
                               for (int id = g.original_node_count() - 1; id >= 0; --id) {
                                 if (!g.alive(id)) continue;
                                 BCAST_RETURN_IF_ERROR(TryRemove(id));
                               }
                               // Under equal ranks the constants are align-ranks'
                               // to shape: shrinking them would undo it every run.
                               if (!KeepRanks()) {
                                 MergeShrunkConstants(ctx, ShrinkConstants(ctx, *consumers_));
                               }
                               return absl::OkStatus();
                             });
  }

 private:
  bool KeepRanks() const {
    return ctx_->options().target != nullptr && ctx_->options().target->equal_rank;
  }

  // Why `id` is not a pure broadcast of its first input (empty: it is one).
  std::string NotPureBroadcast(int id, const Shape& sx, const Shape& sy) {
    proto::GraphEditor& g = ctx_->graph();
    const onnx::NodeProto& n = g.node(id);
    const std::string& op = n.op_type();
    if (op == "Expand") return "";
    if (op == "Unsqueeze") {
      std::vector<int64_t> axes;
      bool found = false;
      for (const auto& a : n.attribute()) {
        if (a.name() == "axes") {
          axes.assign(a.ints().begin(), a.ints().end());
          found = true;
        }
      }
      if (!found && n.input_size() >= 2) {
        const onnx::TensorProto* t = g.ConstantValue(n.input(1));
        if (t == nullptr) return "axes are not constant";
        absl::StatusOr<std::vector<int64_t>> v = proto::ReadIntValues(*t, ctx_->model().base_dir);
        if (!v.ok()) return "axes are not readable";
        axes = *v;
      }
      for (int64_t& a : axes) {
        if (a < 0) a += sy.rank();
      }
      std::sort(axes.begin(), axes.end());
      for (size_t i = 0; i < axes.size(); ++i) {
        if (axes[i] != static_cast<int64_t>(i)) return "inserts a non-leading axis";
      }
      return sy.rank() == sx.rank() + static_cast<int64_t>(axes.size()) ? "" : "rank mismatch";
    }
    if (op == "Reshape") {
      const int64_t k = sy.rank() - sx.rank();
      if (k < 0) return "lowers the rank";
      for (int64_t i = 0; i < sy.rank(); ++i) {
        const broadcast::Dim& d = sy.dims[i];
        if (d.is_unknown()) return "unknown output dim";
        if (i < k && !d.Is(1)) return "not only leading 1s added";
        if (i >= k && (sx.dims[i - k].is_unknown() || !(sx.dims[i - k] == d))) {
          return "changes dims";
        }
      }
      return "";
    }
    if (op == "Tile") {
      if (n.input_size() < 2) return "no repeats";
      const onnx::TensorProto* t = g.ConstantValue(n.input(1));
      if (t == nullptr) return "repeats are not constant";
      absl::StatusOr<std::vector<int64_t>> reps = proto::ReadIntValues(*t, ctx_->model().base_dir);
      if (!reps.ok() || static_cast<int64_t>(reps->size()) != sx.rank()) return "bad repeats";
      for (int64_t i = 0; i < sx.rank(); ++i) {
        if ((*reps)[i] != 1 && !sx.dims[i].Is(1)) return "tiles an axis of extent != 1";
      }
      return "";
    }
    return "not a broadcast op";
  }

  absl::Status TryRemove(int id) {
    proto::GraphEditor& g = ctx_->graph();
    const onnx::NodeProto& n = g.node(id);
    if (!n.domain().empty() && n.domain() != "ai.onnx") return absl::OkStatus();
    const std::string& op = n.op_type();
    if (op != "Expand" && op != "Unsqueeze" && op != "Reshape" && op != "Tile") {
      return absl::OkStatus();
    }
    if (n.input_size() < 1 || n.output_size() != 1 || n.input(0).empty()) {
      return absl::OkStatus();
    }
    const std::string x = n.input(0);
    const std::string y = n.output(0);
    const Shape sx = ctx_->ShapeOf(x);
    Shape sy = ctx_->ShapeOf(y);
    if (op == "Expand" && n.input_size() == 2 && sx.rank_known && ctx_->Decide(id, &own_v_)) {
      // Its own verdict: a constant target it cannot reach is a proven error, and a decided
      // output is y's shape. For Expand(x, Shape(z)) that is x broadcast with z's shape, where
      // the tables may hold symbols libonnx invented for Shape's value, hiding the equality.
      if (own_v_.verdict == broadcast::Verdict::kError) {
        return absl::InvalidArgumentError(own_v_.message);
      }
      if (own_v_.verdict == broadcast::Verdict::kOk) sy = own_v_.output;
    }
    if (!sx.rank_known || !sy.rank_known) {
      ctx_->Debug(id, "input or output rank unknown");
      return absl::OkStatus();
    }
    if (std::string why = NotPureBroadcast(id, sx, sy); !why.empty()) {
      ctx_->Debug(id, why);
      return absl::OkStatus();
    }
    // A target that needs equal ranks (its pipeline runs this pass before align-ranks) keeps every
    // rank-raising node: align-ranks would put it back, and the pipeline would not be
    // idempotent. Expand and Tile of the same rank still go.
    if (KeepRanks() && sy.rank() != sx.rank()) {
      ctx_->Debug(id, "raises the rank, which the target's equal ranks need");
      return absl::OkStatus();
    }
    std::string why;
    if (!consumers_->Accept(y, sy, sx, &why)) {
      ctx_->Debug(id, why);
      return absl::OkStatus();
    }
    const std::vector<proto::Use> uses = g.ConsumerList(y);
    for (const proto::Use& use : uses) g.SetInput(use.node, use.slot, x);
    Rewrite r;
    r.action = "removed";
    r.tensor = y;
    r.before = sy.ToString();
    r.after = sx.ToString();
    r.detail = absl::StrCat(uses.size(), " consumer(s) now read '", x, "' directly");
    ctx_->Record(id, std::move(r));
    std::vector<std::string> inputs(n.input().begin() + 1, n.input().end());
    g.RemoveNode(id);
    ++stats_->nodes_removed;
    for (const std::string& t : inputs) RemoveIfDead(t);
    return absl::OkStatus();
  }

  // Removes what only fed a removed node: the side-effect-free nodes materialize-broadcast
  // builds Expand targets from (Shape, Constant, and the Gather/Transpose/Concat of a Gemm's
  // (M,N)), transitively, and initializers.
  void RemoveIfDead(const std::string& name) {
    proto::GraphEditor& g = ctx_->graph();
    if (name.empty() || g.UseCount(name) > 0 || g.IsGraphInput(name)) return;
    const int p = g.Producer(name);
    if (p >= 0) {
      const onnx::NodeProto& pn = g.node(p);
      const std::string& op = pn.op_type();
      if ((op != "Shape" && op != "Constant" && op != "Gather" && op != "Transpose" &&
           op != "Concat") ||
          pn.output_size() != 1 || (!pn.domain().empty() && pn.domain() != "ai.onnx")) {
        return;
      }
      Rewrite r;
      r.action = "removed";
      r.tensor = name;
      r.detail = "no uses left";
      ctx_->Record(p, std::move(r));
      const std::vector<std::string> inputs(pn.input().begin(), pn.input().end());
      g.RemoveNode(p);
      ++stats_->nodes_removed;
      for (const std::string& in : inputs) RemoveIfDead(in);
      return;
    }
    if (g.Initializer(name) != nullptr) {
      Rewrite r;
      r.node = "<initializers>";
      r.action = "removed";
      r.tensor = name;
      r.detail = "initializer with no uses left";
      r.bytes = -proto::RawByteSize(g.Initializer(name)->data_type(),
                                    ctx_->ShapeOf(name).NumElements().value_or(0));
      stats_->bytes_added += r.bytes;
      stats_->Log(std::move(r));
      g.RemoveInitializer(name);
    }
  }

  RewriteContext* ctx_ = nullptr;
  PassStats* stats_ = nullptr;
  std::optional<BroadcastConsumers> consumers_;
  analysis::NodeVerdict own_v_;  // TryRemove's record of the node itself, buffer reused
};

}  // namespace

BCAST_DEFINE_PASS(EliminateRedundantBroadcast)

}  // namespace onnx_bcast::passes
