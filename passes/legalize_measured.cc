// legalize-measured (see legalize_measured.h): the driver. The strategies in passes/legalize/
// offer candidate rewrites of a node (legalize/candidates.h) and know no engine; this asks the
// target which fits, by its table (legalize/judge.h: DecideNode and DecideForm) or its live
// oracle, cheapest first, and applies the first that does (legalize/apply.h).
#include "passes/legalize_measured.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/decide_node.h"
#include "passes/legalize/apply.h"
#include "passes/legalize/candidates.h"
#include "passes/legalize/gemm_layout.h"
#include "passes/legalize/judge.h"
#include "passes/legalize/layernorm.h"
#include "passes/legalize/node.h"
#include "passes/legalize/unsqueeze_as_reshape.h"
#include "passes/registry.h"
#include "passes/rewrite_context.h"
#include "proto/graph_structure.h"
#include "support/status_macros.h"
#include "targets/form_oracle.h"
#include "targets/targets.h"

namespace onnx_bcast::passes {
namespace {

using broadcast::Shape;
using legalize::Plan;

// The search for one node: the node read once, its judge, the candidates in cost order, and
// the first that fits applied.
class NodeLegalizer {
 public:
  NodeLegalizer(RewriteContext* ctx, const targets::TargetProfile& p, int id,
                const analysis::BroadcastOp& op)
      : ctx_(ctx), p_(p), node_(legalize::ReadNode(ctx, id, op)), judge_(node_, p) {}
  NodeLegalizer(const NodeLegalizer&) = delete;
  NodeLegalizer& operator=(const NodeLegalizer&) = delete;

  absl::Status Run() {
    const onnx::NodeProto& n = ctx_->graph().node(node_.id);
    analysis::NodeVerdict v;
    if (!judge_.Decide(n, node_.shapes, &v)) return Ok();
    node_.output = v.output;
    if (ctx_->options().live != nullptr && ctx_->path() == "main" &&
        proto::IsSingleGraph(ctx_->model().proto)) {
      if (std::optional<proto::Model> here = FragmentOfNode(); here.has_value()) {
        absl::StatusOr<targets::LiveVerdict> now = DecideLive(*here);
        if (now.ok()) return RunLive(n, v, *here, *now);
      }
    }
    const targets::FormDecision now =
        targets::DecideForm(v, p_, legalize::Judge::IsConstantFn(n, node_.constant));
    if (now.fits) return Ok();  // already in a running cell: never rewritten
    if (v.verdict == broadcast::Verdict::kError) {
      return absl::InvalidArgumentError(v.message);
    }
    for (const Shape& s : node_.shapes) {
      if (!s.rank_known) {
        ctx_->Debug(node_.id, absl::StrCat(n.op_type(), " '", ctx_->Label(node_.id),
                                           "': an operand has an unknown rank"));
        return Ok();
      }
    }
    const size_t logged = ctx_->stats().log.size();
    std::vector<Plan> plans = Candidates();
    for (const Plan& plan : plans) {
      if (!judge_.Fits(plan)) continue;
      const absl::Status s = Apply(plan);
      MarkDecided(logged, judge_.TableDecision());
      return s;
    }
    // Last resort: a constant broadcast beyond the fold limit (a 2048-element attention
    // mask of a windowed transformer) up to the limit fold-constants works under, rather than no
    // placement.
    const int64_t wider = ctx_->options().constant_fold_limit_bytes;
    if (wider > ctx_->fold_limit_bytes()) {
      ctx_->SetFoldLimitBytes(wider);
      std::vector<Plan> more = Candidates();
      for (const Plan& plan : more) {
        if (!judge_.Fits(plan)) continue;
        ctx_->Debug(node_.id,
                    absl::StrCat(n.op_type(), " '", ctx_->Label(node_.id),
                                 "': placed by folding a constant beyond the fold limit (",
                                 ctx_->options().fold_limit_bytes, " bytes), within ", wider));
        const absl::Status s = Apply(plan);
        MarkDecided(logged, judge_.TableDecision());
        ctx_->SetFoldLimitBytes(-1);
        return s;
      }
      ctx_->SetFoldLimitBytes(-1);
    }
    ctx_->Debug(node_.id,
                absl::StrCat(NoteHead(n), ": none of ", plans.size(), " rewrites lands in a cell ",
                             p_.name, " runs; left for the target check (", now.why, ")"));
    return Ok();
  }

