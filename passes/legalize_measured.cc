// legalize-measured (see legalize_measured.h).
#include "passes/legalize_measured.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/decide_node.h"
#include "analysis/shape_propagation.h"
#include "broadcast/view.h"
#include "passes/layernorm_decomposer.h"
#include "passes/legalize_gemm.h"
#include "passes/legalize_views.h"
#include "passes/node_evaluation.h"
#include "passes/registry.h"
#include "passes/rewrite_context.h"
#include "proto/graph_structure.h"
#include "support/status_macros.h"
#include "targets/form_oracle.h"
#include "targets/targets.h"

namespace onnx_bcast::passes {
namespace {

using broadcast::Shape;

// What a candidate does to one operand.
// kMulOnes: the operand takes the output's shape as Mul(ones, operand), ones a float32 constant
// of that shape, first (the form OpenCV's eltwise layers broadcast): 1 * x == x for every
// float32 x, -0, infinities and NaN included (a NaN's payload may change; it stays NaN). Only
// for computed float32 operands, whose broadcast an engine refuses as an Expand.
// kConcat: a computed operand given the output's shape by Concat of copies of itself along each
// broadcast axis (after aligning its rank): exact for every type (the same elements, copied).
// OpenCV 4.6 refuses `[1,1,1,48] / [1,1,1,1]` and an Expand of a computed `[1,1,1,1]`, and runs
// the Concat and the same-shape Div. At most kMaxConcatCopies copies per axis, two axes; offered
// only when the live oracle decides (no table measures Concat).
enum class Edit { kKeep, kAlign, kFull, kMulOnes, kConcat };
constexpr int64_t kMaxConcatCopies = 64;

// A node computed on a view of its operands (static shapes only): each operand reshaped to
// the collapsed broadcast of broadcast::BroadcastView (unit axes dropped, adjacent axes that every
// operand spans or broadcasts alike merged), padded with leading 1s to the op's smallest
// measured rank, the two axes of a rank-2 view optionally swapped; the result is transposed
// back and reshaped to the node's output shape. OpenCV 4.6 runs LayerNorm's
// `[1,T,C] - [1,T,1]` this way as `[C,T] - [1,T]`, and its `[1,T,C] * [C]` as `[T,C] * [C]`.
struct View {
  bool transpose = false;
  std::vector<std::vector<int64_t>> operands;  // per slot (after the swap), as computed on
  std::vector<int64_t> output;                 // the view's output (transposed when asked)
};

// One candidate rewrite of a node.
struct Plan {
  bool swap = false;
  bool fold_node = false;   // all operands constant: the node becomes one initializer
  std::vector<Edit> edits;  // per input slot, after the swap
  bool use_view = false;    // the node is computed on `view` instead (edits unused)
  View view;
  int cost = 0;
  int order = 0;  // enumeration order, the tie-break
};

// The operand-swapped op, when swapping the two operands keeps the meaning ("" otherwise).
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

Shape PrependOnes(const Shape& s, int64_t n) {
  Shape out = s;
  out.dims.insert(out.dims.begin(), static_cast<size_t>(std::max<int64_t>(n, 0)),
                  broadcast::Dim::Value(1));
  return out;
}

class LegalizeMeasured : public Pass {
 public:
  absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) override {
    const targets::TargetProfile* profile = options.target;
    if (profile == nullptr) {
      return absl::FailedPreconditionError(
          "the 'legalize-measured' pass needs a target table (--target or --target-file)");
    }
    return RewriteEveryGraph(
        model, kLegalizeMeasuredPassName, options, stats, [profile](RewriteContext& ctx) {
          // LayerNormalization first, so that its chain's broadcasts are
          // placed below like any other.
          bool decomposed = false;
          for (int id = 0; id < ctx.graph().original_node_count(); ++id) {
            const onnx::NodeProto& n = ctx.graph().node(id);
            if (!ctx.graph().alive(id) || n.op_type() != "LayerNormalization" ||
                !(n.domain().empty() || n.domain() == "ai.onnx") || ctx.opset() < 17) {
              continue;
            }
            const int64_t before = ctx.stats().rewrites;
            BCAST_RETURN_IF_ERROR(DecomposeLayerNorm(&ctx, *profile, id));
            decomposed |= ctx.stats().rewrites > before;
          }
          if (decomposed) ctx.Commit();
          // Views and Gemm layouts the engine refuses (live only): a Reshape to a constant
          // shape, B transposed with transB = 1.
          BCAST_RETURN_IF_ERROR(LegalizeViews(ctx));
          BCAST_RETURN_IF_ERROR(LegalizeGemmLayout(ctx));
          for (int id = 0; id < ctx.graph().original_node_count(); ++id) {
            if (!ctx.graph().alive(id)) continue;
            const std::optional<analysis::BroadcastOp> op = ctx.NumpyFormBroadcast(id);
            if (!op) continue;
            NodeLegalizer one(&ctx, *profile, id, *op);
            BCAST_RETURN_IF_ERROR(one.Run());
          }
          return absl::OkStatus();
        });
  }

 private:
  // The search for one node: its state, the candidates, and applying the chosen one.
  class NodeLegalizer {
   public:
    NodeLegalizer(RewriteContext* ctx, const targets::TargetProfile& p, int id, const analysis::BroadcastOp& op)
        : ctx_(ctx), p_(p), id_(id), op_(op) {}

    // Reads the node's operand shapes and constness from the context.
    void Prepare() {
      const onnx::NodeProto& n = ctx_->graph().node(id_);
      shapes_.clear();
      constant_.clear();
      for (int k = 0; k < n.input_size(); ++k) {
        shapes_.push_back(n.input(k).empty() ? Shape::UnknownRank() : ctx_->ShapeOfInput(id_, k));
        constant_.push_back(!n.input(k).empty() &&
                            ctx_->graph().ConstantValue(n.input(k)) != nullptr);
      }
    }

