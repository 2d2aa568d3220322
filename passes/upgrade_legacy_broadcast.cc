// upgrade-legacy-broadcast (see upgrade_legacy_broadcast.h).
#include "passes/upgrade_legacy_broadcast.h"

#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broadcast/rules.h"
#include "passes/registry.h"
#include "passes/rewrite_context.h"
#include "proto/opsets.h"
#include "support/status_macros.h"

namespace onnx_bcast::passes {
namespace {

constexpr int64_t kNumpyOpset = 7;

std::optional<int64_t> IntAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return std::nullopt;
}

bool RemoveAttr(onnx::NodeProto* n, const std::string& name) {
  auto* attrs = n->mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i) {
    if (attrs->Get(i).name() == name) {
      attrs->DeleteSubrange(i, 1);
      return true;
    }
  }
  return false;
}

bool NeedsUpgrade(const onnx::NodeProto& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return false;
  return analysis::IsLegacyAxisBinaryOp(n.op_type()) || n.op_type() == "PRelu" || n.op_type() == "Gemm";
}

// The first legacy broadcasting node inside a subgraph, if any.
const onnx::NodeProto* LegacyInSubgraph(const onnx::GraphProto& g, bool nested) {
  for (const auto& n : g.node()) {
    if (nested && NeedsUpgrade(n)) return &n;
    for (const auto& attr : n.attribute()) {
      if (attr.has_g()) {
        if (const auto* found = LegacyInSubgraph(attr.g(), true)) return found;
      }
      for (const auto& sub : attr.graphs()) {
        if (const auto* found = LegacyInSubgraph(sub, true)) return found;
      }
    }
  }
  return nullptr;
}