 private:
  static absl::Status Ok() { return absl::OkStatus(); }

  // At most this many candidates of one node are run on the engine: each is a child process
  // (a few ms); the cheapest come first, and a form no rewrite fixes is usually an op the
  // engine lacks.
  static constexpr int kMaxLiveCandidates = 24;

  // The op's measured ranks, for the view and rank-raise strategies.
  legalize::OpRanks Ranks() const {
    legalize::OpRanks ranks;
    ranks.target_max_rank = p_.max_rank;
    const std::string& op = ctx_->graph().node(node_.id).op_type();
    if (auto it = p_.op_rules.find(op); it != p_.op_rules.end()) {
      ranks.min_rank = it->second.min_rank;
      ranks.max_rank = it->second.max_rank;
    }
    return ranks;
  }

  std::vector<Plan> Candidates() const { return legalize::Candidates(node_, Ranks()); }

  // The constants a fold may leave: those the target loads.
  legalize::ConstantTypes Types() const {
    return {[this](int32_t type) { return p_.InitializerTypeAllowed(type); }, p_.name};
  }

  absl::Status Apply(const Plan& plan) { return legalize::ApplyPlan(&node_, plan, Types()); }

  // Appends `how` to the details of the rewrites logged for this node from `from` on.
  void MarkDecided(size_t from, const std::string& how) {
    std::vector<Rewrite>& log = ctx_->stats().log;
    for (size_t k = from; k < log.size(); ++k) absl::StrAppend(&log[k].detail, "; ", how);
  }

  // "<op> '<label>': <shape> and <shape>", how a note on a node left as it is begins.
  std::string NoteHead(const onnx::NodeProto& n) const {
    std::vector<std::string> texts;
    for (const Shape& s : node_.shapes) texts.push_back(s.ToString());
    return absl::StrCat(n.op_type(), " '", ctx_->Label(node_.id),
                        "': ", absl::StrJoin(texts, " and "));
  }

  // The node as a fragment for the live oracle (form_oracle.h), or nullopt (a shape or type
  // not known exactly).
  std::optional<proto::Model> FragmentOfNode() {
    const onnx::NodeProto& n = ctx_->graph().node(node_.id);
    std::vector<targets::FragmentOperand> ops;
    for (int k = 0; k < n.input_size(); ++k) {
      targets::FragmentOperand o;
      o.name = n.input(k);
      if (!o.name.empty()) {
        o.shape = node_.shapes[k];
        o.elem = ctx_->ElemOf(o.name);
        o.constant = ctx_->graph().ConstantValue(o.name);
      }
      ops.push_back(std::move(o));
    }
    return targets::NodeFragment(ctx_->model(), n, ops, ctx_->ElemOf(n.output(0)), node_.output);
  }

  absl::StatusOr<targets::LiveVerdict> DecideLive(const proto::Model& fragment) {
    std::vector<absl::StatusOr<targets::LiveVerdict>> out =
        ctx_->options().live->Decide({&fragment});
    if (out.size() != 1) return absl::InternalError("the oracle gave no verdict");
    return std::move(out[0]);
  }