    absl::Status Run() {
      const onnx::NodeProto& n = ctx_->graph().node(id_);
      Prepare();
      analysis::NodeVerdict v;
      if (!Decide(n, shapes_, &v)) return Ok();
      output_ = v.output;
      if (ctx_->options().live != nullptr && ctx_->path() == "main" &&
          proto::IsSingleGraph(ctx_->model().proto)) {
        if (std::optional<proto::Model> here = FragmentOfNode(); here.has_value()) {
          absl::StatusOr<targets::LiveVerdict> now = DecideLive(*here);
          if (now.ok()) return RunLive(n, v, *here, *now);
        }
      }
      const targets::FormDecision now = targets::DecideForm(v, p_, IsConstantFn(n, constant_));
      if (now.fits) return Ok();  // already in a running cell: never rewritten
      if (v.verdict == broadcast::Verdict::kError) {
        return absl::InvalidArgumentError(v.message);
      }
      for (const Shape& s : shapes_) {
        if (!s.rank_known) {
          ctx_->Debug(id_, absl::StrCat(n.op_type(), " '", ctx_->Label(id_),
                                        "': an operand has an unknown rank"));
          return Ok();
        }
      }
      const size_t logged = ctx_->stats().log.size();
      std::vector<Plan> plans = Candidates(n);
      for (const Plan& plan : plans) {
        if (!Fits(n, plan)) continue;
        const absl::Status s = Apply(plan);
        MarkDecided(logged, TableDecision());
        return s;
      }
      // Last resort: a constant broadcast beyond the fold limit (a 2048-element attention
      // mask of Swin) up to the limit fold-constants works under, rather than no placement.
      const int64_t wider = ctx_->options().constant_fold_limit_bytes;
      if (wider > ctx_->fold_limit_bytes()) {
        ctx_->SetFoldLimitBytes(wider);
        std::vector<Plan> more = Candidates(n);
        for (const Plan& plan : more) {
          if (!Fits(n, plan)) continue;
          ctx_->Debug(id_,
                      absl::StrCat(n.op_type(), " '", ctx_->Label(id_),
                                   "': placed by folding a constant beyond the fold limit (",
                                   ctx_->options().fold_limit_bytes, " bytes), within ", wider));
          const absl::Status s = Apply(plan);
          MarkDecided(logged, TableDecision());
          ctx_->SetFoldLimitBytes(-1);
          return s;
        }
        ctx_->SetFoldLimitBytes(-1);
      }
      ctx_->Debug(
          id_, absl::StrCat(NoteHead(n), ": none of ", plans.size(), " rewrites lands in a cell ",
                            p_.name, " runs; left for the target check (", now.why, ")"));
      return Ok();
    }

   private:
    static absl::Status Ok() { return absl::OkStatus(); }

    // At most this many candidates of one node are run on the engine: each is a child process
    // (a few ms); the cheapest come first, and a form no rewrite fixes is usually an op the
    // engine lacks.
    static constexpr int kMaxLiveCandidates = 24;

    // Appends `how` to the details of the rewrites logged for this node from `from` on.
    void MarkDecided(size_t from, const std::string& how) {
      std::vector<Rewrite>& log = ctx_->stats().log;
      for (size_t k = from; k < log.size(); ++k) absl::StrAppend(&log[k].detail, "; ", how);
    }

    // "<op> '<label>': <shape> and <shape>", how a note on a node left as it is begins.
    std::string NoteHead(const onnx::NodeProto& n) const {
      std::vector<std::string> texts;
      for (const Shape& s : shapes_) texts.push_back(s.ToString());
      return absl::StrCat(n.op_type(), " '", ctx_->Label(id_),
                          "': ", absl::StrJoin(texts, " and "));
    }

    // The node as a fragment for the live oracle (form_oracle.h), or nullopt (a shape or type
    // not known exactly).
    std::optional<proto::Model> FragmentOfNode() {
      const onnx::NodeProto& n = ctx_->graph().node(id_);
      std::vector<targets::FragmentOperand> ops;
      for (int k = 0; k < n.input_size(); ++k) {
        targets::FragmentOperand o;
        o.name = n.input(k);
        if (!o.name.empty()) {
          o.shape = shapes_[k];
          o.elem = ctx_->ElemOf(o.name);
          o.constant = ctx_->graph().ConstantValue(o.name);
        }
        ops.push_back(std::move(o));
      }
      return targets::NodeFragment(ctx_->model(), n, ops, ctx_->ElemOf(n.output(0)), output_);
    }

    absl::StatusOr<targets::LiveVerdict> DecideLive(const proto::Model& fragment) {
      std::vector<absl::StatusOr<targets::LiveVerdict>> out = ctx_->options().live->Decide({&fragment});
      if (out.size() != 1) return absl::InternalError("the oracle gave no verdict");
      return std::move(out[0]);
    }

    // The fragment `here` (this node alone) after `plan`: the same Apply on a context of its
    // own, so that what runs on the engine is exactly what the model gets.
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
        NodeLegalizer one(&fc, p_, 0, *op);
        one.Prepare();
        one.output_ = output_;
        if (!one.Apply(plan).ok()) return std::nullopt;
        fc.Commit();
      }
      return f;
    }

    // Live decision: the node as it is, then each candidate in cost order, run on the engine at
    // the exact shapes; the first that runs and matches is applied.
    absl::Status RunLive(const onnx::NodeProto& n, const analysis::NodeVerdict& v, const proto::Model& here,
                         const targets::LiveVerdict& now) {
      const std::string label = ctx_->options().live->label();
      if (now.matches) {
        ctx_->Debug(
            id_, absl::StrCat(n.op_type(), " '", ctx_->Label(id_), "': runs and matches on ", label,
                              " as it is (decided live)"));
        return Ok();
      }
      if (v.verdict == broadcast::Verdict::kError) return absl::InvalidArgumentError(v.message);
      live_ = true;
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
        const std::vector<Plan> plans = Candidates(n);
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
      ctx_->Debug(id_, absl::StrCat(NoteHead(n), ": ", label, " (decided live): ", now.why,
                                    "; none of ", probed, " candidates run there runs and matches",
                                    last.empty() ? "" : absl::StrCat(" (last: ", last, ")"),
                                    "; left for the target check"));
      return Ok();
    }