class UpgradeLegacyBroadcast : public Pass {
 public:
  absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) override {
    const int64_t opset = proto::DefaultOpset(model->proto);
    if (opset >= kNumpyOpset || opset == 0) return absl::OkStatus();
    if (const onnx::NodeProto* n = LegacyInSubgraph(model->proto.graph(), false)) {
      return absl::UnimplementedError(
          absl::StrCat(n->op_type(), " '", n->name(), "' inside a subgraph uses opset-", opset,
                       " broadcasting; upgrading subgraphs is not supported"));
    }
    RewriteContext ctx(model, kUpgradeLegacyBroadcastPassName, options, stats);
    BCAST_RETURN_IF_ERROR(ctx.Init());
    proto::GraphEditor& g = ctx.graph();
    for (int id = 0; id < g.original_node_count(); ++id) {
      const onnx::NodeProto& n = g.node(id);
      if (!NeedsUpgrade(n)) continue;
      absl::Status s;
      if (analysis::IsLegacyAxisBinaryOp(n.op_type())) {
        s = UpgradeBinary(&ctx, id, opset);
      } else if (n.op_type() == "PRelu") {
        s = UpgradePRelu(&ctx, id, opset);
      } else if (RemoveAttr(g.mutable_node(id), "broadcast")) {
        Rewrite r;
        r.action = "upgraded";
        r.detail = "Gemm: attribute 'broadcast' dropped (C broadcasts unidirectionally)";
        ctx.Record(id, std::move(r));
      }
      if (!s.ok()) return s;
    }
    ctx.Commit();
    // Ops other than the ones rewritten here whose schema changes on the way to opset 7.
    std::vector<std::string> others;
    for (const std::string& op : proto::OpsChangedBetween(model->proto, opset, kNumpyOpset)) {
      if (!analysis::IsLegacyAxisBinaryOp(op) && op != "PRelu" && op != "Gemm") others.push_back(op);
    }
    Rewrite r;
    r.node = "<model>";
    r.action = "upgraded";
    if (others.empty()) {
      proto::SetDefaultOpset(&model->proto, kNumpyOpset);
      r.detail = absl::StrCat("default-domain opset ", opset, " -> ", kNumpyOpset);
    } else {
      absl::StatusOr<onnx::ModelProto> converted = proto::ConvertDefaultOpset(*model, kNumpyOpset);
      if (!converted.ok() && absl::IsInvalidArgument(converted.status())) {
        return converted.status();  // an invalid model (exit 2), not a missing feature
      }
      if (!converted.ok()) {
        return absl::UnimplementedError(absl::StrCat(
            "ops ", absl::StrJoin(others, ", "), " change between opset ", opset, " and ",
            kNumpyOpset, " and libonnx's version converter cannot convert them: ",
            converted.status().message()));
      }
      model->proto = std::move(*converted);
      r.action = "converted";
      r.detail =
          absl::StrCat("default-domain opset ", opset, " -> ", kNumpyOpset,
                       " by libonnx's version converter (for ", absl::StrJoin(others, ", "), ")");
    }
    stats->Log(std::move(r));
    return absl::OkStatus();
  }

 private:
  static absl::Status UpgradeBinary(RewriteContext* ctx, int id, int64_t opset) {
    proto::GraphEditor& g = ctx->graph();
    const onnx::NodeProto& n = g.node(id);
    const bool broadcast = IntAttr(n, "broadcast").value_or(0) != 0;
    const std::optional<int64_t> axis = IntAttr(n, "axis");
    if (!broadcast || n.input_size() != 2) {
      // Equal shapes under both rules; the attributes only go.
      // Both attributes go, so no short-circuit.
      const bool dropped_broadcast = RemoveAttr(g.mutable_node(id), "broadcast");
      const bool dropped_axis = RemoveAttr(g.mutable_node(id), "axis");
      const bool dropped = dropped_broadcast || dropped_axis;
      if (dropped) {
        Rewrite r;
        r.action = "upgraded";
        r.detail = "attributes 'broadcast'/'axis' dropped (broadcast=0)";
        ctx->Record(id, std::move(r));
      }
      return absl::OkStatus();
    }
    const std::string b = n.input(1);
    const broadcast::Shape sa = ctx->ShapeOf(n.input(0));
    const broadcast::Shape sb = ctx->ShapeOf(b);
    const std::string head =
        absl::StrCat(n.op_type(), " '", ctx->Label(id), "' (opset ", opset,
                     ", broadcast=1, axis=", axis ? absl::StrCat(*axis) : "default", ")");
    if (!sa.rank_known || !sb.rank_known) {
      return absl::UnimplementedError(absl::StrCat(head, ": the rank of A ", sa.ToString(),
                                                   " or B ", sb.ToString(), " is unknown"));
    }
    analysis::NodeVerdict v;
    if (ctx->Decide(id, &v) && v.verdict == broadcast::Verdict::kError) {
      return absl::InvalidArgumentError(v.message);
    }
    Rewrite r;
    r.tensor = b;
    r.before = sb.ToString();
    std::string out = b;
    if (std::optional<std::vector<int64_t>> axes =
            broadcast::LegacyToNumpyUnsqueezeAxes(sa, sb, axis)) {
      if (!axes->empty()) {
        out = ctx->InsertUnsqueeze(b, *axes, id);
        r.detail =
            absl::StrCat("Unsqueeze axes [", absl::StrJoin(*axes, ","), "] -> '", out, "'; ");
      }
    } else if (std::optional<broadcast::Shape> target = broadcast::LegacyToNumpyBShape(sa, sb, axis)) {
      // Kept dims are copied with 0 (Reshape-5 semantics), the rest are 1s.
      std::vector<int64_t> shape;
      for (int64_t i = 0; i < target->rank(); ++i) {
        shape.push_back(i < sb.rank() && !target->dims[i].Is(1) ? 0 : 1);
        if (i < sb.rank() && target->dims[i].is_value()) shape.back() = target->dims[i].value();
      }
      out = ctx->InsertReshape(b, shape, *target, id);
      r.detail = absl::StrCat("Reshape to ", target->ToString(), " -> '", out, "'; ");
    } else {
      return absl::UnimplementedError(absl::StrCat(head, ": cannot express B ", sb.ToString(),
                                                   " for A ", sa.ToString(),
                                                   " with numpy broadcasting"));
    }
    g.SetInput(id, 1, out);
    RemoveAttr(g.mutable_node(id), "broadcast");
    RemoveAttr(g.mutable_node(id), "axis");
    r.action = out == b ? "upgraded" : "inserted";
    r.after = ctx->ShapeOf(out).ToString();
    r.detail += "attributes 'broadcast'/'axis' dropped";
    ctx->Record(id, std::move(r));
    return absl::OkStatus();
  }

  // PRelu-1/6 apply a 1-D slope per channel (axis 1), as `check` reads them.
  static absl::Status UpgradePRelu(RewriteContext* ctx, int id, int64_t opset) {
    proto::GraphEditor& g = ctx->graph();
    const onnx::NodeProto& n = g.node(id);
    if (n.input_size() != 2) return absl::OkStatus();
    const broadcast::Shape sx = ctx->ShapeOf(n.input(0));
    const broadcast::Shape ss = ctx->ShapeOf(n.input(1));
    if (!sx.rank_known || !ss.rank_known) {
      ctx->Debug(id, "PRelu with an operand of unknown rank left as is");
      return absl::OkStatus();
    }
    analysis::NodeVerdict v;
    if (!ctx->Decide(id, &v) || v.verdict != broadcast::Verdict::kOk) {
      // Not per channel: a slope already in numpy form (PRelu-7's rule) needs nothing.
      if (broadcast::BroadcastUnidirectional(sx, ss).ok()) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("PRelu '", ctx->Label(id), "' (opset ", opset, "): slope ", ss.ToString(),
                       " fits X ", sx.ToString(), " neither per channel nor unidirectionally"));
    }
    std::optional<std::vector<int64_t>> axes = broadcast::LegacyToNumpyUnsqueezeAxes(sx, ss, 1);
    if (!axes || axes->empty()) return absl::OkStatus();
    const std::string slope = n.input(1);
    const std::string out = ctx->InsertUnsqueeze(slope, *axes, id);
    g.SetInput(id, 1, out);
    Rewrite r;
    r.action = "inserted";
    r.tensor = slope;
    r.before = ss.ToString();
    r.after = ctx->ShapeOf(out).ToString();
    r.detail = absl::StrCat("per-channel slope: Unsqueeze axes [", absl::StrJoin(*axes, ","),
                            "] -> '", out, "'");
    ctx->Record(id, std::move(r));
    return absl::OkStatus();
  }
};

}  // namespace

BCAST_DEFINE_PASS(UpgradeLegacyBroadcast)

}  // namespace onnx_bcast::passes