  // The fragment `here` (this node alone) after `plan`: the same strategies on a context of
  // its own, so that what runs on the engine is exactly what the model gets.
  std::optional<proto::Model> CandidateFragment(const proto::Model& here, const Plan& plan) {
    proto::Model f = here;
    PassOptions o = ctx_->options();
    o.live = nullptr;
    o.analyses = nullptr;
    o.original_index = nullptr;
    o.fold_limit_bytes = ctx_->fold_limit_bytes();
    PassStats stats;
    stats.keep_log = false;
    {
      RewriteContext fc(&f, kLegalizeMeasuredPassName, o, &stats);
      if (!fc.Init().ok()) return std::nullopt;
      const std::optional<analysis::BroadcastOp> op = fc.NumpyFormBroadcast(0);
      if (!op) return std::nullopt;
      legalize::Node one = legalize::ReadNode(&fc, 0, *op);
      one.output = node_.output;
      if (!legalize::ApplyPlan(&one, plan, Types()).ok()) return std::nullopt;
      fc.Commit();
    }
    return f;
  }

  // Live decision: the node as it is, then each candidate in cost order, run on the engine at
  // the exact shapes; the first that runs and matches is applied.
  absl::Status RunLive(const onnx::NodeProto& n, const analysis::NodeVerdict& v,
                       const proto::Model& here, const targets::LiveVerdict& now) {
    const std::string label = ctx_->options().live->label();
    const int id = node_.id;
    if (now.matches) {
      ctx_->Debug(id, absl::StrCat(n.op_type(), " '", ctx_->Label(id), "': runs and matches on ",
                                   label, " as it is (decided live)"));
      return Ok();
    }
    if (v.verdict == broadcast::Verdict::kError) return absl::InvalidArgumentError(v.message);
    node_.live = true;
    const size_t logged = ctx_->stats().log.size();
    int probed = 0;
    std::string last;
    for (int round = 0; round < 2 && probed < kMaxLiveCandidates; ++round) {
      if (round == 1) {
        // As the table path's last resort: constants broadcast up to fold-constants' limit.
        const int64_t wider = ctx_->options().constant_fold_limit_bytes;
        if (wider <= ctx_->fold_limit_bytes()) break;
        ctx_->SetFoldLimitBytes(wider);
      }
      const std::vector<Plan> plans = Candidates();
      for (const Plan& plan : plans) {
        if (probed >= kMaxLiveCandidates) break;
        if (plan.fold_node) {
          const absl::Status s = Apply(plan);
          MarkDecided(logged, "no node left to run");
          ctx_->SetFoldLimitBytes(-1);
          return s;
        }
        std::optional<proto::Model> cand = CandidateFragment(here, plan);
        if (!cand) continue;
        ++probed;
        absl::StatusOr<targets::LiveVerdict> r = DecideLive(*cand);
        if (!r.ok() || !r->matches) {
          if (r.ok()) last = r->why;
          continue;
        }
        const absl::Status s = Apply(plan);
        MarkDecided(logged, absl::StrCat("decided live on ", label, " (", probed,
                                         probed == 1 ? " candidate" : " candidates", " run)"));
        ctx_->SetFoldLimitBytes(-1);
        return s;
      }
    }
    ctx_->SetFoldLimitBytes(-1);
    ctx_->Debug(id, absl::StrCat(NoteHead(n), ": ", label, " (decided live): ", now.why,
                                 "; none of ", probed, " candidates run there runs and matches",
                                 last.empty() ? "" : absl::StrCat(" (last: ", last, ")"),
                                 "; left for the target check"));
    return Ok();
  }