    // `is_constant` over the names of `n`'s inputs, by slot.
    static std::function<bool(const std::string&)> IsConstantFn(const onnx::NodeProto& n,
                                                                const std::vector<bool>& constant) {
      std::set<std::string> names;
      for (int k = 0; k < n.input_size() && k < static_cast<int>(constant.size()); ++k) {
        if (constant[k]) names.insert(n.input(k));
      }
      return [names = std::move(names)](const std::string& name) { return names.count(name) > 0; };
    }

    // The rank and shape operand `slot` takes under kAlign and kFull; nullopt: not offered.
    std::optional<int64_t> AlignRank(int slot) const {
      if (op_.multidirectional()) return output_.rank();
      if (op_.kind == analysis::BroadcastOpKind::kPRelu && slot == 1) return shapes_[0].rank();
      if (op_.kind == analysis::BroadcastOpKind::kMatMul && shapes_.size() == 2 && shapes_[0].rank() >= 2 &&
          shapes_[1].rank() >= 2) {
        return std::max(shapes_[0].rank(), shapes_[1].rank());
      }
      return std::nullopt;
    }
    std::optional<Shape> FullShape(int slot) const {
      if (op_.multidirectional()) return output_;
      if (op_.kind == analysis::BroadcastOpKind::kPRelu && slot == 1) return shapes_[0];
      return std::nullopt;
    }
    // Whether kFull of `slot` can be built: a constant folds, or an Expand to a constant shape,
    // or to a run-time shape where the target takes those.
    bool FullPossible(const Shape& full) const {
      return full.Extents().has_value() || ctx_->RuntimeShapesAllowed();
    }

    // Whether kMulOnes of `slot` can be built: a float32 operand and a ones constant of the
    // static `full` shape within the fold limit.
    bool MulOnesPossible(int slot, const Shape& full) const {
      const onnx::NodeProto& n = ctx_->graph().node(id_);
      if (ctx_->ElemOf(n.input(slot)) != onnx::TensorProto::FLOAT) return false;
      const std::optional<std::vector<int64_t>> e = full.Extents();
      if (!e) return false;
      int64_t elements = 1;
      for (int64_t d : *e) elements *= d;
      return elements * 4 <= ctx_->fold_limit_bytes();
    }

    // The (axis, copies) Concats that give operand `slot` (aligned to full's rank) the static
    // shape `full`; empty when not possible (a dim neither 1 nor full's, too many copies or
    // axes, a shape not static).
    std::vector<std::pair<int64_t, int64_t>> ConcatAxes(int slot, const Shape& full) const {
      const std::optional<std::vector<int64_t>> f = full.Extents();
      const std::optional<std::vector<int64_t>> e =
          PrependOnes(shapes_[slot], full.rank() - shapes_[slot].rank()).Extents();
      if (!f || !e || f->size() != e->size()) return {};
      std::vector<std::pair<int64_t, int64_t>> axes;
      for (size_t a = 0; a < f->size(); ++a) {
        if ((*e)[a] == (*f)[a]) continue;
        if ((*e)[a] != 1 || (*f)[a] > kMaxConcatCopies) return {};
        axes.emplace_back(static_cast<int64_t>(a), (*f)[a]);
      }
      if (axes.size() > 2) return {};
      return axes;
    }

    std::vector<Plan> Candidates(const onnx::NodeProto& n) const {
      const int count = n.input_size();
      std::vector<std::vector<Edit>> per_slot(static_cast<size_t>(count));
      for (int k = 0; k < count; ++k) {
        per_slot[k].push_back(Edit::kKeep);
        if (n.input(k).empty()) continue;
        const std::optional<int64_t> rank = AlignRank(k);
        if (rank && *rank > shapes_[k].rank()) per_slot[k].push_back(Edit::kAlign);
        const std::optional<Shape> full = FullShape(k);
        // A constant too large to fold would become an Expand with only constant inputs,
        // which a target without run-time shapes refuses as well.
        const bool static_only_expand_of_constant = full && constant_[k] &&
                                                    !ctx_->RuntimeShapesAllowed() &&
                                                    !ctx_->FoldsToConstant(n.input(k), *full);
        if (full && !(shapes_[k] == *full) && FullPossible(*full) &&
            !static_only_expand_of_constant) {
          per_slot[k].push_back(Edit::kFull);
        }
        if (full && !constant_[k] && !(shapes_[k] == *full) && MulOnesPossible(k, *full)) {
          per_slot[k].push_back(Edit::kMulOnes);
        }
        // Only where the engine decides: no table measures Concat.
        if (live_ && full && !constant_[k] && !(shapes_[k] == *full) &&
            !ConcatAxes(k, *full).empty()) {
          per_slot[k].push_back(Edit::kConcat);
        }
      }
      std::vector<Plan> plans;
      int order = 0;
      bool all_constant = count > 0;
      for (int k = 0; k < count; ++k) all_constant = all_constant && constant_[k];
      if (all_constant && ctx_->options().evaluator != nullptr &&
          !ctx_->graph().IsGraphOutput(n.output(0)) &&
          !ctx_->graph().IsUsedBySubgraph(n.output(0)) && n.output_size() == 1 &&
          ctx_->path() == "main") {
        Plan p;
        p.fold_node = true;
        p.cost = 1;
        p.order = order++;
        plans.push_back(p);
      }
      const bool can_swap = count == 2 && !SwappedOp(n.op_type()).empty();
      // Every combination of per-slot edits (n-ary ops beyond 4 operands: uniform ones only).
      std::vector<std::vector<Edit>> combos = {{}};
      if (count <= 4) {
        for (int k = 0; k < count; ++k) {
          std::vector<std::vector<Edit>> next;
          for (const auto& c : combos) {
            for (Edit e : per_slot[k]) {
              next.push_back(c);
              next.back().push_back(e);
            }
          }
          combos = std::move(next);
        }
      } else {
        combos.clear();
        for (Edit e : {Edit::kKeep, Edit::kAlign, Edit::kFull}) {
          std::vector<Edit> c;
          for (int k = 0; k < count; ++k) {
            const bool offered =
                std::find(per_slot[k].begin(), per_slot[k].end(), e) != per_slot[k].end();
            c.push_back(offered ? e : Edit::kKeep);
          }
          combos.push_back(std::move(c));
        }
      }
      for (bool swap : {false, true}) {
        if (swap && !can_swap) continue;
        for (const std::vector<Edit>& edits : combos) {
          Plan p;
          p.swap = swap;
          p.edits = edits;
          if (swap) std::swap(p.edits[0], p.edits[1]);  // edits are by slot after the swap
          p.cost = swap ? 1 : 0;
          bool any = swap;
          for (int k = 0; k < count; ++k) {
            const Edit e = edits[k];  // slot k before the swap
            if (e == Edit::kKeep) continue;
            any = true;
            // An inserted node costs more than a folded constant.
            // Concat copies the data: dearer than a view (10-12), cheaper than a rank raise.
            p.cost += e == Edit::kAlign     ? (constant_[k] ? 1 : 2)
                      : e == Edit::kMulOnes ? 5
                      : e == Edit::kConcat  ? 13
                                            : (constant_[k] ? 3 : 4);
          }
          if (!any) continue;
          p.order = order++;
          plans.push_back(std::move(p));
        }
      }
      AddViewPlans(n, can_swap, &order, &plans);
      AddRaisePlans(n, can_swap, &order, &plans);
      std::stable_sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
        return a.cost != b.cost ? a.cost < b.cost : a.order < b.order;
      });
      return plans;
    }

    // A multidirectional node at static extents, collapsed (broadcast/view.h): what the view
    // and rank-raise plans rearrange.
    struct Collapsed {
      std::vector<std::vector<int64_t>> extents;  // each operand's, as it is
      std::vector<int64_t> dims;                  // the collapsed output's
      std::vector<std::vector<int64_t>> view;     // each operand's in the collapsed view
    };
    // nullopt for another form, an extent that is not static, or an empty output.
    std::optional<Collapsed> Collapse(const onnx::NodeProto& n) const {
      if (!op_.multidirectional()) return std::nullopt;
      const std::optional<std::vector<int64_t>> out = output_.Extents();
      if (!out) return std::nullopt;
      Collapsed c;
      for (int k = 0; k < n.input_size(); ++k) {
        if (n.input(k).empty()) return std::nullopt;
        std::optional<std::vector<int64_t>> e = shapes_[k].Extents();
        if (!e) return std::nullopt;
        c.extents.push_back(*std::move(e));
      }
      absl::StatusOr<broadcast::BroadcastView> bv = broadcast::BroadcastView::Create(c.extents, *out);
      if (!bv.ok() || bv->output_elements() == 0) return std::nullopt;
      c.dims = bv->dims();
      for (int k = 0; k < n.input_size(); ++k) {
        std::vector<int64_t> e;
        const absl::Span<const int64_t> strides = bv->strides(k);
        for (int d = 0; d < bv->rank(); ++d) e.push_back(strides[d] != 0 ? c.dims[d] : 1);
        c.view.push_back(std::move(e));
      }
      return c;
    }

    // Plan `view` at `cost`, and (where the operands may swap) swapped at one more.
    static void AddViewPlan(const View& view, int cost, bool can_swap, int* order,
                            std::vector<Plan>* plans) {
      for (bool swap : {false, true}) {
        if (swap && !can_swap) continue;
        Plan p;
        p.swap = swap;
        p.use_view = true;
        p.view = view;
        if (swap) std::swap(p.view.operands[0], p.view.operands[1]);
        p.cost = cost + (swap ? 1 : 0);
        p.order = (*order)++;
        plans->push_back(std::move(p));
      }
    }

    // View plans (see View): dearer than any edit, as each inserts a Reshape per computed
    // operand and one or two nodes after the node.
    void AddViewPlans(const onnx::NodeProto& n, bool can_swap, int* order,
                      std::vector<Plan>* plans) const {
      const std::optional<Collapsed> c = Collapse(n);
      if (!c || c->dims.empty()) return;
      const std::vector<std::vector<int64_t>>& extents = c->extents;
      const std::vector<int64_t>& dims = c->dims;
      const int64_t view_rank = static_cast<int64_t>(dims.size());
      int64_t min_rank = 0;
      if (auto it = p_.op_rules.find(n.op_type()); it != p_.op_rules.end()) {
        min_rank = it->second.min_rank;
      }
      const int64_t rank = std::max<int64_t>(view_rank, min_rank);
      const auto pad = [rank](std::vector<int64_t> e) {
        e.insert(e.begin(), static_cast<size_t>(rank - static_cast<int64_t>(e.size())), 1);
        return e;
      };
      bool any_constant = false;
      for (bool c : constant_) any_constant = any_constant || c;
      for (bool transpose : {false, true}) {
        if (transpose && view_rank != 2) continue;
        // Constants at the view's rank, or with its leading 1s dropped (OpenCV runs a bias
        // only at its own lower rank).
        for (bool low_constants : {false, true}) {
          if (low_constants && !any_constant) continue;
          View v;
          v.transpose = transpose;
          v.output = pad(transpose ? std::vector<int64_t>{dims[1], dims[0]} : dims);
          bool possible = true;
          bool changes = rank != output_.rank() || transpose;
          for (int k = 0; k < n.input_size(); ++k) {
            std::vector<int64_t> e = c->view[k];
            // A constant is reshaped, never permuted: transposing one with two real axes
            // would need its data moved.
            if (transpose && constant_[k] && e[0] > 1 && e[1] > 1) possible = false;
            if (transpose) std::swap(e[0], e[1]);
            e = pad(std::move(e));
            if (constant_[k] && low_constants) {
              while (e.size() > 1 && e.front() == 1) e.erase(e.begin());
            }
            changes = changes || e != extents[k];
            v.operands.push_back(std::move(e));
          }
          if (!possible || !changes) continue;
          AddViewPlan(v, 10 + (transpose ? 2 : 0), can_swap, order, plans);
        }
      }
    }

    // Rank-raise plans: the collapsed view (see View) with unit axes inserted at every
    // placement, up to the engine's maximum rank for the op (a rank-0 node is raised to the
    // op's minimum rank). OpenCV 4.6 runs `[1,1,1,384] - [1,1,1,1]` but computes `[1,1,32] -
    // [1,1,1]` with one element, and refuses `[1,32] - [1,1]`: where the axes sit decides.
    // Dearer than the views; the smallest rank first.
    void AddRaisePlans(const onnx::NodeProto& n, bool can_swap, int* order,
                       std::vector<Plan>* plans) const {
      const std::optional<Collapsed> c = Collapse(n);
      if (!c) return;
      int64_t min_rank = 1;
      int64_t max_rank = p_.max_rank > 0 ? p_.max_rank : 4;
      if (auto it = p_.op_rules.find(n.op_type()); it != p_.op_rules.end()) {
        min_rank = std::max<int64_t>(min_rank, it->second.min_rank);
        if (it->second.max_rank > 0) max_rank = std::min(max_rank, it->second.max_rank);
      }
      max_rank = std::min<int64_t>(max_rank, 5);  // C(5,2) placements at most per rank
      const std::vector<int64_t>& dims = c->dims;
      const int q = static_cast<int>(dims.size());
      const std::vector<std::vector<int64_t>>& view_operands = c->view;
      for (int64_t r = std::max<int64_t>(q, min_rank); r <= max_rank; ++r) {
        // Every choice of q positions among r for the real axes, in order.
        std::vector<int> pos(static_cast<size_t>(q));
        for (int i = 0; i < q; ++i) pos[i] = i;
        while (true) {
          auto place = [&](const std::vector<int64_t>& e) {
            std::vector<int64_t> o(static_cast<size_t>(r), 1);
            for (int i = 0; i < q; ++i) o[pos[i]] = e[i];
            return o;
          };
          View v;
          v.output = place(dims);
          bool changes = static_cast<int64_t>(r) != output_.rank();
          for (int k = 0; k < n.input_size(); ++k) {
            v.operands.push_back(place(view_operands[k]));
            changes = changes || v.operands.back() != c->extents[k];
          }
          // The leading-1s placement at the view's own rank is a view plan already.
          bool leading = true;
          for (int i = 0; i < q; ++i) leading = leading && pos[i] == r - q + i;
          const bool is_view_plan = leading && r == std::max<int64_t>(q, min_rank) && q > 0;
          if (changes && !is_view_plan) {
            AddViewPlan(v, 14 + static_cast<int>(r - q), can_swap, order, plans);
          }
          // The next placement (lexicographic combinations).
          int i = q - 1;
          while (i >= 0 && pos[i] == r - q + i) --i;
          if (i < 0) break;
          ++pos[i];
          for (int j = i + 1; j < q; ++j) pos[j] = pos[j - 1] + 1;
        }
      }
    }

    // The node as `plan` would leave it, decided by the target check's lookup.
    bool Fits(const onnx::NodeProto& n, const Plan& plan) {
      if (plan.fold_node) return true;  // no node left to decide
      if (plan.use_view) return FitsView(n, plan);
      onnx::NodeProto cand = n;
      std::vector<Shape> shapes = shapes_;
      std::vector<bool> constant = constant_;
      std::vector<std::string> names(n.input().begin(), n.input().end());
      if (plan.swap) {
        cand.set_op_type(SwappedOp(n.op_type()));
        std::swap(shapes[0], shapes[1]);
        constant.swap(constant[0], constant[1]);
        std::swap(names[0], names[1]);
      }
      for (size_t k = 0; k < plan.edits.size(); ++k) {
        const int orig = plan.swap && k < 2 ? 1 - static_cast<int>(k) : static_cast<int>(k);
        if (ReshapesComputedScalar(plan.edits[k], shapes[k], constant[k])) return false;
        switch (plan.edits[k]) {
          case Edit::kKeep:
            break;
          case Edit::kAlign:
            shapes[k] = PrependOnes(shapes[k], *AlignRank(orig) - shapes[k].rank());
            names[k] += "\x01aligned";  // a name no model has: constness by slot below
            break;
          case Edit::kConcat:
            shapes[k] = *FullShape(orig);
            names[k] += "\x01concat";
            break;
          case Edit::kMulOnes: {
            const Shape full = *FullShape(orig);
            // The inserted Mul(ones, operand) is judged as well.
            onnx::NodeProto mul;
            mul.set_op_type("Mul");
            mul.add_input("\x01ones");
            mul.add_input(names[k]);
            mul.add_output("\x01product");
            analysis::NodeVerdict mv;
            if (!Decide(mul, {full, shapes[k]}, &mv) || mv.verdict == broadcast::Verdict::kError ||
                !targets::DecideForm(mv, p_, [](const std::string& name) {
                   return name == "\x01ones";
                 }).fits) {
              return false;
            }
            constant[k] = false;
            shapes[k] = full;
            names[k] += "\x01mulones";
            break;
          }
          case Edit::kFull: {
            const Shape full = *FullShape(orig);
            const bool folds = constant[k] && ctx_->FoldsToConstant(n.input(orig), full);
            // Apply aligns the operand, then expands it: that Expand must be in a running cell
            // too (OpenCV 4.6 imports only some axis patterns).
            if (!folds && !targets::DecideExpandForm(PrependOnes(shapes[k], full.rank() - shapes[k].rank()),
                                            full, constant[k], p_)
                               .fits) {
              return false;
            }
            constant[k] = folds;
            shapes[k] = full;
            names[k] += "\x01full";
            break;
          }
        }
        cand.set_input(static_cast<int>(k), names[k]);
      }
      analysis::NodeVerdict v;
      if (!Decide(cand, shapes, &v)) return false;
      return v.verdict != broadcast::Verdict::kError &&
             Decided(targets::DecideForm(v, p_, IsConstantFn(cand, constant)));
    }

    // The verdict of `node` (this node, or a candidate for it) at `shapes`, given in its input
    // order: what the target check would find once the rewrite is made.
    bool Decide(const onnx::NodeProto& node, absl::Span<const Shape> shapes, analysis::NodeVerdict* v) {
      analysis::DecideOptions options;
      options.main_graph_index = id_;
      return analysis::DecideNode(node, ctx_->opset(), analysis::GivenShapes(shapes), v, options);
    }

    // Whether `d` fits, keeping the exact-shape cell that decided it for the rewrite's log.
    bool Decided(const targets::FormDecision& d) {
      decided_by_cell_ = d.shape_cell;
      return d.fits;
    }

    // "decided by the table", and the exact-shape cell when one decided the placed node.
    std::string TableDecision() const {
      return decided_by_cell_.empty()
                 ? "decided by the table"
                 : absl::StrCat("decided by the table (", decided_by_cell_, ")");
    }

    // Whether edit `e` reshapes operand `shape` of rank 0 computed at run time (kAlign, and
    // kFull when the operand is not folded: Apply aligns it first). No table cell measures that
    // Reshape, and OpenCV 4.6 refuses it at load (`normalize_axis_range`), though the op at the
    // new shapes may match a cell that runs: the table vouches for no such rewrite; the live
    // probe runs the whole candidate and may take it.
    static bool ReshapesComputedScalar(Edit e, const Shape& shape, bool constant) {
      return !constant && shape.rank_known && shape.rank() == 0 &&
             (e == Edit::kAlign || e == Edit::kFull);
    }

    bool FitsView(const onnx::NodeProto& n, const Plan& plan) {
      for (size_t k = 0; k < shapes_.size(); ++k) {
        if (ReshapesComputedScalar(Edit::kAlign, shapes_[k], constant_[k])) return false;
      }
      onnx::NodeProto cand = n;
      std::vector<bool> constant = constant_;
      if (plan.swap) {
        cand.set_op_type(SwappedOp(n.op_type()));
        constant.swap(constant[0], constant[1]);
        std::swap(*cand.mutable_input(0), *cand.mutable_input(1));
      }
      std::vector<Shape> shapes;
      for (int k = 0; k < cand.input_size(); ++k) {
        shapes.push_back(Shape::OfVector(plan.view.operands[k]));
        cand.set_input(k, absl::StrCat(cand.input(k), "\x01view"));
      }
      analysis::NodeVerdict v;
      if (!Decide(cand, shapes, &v)) return false;
      return v.verdict != broadcast::Verdict::kError &&
             Decided(targets::DecideForm(v, p_, IsConstantFn(cand, constant)));
    }

    // Replaces the node by: its operands reshaped (and transposed) to the view, the op on
    // them, and its result transposed back and reshaped to the output's shape under the
    // output's own name (so every reader and graph output stays as it was).
    absl::Status ApplyView(const Plan& plan) {
      proto::GraphEditor& g = ctx_->graph();
      const onnx::NodeProto n = g.node(id_);
      const View& view = plan.view;
      onnx::NodeProto op = n;
      op.clear_input();
      op.clear_output();
      std::vector<std::string> inputs(n.input().begin(), n.input().end());
      std::vector<bool> constant = constant_;
      if (plan.swap) {
        op.set_op_type(SwappedOp(n.op_type()));
        std::swap(inputs[0], inputs[1]);
        constant.swap(constant[0], constant[1]);
      }
      const std::string& out_name = n.output(0);
      const int32_t elem = ctx_->ElemOf(out_name);
      std::vector<std::string> texts;
      for (size_t k = 0; k < inputs.size(); ++k) {
        const std::vector<int64_t>& e = view.operands[k];
        const Shape shape = Shape::OfVector(e);
        std::string name;
        if (constant[k]) {
          // Same data, new dims (a transposed view moves only unit axes of a constant).
          onnx::TensorProto t = *g.ConstantValue(inputs[k]);
          t.clear_dims();
          for (int64_t d : e) t.add_dims(d);
          name = ctx_->FreshName(absl::StrCat(inputs[k], "_view"));
          t.set_name(name);
          ctx_->AllowInitializers();
          g.AddInitializer(std::move(t));
          ctx_->SetShape(name, ctx_->ElemOf(inputs[k]), shape);
          ++ctx_->stats().initializers_rewritten;
        } else if (view.transpose && e[e.size() - 1] > 1 && e[e.size() - 2] > 1) {
          // Both axes real: reshape to the untransposed view, then Transpose (rank 2 with a
          // padded rank: the reshape drops the padding, the Transpose reverses two axes).
          const std::vector<int64_t> flat = {e[e.size() - 1], e[e.size() - 2]};
          const std::string r = ctx_->InsertReshape(inputs[k], flat, Shape::OfVector(flat), id_);
          name = ctx_->InsertNode("Transpose", {r}, {}, absl::StrCat(inputs[k], "_transposed"),
                                  ctx_->ElemOf(inputs[k]),
                                  Shape::OfVector({e[e.size() - 2], e[e.size() - 1]}), id_);
          if (static_cast<int64_t>(e.size()) > 2) {
            name = ctx_->InsertReshape(name, e, shape, id_);
          }
        } else {
          name = ctx_->InsertReshape(inputs[k], e, shape, id_);
        }
        op.add_input(name);
        texts.push_back(shape.ToString());
      }
      // The op on the view.
      const Shape view_out = Shape::OfVector(view.output);
      std::string result = ctx_->FreshName(absl::StrCat(out_name, "_view"));
      op.add_output(result);
      op.set_name(
          ctx_->FreshName(n.name().empty() ? absl::StrCat(n.op_type(), "_view") : n.name()));
      g.InsertBefore(id_, std::move(op));
      ++ctx_->stats().nodes_inserted;
      ctx_->SetShape(result, elem, view_out);
      if (view.transpose) {
        const std::vector<int64_t>& o = view.output;
        std::vector<int64_t> back = {o[o.size() - 1], o[o.size() - 2]};
        if (o.size() > 2)
          result = ctx_->InsertReshape(result, {o[o.size() - 2], o[o.size() - 1]},
                                       Shape::OfVector({o[o.size() - 2], o[o.size() - 1]}), id_);
        result = ctx_->InsertNode("Transpose", {result}, {}, absl::StrCat(out_name, "_view_t"),
                                  elem, Shape::OfVector(back), id_);
      }
      // Back to the output's shape, under its name.
      onnx::NodeProto reshape;
      reshape.set_op_type("Reshape");
      reshape.set_name(ctx_->FreshName(absl::StrCat(out_name, "_reshape")));
      reshape.add_input(result);
      const std::vector<int64_t> out_extents = *output_.Extents();
      reshape.add_input(ctx_->Int64Constant(
          out_extents, absl::StrCat("reshape_shape_", absl::StrJoin(out_extents, "_")), id_));
      reshape.add_output(out_name);
      g.InsertBefore(id_, std::move(reshape));
      ++ctx_->stats().nodes_inserted;
      Rewrite r;
      r.action = "converted";
      r.tensor = out_name;
      r.before = output_.ToString();
      r.after = view_out.ToString();
      r.detail = absl::StrCat("computed as ", SwappedOrSame(plan, n.op_type()), "(",
                              absl::StrJoin(texts, ", "), ") -> ", view_out.ToString(),
                              view.transpose ? ", transposed back" : "", ", reshaped to ",
                              output_.ToString());
      ctx_->Record(id_, std::move(r));
      g.RemoveNode(id_);  // drops the output's value_info: written again below
      ++ctx_->stats().nodes_removed;
      ctx_->SetShape(out_name, elem, output_);
      for (const std::string& in : n.input()) ctx_->DropIfUnused(in);
      return Ok();
    }

    static std::string SwappedOrSame(const Plan& plan, const std::string& op) {
      return plan.swap ? SwappedOp(op) : op;
    }

    absl::Status Apply(const Plan& plan) {
      if (plan.fold_node) return FoldNode();
      if (plan.use_view) return ApplyView(plan);
      proto::GraphEditor& g = ctx_->graph();
      if (plan.swap) {
        onnx::NodeProto* m = g.mutable_node(id_);
        const std::string a = m->input(0);
        const std::string b = m->input(1);
        const std::string before = m->op_type();
        m->set_op_type(SwappedOp(before));
        g.SetInput(id_, 0, b);
        g.SetInput(id_, 1, a);
        Rewrite r;
        r.action = "converted";
        r.tensor = a;
        r.detail = absl::StrCat("operands swapped: ", before, "(", a, ", ", b, ") -> ",
                                m->op_type(), "(", b, ", ", a, ")");
        ctx_->Record(id_, std::move(r));
        std::swap(shapes_[0], shapes_[1]);
        constant_.swap(constant_[0], constant_[1]);
      }
      for (size_t k = 0; k < plan.edits.size(); ++k) {
        const int slot = static_cast<int>(k);
        if (plan.edits[k] == Edit::kKeep) continue;
        if (plan.edits[k] == Edit::kAlign) {
          Align(slot, *AlignRank(slot));
          continue;
        }
        if (plan.edits[k] == Edit::kMulOnes) {
          MulByOnes(slot, *FullShape(slot));
          continue;
        }
        if (plan.edits[k] == Edit::kConcat) {
          ConcatCopies(slot, *FullShape(slot));
          continue;
        }
        const Shape full = *FullShape(slot);
        const std::string name = g.node(id_).input(slot);
        if (!ctx_->FoldsToConstant(name, full)) {
          // Expand with an input of the output's rank: the form static engines import (OpenCV
          // refuses a lower-rank Expand input).
          Align(slot, full.rank());
        }
        BCAST_RETURN_IF_ERROR(ctx_->ExpandOperand(id_, slot, full).status());
      }
      return Ok();
    }

    // Operand `slot` given shape `full` by Concat of copies along each broadcast axis (see Edit).
    void ConcatCopies(int slot, const Shape& full) {
      const std::vector<std::pair<int64_t, int64_t>> axes = ConcatAxes(slot, full);
      Align(slot, full.rank());
      proto::GraphEditor& g = ctx_->graph();
      const std::string name = g.node(id_).input(slot);
      const int32_t elem = ctx_->ElemOf(name);
      std::vector<int64_t> dims =
          *PrependOnes(shapes_[slot], full.rank() - shapes_[slot].rank()).Extents();
      std::string x = name;
      for (const auto& [axis, copies] : axes) {
        dims[axis] = copies;
        x = ctx_->InsertNode("Concat", std::vector<std::string>(copies, x), {{"axis", axis}},
                             absl::StrCat(name, "_tiled"), elem, Shape::OfVector(dims), id_);
      }
      g.SetInput(id_, slot, x);
      Rewrite r;
      r.action = "inserted";
      r.tensor = name;
      r.before = ctx_->ShapeOf(name).ToString();
      r.after = full.ToString();
      r.detail = absl::StrCat("Concat of copies to ", full.ToString(), " -> '", x, "'");
      ctx_->Record(id_, std::move(r));
    }

    // Operand `slot` as Mul(ones, operand), ones a float32 constant of shape `full` (see Edit).
    void MulByOnes(int slot, const Shape& full) {
      proto::GraphEditor& g = ctx_->graph();
      const std::string name = g.node(id_).input(slot);
      const std::vector<int64_t> extents = *full.Extents();
      onnx::TensorProto ones;
      ones.set_data_type(onnx::TensorProto::FLOAT);
      int64_t elements = 1;
      for (int64_t d : extents) {
        ones.add_dims(d);
        elements *= d;
      }
      for (int64_t i = 0; i < elements; ++i) ones.add_float_data(1.0f);
      const std::string ones_name =
          ctx_->FreshName(absl::StrCat("ones_", absl::StrJoin(extents, "_")));
      ones.set_name(ones_name);
      ctx_->AllowInitializers();
      g.AddInitializer(std::move(ones));
      ctx_->SetShape(ones_name, onnx::TensorProto::FLOAT, full);
      ++ctx_->stats().initializers_rewritten;
      ctx_->stats().bytes_added += elements * 4;
      const std::string out =
          ctx_->InsertNode("Mul", {ones_name, name}, {}, absl::StrCat(name, "_full"),
                           onnx::TensorProto::FLOAT, full, id_);
      g.SetInput(id_, slot, out);
      Rewrite r;
      r.action = "inserted";
      r.tensor = name;
      r.before = ctx_->ShapeOf(name).ToString();
      r.after = full.ToString();
      r.detail = absl::StrCat("Mul by a constant of ones ", full.ToString(), " -> '", out, "'");
      r.bytes = elements * 4;
      ctx_->Record(id_, std::move(r));
    }

    // Leading 1s for operand `slot`: folded into a constant, a Reshape to a constant shape for
    // a static computed operand, else an Unsqueeze (AlignOperand).
    void Align(int slot, int64_t rank) {
      proto::GraphEditor& g = ctx_->graph();
      const std::string name = g.node(id_).input(slot);
      const Shape s = ctx_->ShapeOfInput(id_, slot);
      if (!s.rank_known || s.rank() >= rank) return;
      const Shape aligned = PrependOnes(s, rank - s.rank());
      const std::optional<std::vector<int64_t>> extents = aligned.Extents();
      if (g.ConstantValue(name) != nullptr || !extents) {
        ctx_->AlignOperand(id_, slot, rank);
        return;
      }
      const std::string out = ctx_->InsertReshape(name, *extents, aligned, id_);
      g.SetInput(id_, slot, out);
      Rewrite r;
      r.action = "inserted";
      r.tensor = name;
      r.before = s.ToString();
      r.after = aligned.ToString();
      r.detail = absl::StrCat("Reshape to ", aligned.ToString(), " -> '", out, "'");
      ctx_->Record(id_, std::move(r));
    }

    // Computes the node on its constant operands (the driver's evaluator) into one
    // initializer, re-pointing every reader of its output.
    absl::Status FoldNode() {
      proto::GraphEditor& g = ctx_->graph();
      const onnx::NodeProto n = g.node(id_);
      absl::StatusOr<onnx::TensorProto> value = EvaluateOnConstants(
          *ctx_->options().evaluator, ctx_->model(), n,
          [&g](const std::string& name) { return g.ConstantValue(name); },
          "legalize_measured_fold");
      if (!value.ok()) {
        ctx_->Debug(id_,
                    absl::StrCat(n.op_type(), " '", ctx_->Label(id_),
                                 "': constant operands not computed: ", value.status().message()));
        return Ok();
      }
      if (!p_.InitializerTypeAllowed(value->data_type())) {
        ctx_->Debug(id_,
                    absl::StrCat(n.op_type(), " '", ctx_->Label(id_), "': its result has type ",
                                 targets::ElementTypeName(value->data_type()), ", which ", p_.name,
                                 " does not load as a constant"));
        return Ok();
      }
      const std::string folded = ctx_->FreshName(absl::StrCat(n.output(0), "_folded"));
      onnx::TensorProto t = *std::move(value);
      t.set_name(folded);
      Rewrite r;
      r.action = "folded";
      r.tensor = n.output(0);
      r.after = output_.ToString();
      r.detail = absl::StrCat("constant operands computed into initializer '", folded, "'");
      ctx_->AllowInitializers();
      g.AddInitializer(std::move(t));
      ctx_->SetShape(folded, ctx_->ElemOf(n.output(0)), ctx_->ShapeOf(n.output(0)));
      const std::vector<proto::Use> uses = g.Consumers(n.output(0));
      for (const proto::Use& u : uses) g.SetInput(u.node, u.slot, folded);
      ctx_->Record(id_, std::move(r));
      g.RemoveNode(id_);
      ++ctx_->stats().nodes_removed;
      ++ctx_->stats().initializers_rewritten;
      for (const std::string& in : n.input()) ctx_->DropIfUnused(in);
      return Ok();
    }

    RewriteContext* ctx_;
    const targets::TargetProfile& p_;
    int id_;
    analysis::BroadcastOp op_;
    std::vector<Shape> shapes_;
    std::vector<bool> constant_;
    Shape output_;
    bool live_ = false;            // candidates decided by the live oracle (RunLive)
    std::string decided_by_cell_;  // the exact-shape cell of the last Fits, or empty
  };
};

}  // namespace

std::unique_ptr<Pass> CreateLegalizeMeasuredPass() { return std::make_unique<LegalizeMeasured>(); }

}  // namespace onnx_bcast::passes