  RewriteContext* ctx_;
  const targets::TargetProfile& p_;
  legalize::Node node_;
  legalize::Judge judge_;  // reads node_
};

// LayerNormalization node `id` decomposed (legalize/layernorm.h) where the target does not run
// it: decided live when the oracle can run the node (decomposed when it does not run and
// match), else by the table (decomposed when the profile measures no op.LayerNormalization
// rule).
void DecomposeLayerNorm(RewriteContext* ctx, const targets::TargetProfile& p, int id) {
  const std::optional<legalize::LayerNormPlan> plan = legalize::LayerNormCandidate(ctx, id);
  if (!plan) return;
  const onnx::NodeProto& n = ctx->graph().node(id);
  bool decompose = p.op_rules.count("LayerNormalization") == 0;
  std::string how = "decided by the table (no op.LayerNormalization rule)";
  if (ctx->options().live != nullptr && ctx->path() == "main" &&
      proto::IsSingleGraph(ctx->model().proto)) {
    std::vector<targets::FragmentOperand> ops;
    for (const std::string& in : n.input()) {
      targets::FragmentOperand o;
      o.name = in;
      if (!in.empty()) {
        o.shape = ctx->ShapeOf(in);
        o.elem = ctx->ElemOf(in);
        o.constant = ctx->graph().ConstantValue(in);
      }
      ops.push_back(std::move(o));
    }
    onnx::NodeProto one = n;
    one.mutable_output()->DeleteSubrange(1, one.output_size() - 1);
    if (std::optional<proto::Model> f =
            targets::NodeFragment(ctx->model(), one, ops, onnx::TensorProto::FLOAT, plan->x);
        f.has_value()) {
      std::vector<absl::StatusOr<targets::LiveVerdict>> v = ctx->options().live->Decide({&*f});
      if (v.size() == 1 && v[0].ok()) {
        decompose = !v[0]->matches;
        how = absl::StrCat("decided live on ", ctx->options().live->label(),
                           decompose ? absl::StrCat(": ", v[0]->why) : "");
      }
    }
  }
  if (!decompose) {
    ctx->Debug(id, absl::StrCat("LayerNormalization '", ctx->Label(id), "': kept (", how, ")"));
    return;
  }
  legalize::ApplyLayerNorm(ctx, id, *plan, how);
}

class LegalizeMeasured : public Pass {
 public:
  absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) override {
    const targets::TargetProfile* profile = options.target;
    if (profile == nullptr) {
      return absl::FailedPreconditionError(
          "the 'legalize-measured' pass needs a target table (--target or --target-file)");
    }
    return RewriteEveryGraph(model, kLegalizeMeasuredPassName, options, stats,
                             [profile](RewriteContext& ctx) { return RunOnGraph(ctx, *profile); });
  }

 private:
  static absl::Status RunOnGraph(RewriteContext& ctx, const targets::TargetProfile& profile) {
    // LayerNormalization first, so that its chain's broadcasts are placed below like any
    // other.
    bool decomposed = false;
    for (int id = 0; id < ctx.graph().original_node_count(); ++id) {
      const onnx::NodeProto& n = ctx.graph().node(id);
      if (!ctx.graph().alive(id) || n.op_type() != "LayerNormalization" ||
          !(n.domain().empty() || n.domain() == "ai.onnx") || ctx.opset() < 17) {
        continue;
      }
      const int64_t before = ctx.stats().rewrites;
      DecomposeLayerNorm(&ctx, profile, id);
      decomposed |= ctx.stats().rewrites > before;
    }
    if (decomposed) ctx.Commit();
    // Views and Gemm layouts the engine refuses (live only): a Reshape to a constant shape,
    // B transposed with transB = 1.
    BCAST_RETURN_IF_ERROR(legalize::LegalizeViews(ctx));
    BCAST_RETURN_IF_ERROR(legalize::LegalizeGemmLayout(ctx));
    for (int id = 0; id < ctx.graph().original_node_count(); ++id) {
      if (!ctx.graph().alive(id)) continue;
      const std::optional<analysis::BroadcastOp> op = ctx.NumpyFormBroadcast(id);
      if (!op) continue;
      NodeLegalizer one(&ctx, profile, id, *op);
      BCAST_RETURN_IF_ERROR(one.Run());
    }
    return absl::OkStatus();
  }
};

}  // namespace

BCAST_DEFINE_PASS(LegalizeMeasured)

}  // namespace onnx_bcast::passes
