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
#include "broadcast/view.h"
#include "passes/rewrite_context.h"
#include "passes/shape_propagation.h"
#include "passes/targets.h"

namespace onnx_bcast::passes {
namespace {

using bcast::Shape;

// What a candidate does to one operand.
enum class Edit { kKeep, kAlign, kFull };

// A node computed on a view of its operands (static shapes only): each operand reshaped to
// the collapsed broadcast of bcast::BroadcastView (unit axes dropped, adjacent axes that every
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
                  bcast::Dim::Value(1));
  return out;
}

class LegalizeMeasured : public Pass {
 public:
  absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) override {
    const TargetProfile* profile = options.target;
    if (profile == nullptr) {
      return absl::FailedPreconditionError(
          "the 'legalize-measured' pass needs a target table (--target or --target-file)");
    }
    return RewriteEveryGraph(model, "legalize-measured", options, stats,
                             [profile](RewriteContext& ctx) {
                               for (int id = 0; id < ctx.graph().original_node_count(); ++id) {
                                 if (!ctx.graph().alive(id)) continue;
                                 const std::optional<BroadcastOp> op = ctx.NumpyFormBroadcast(id);
                                 if (!op) continue;
                                 NodeLegalizer one(&ctx, *profile, id, *op);
                                 if (absl::Status s = one.Run(); !s.ok()) return s;
                               }
                               return absl::OkStatus();
                             });
  }

 private:
  // The search for one node: its state, the candidates, and applying the chosen one.
  class NodeLegalizer {
   public:
    NodeLegalizer(RewriteContext* ctx, const TargetProfile& p, int id, const BroadcastOp& op)
        : ctx_(ctx), p_(p), id_(id), op_(op) {}

    absl::Status Run() {
      const onnx::NodeProto& n = ctx_->graph().node(id_);
      for (int k = 0; k < n.input_size(); ++k) {
        shapes_.push_back(n.input(k).empty() ? Shape::UnknownRank() : ctx_->ShapeOfInput(id_, k));
        constant_.push_back(!n.input(k).empty() &&
                            ctx_->graph().ConstantValue(n.input(k)) != nullptr);
      }
      NodeVerdict v;
      if (!DecideBroadcastNodeWithShapes(n, id_, ctx_->opset(), shapes_, &v)) return Ok();
      const FormDecision now = DecideForm(v, p_, IsConstantFn(n, constant_));
      if (now.fits) return Ok();  // already in a running cell: never rewritten
      if (v.verdict == bcast::Verdict::kError) {
        return absl::InvalidArgumentError(v.message);
      }
      for (const Shape& s : shapes_) {
        if (!s.rank_known) {
          ctx_->Debug(id_, absl::StrCat(n.op_type(), " '", ctx_->Label(id_),
                                        "': an operand has an unknown rank"));
          return Ok();
        }
      }
      output_ = v.output;
      std::vector<Plan> plans = Candidates(n);
      for (const Plan& plan : plans) {
        if (!Fits(n, plan)) continue;
        return Apply(plan);
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
          ctx_->SetFoldLimitBytes(-1);
          return s;
        }
        ctx_->SetFoldLimitBytes(-1);
      }
      std::vector<std::string> texts;
      for (const Shape& s : shapes_) texts.push_back(s.ToString());
      ctx_->Debug(id_, absl::StrCat(n.op_type(), " '", ctx_->Label(id_),
                                    "': ", absl::StrJoin(texts, " and "), ": none of ",
                                    plans.size(), " rewrites lands in a cell ", p_.name,
                                    " runs; left for the target check (", now.why, ")"));
      return Ok();
    }

   private:
    static absl::Status Ok() { return absl::OkStatus(); }

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
      if (op_.kind == BroadcastOpKind::kPRelu && slot == 1) return shapes_[0].rank();
      if (op_.kind == BroadcastOpKind::kMatMul && shapes_.size() == 2 && shapes_[0].rank() >= 2 &&
          shapes_[1].rank() >= 2) {
        return std::max(shapes_[0].rank(), shapes_[1].rank());
      }
      return std::nullopt;
    }
    std::optional<Shape> FullShape(int slot) const {
      if (op_.multidirectional()) return output_;
      if (op_.kind == BroadcastOpKind::kPRelu && slot == 1) return shapes_[0];
      return std::nullopt;
    }
    // Whether kFull of `slot` can be built: a constant folds, or an Expand to a constant shape,
    // or to a run-time shape where the target takes those.
    bool FullPossible(const Shape& full) const {
      return full.Extents().has_value() || ctx_->RuntimeShapesAllowed();
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
            p.cost += e == Edit::kAlign ? (constant_[k] ? 1 : 2) : (constant_[k] ? 3 : 4);
          }
          if (!any) continue;
          p.order = order++;
          plans.push_back(std::move(p));
        }
      }
      AddViewPlans(n, can_swap, &order, &plans);
      std::stable_sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
        return a.cost != b.cost ? a.cost < b.cost : a.order < b.order;
      });
      return plans;
    }

    // View plans (see View): dearer than any edit, as each inserts a Reshape per computed
    // operand and one or two nodes after the node.
    void AddViewPlans(const onnx::NodeProto& n, bool can_swap, int* order,
                      std::vector<Plan>* plans) const {
      if (!op_.multidirectional()) return;
      const std::optional<std::vector<int64_t>> out = output_.Extents();
      if (!out) return;
      std::vector<std::vector<int64_t>> extents;
      for (int k = 0; k < n.input_size(); ++k) {
        if (n.input(k).empty()) return;
        std::optional<std::vector<int64_t>> e = shapes_[k].Extents();
        if (!e) return;
        extents.push_back(*std::move(e));
      }
      absl::StatusOr<bcast::BroadcastView> bv = bcast::BroadcastView::Create(extents, *out);
      if (!bv.ok() || bv->output_elements() == 0 || bv->rank() == 0) return;
      int64_t min_rank = 0;
      if (auto it = p_.op_rules.find(n.op_type()); it != p_.op_rules.end()) {
        min_rank = it->second.min_rank;
      }
      const std::vector<int64_t>& dims = bv->dims();
      const int64_t rank = std::max<int64_t>(bv->rank(), min_rank);
      const auto pad = [rank](std::vector<int64_t> e) {
        e.insert(e.begin(), static_cast<size_t>(rank - static_cast<int64_t>(e.size())), 1);
        return e;
      };
      bool any_constant = false;
      for (bool c : constant_) any_constant = any_constant || c;
      for (bool transpose : {false, true}) {
        if (transpose && bv->rank() != 2) continue;
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
            std::vector<int64_t> e;
            const absl::Span<const int64_t> strides = bv->strides(k);
            for (int d = 0; d < bv->rank(); ++d) e.push_back(strides[d] != 0 ? dims[d] : 1);
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
          for (bool swap : {false, true}) {
            if (swap && !can_swap) continue;
            Plan p;
            p.swap = swap;
            p.use_view = true;
            p.view = v;
            if (swap) std::swap(p.view.operands[0], p.view.operands[1]);
            p.cost = 10 + (transpose ? 2 : 0) + (swap ? 1 : 0);
            p.order = (*order)++;
            plans->push_back(std::move(p));
          }
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
        switch (plan.edits[k]) {
          case Edit::kKeep:
            break;
          case Edit::kAlign:
            shapes[k] = PrependOnes(shapes[k], *AlignRank(orig) - shapes[k].rank());
            names[k] += "\x01aligned";  // a name no model has: constness by slot below
            break;
          case Edit::kFull: {
            const Shape full = *FullShape(orig);
            const bool folds = constant[k] && ctx_->FoldsToConstant(n.input(orig), full);
            // Apply aligns the operand, then expands it: that Expand must be in a running cell
            // too (OpenCV 4.6 imports only some axis patterns).
            if (!folds && !DecideExpandForm(PrependOnes(shapes[k], full.rank() - shapes[k].rank()),
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
      NodeVerdict v;
      if (!DecideBroadcastNodeWithShapes(cand, id_, ctx_->opset(), shapes, &v)) return false;
      return v.verdict != bcast::Verdict::kError &&
             DecideForm(v, p_, IsConstantFn(cand, constant)).fits;
    }

    bool FitsView(const onnx::NodeProto& n, const Plan& plan) {
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
      NodeVerdict v;
      if (!DecideBroadcastNodeWithShapes(cand, id_, ctx_->opset(), shapes, &v)) return false;
      return v.verdict != bcast::Verdict::kError &&
             DecideForm(v, p_, IsConstantFn(cand, constant)).fits;
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
        const Shape full = *FullShape(slot);
        const std::string name = g.node(id_).input(slot);
        if (!ctx_->FoldsToConstant(name, full)) {
          // Expand with an input of the output's rank: the form static engines import (OpenCV
          // refuses a lower-rank Expand input).
          Align(slot, full.rank());
        }
        absl::StatusOr<bool> done = ctx_->ExpandOperand(id_, slot, full);
        if (!done.ok()) return done.status();
      }
      return Ok();
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
      proto::Model fragment;
      fragment.path = ctx_->model().path;
      fragment.base_dir = ctx_->model().base_dir;
      onnx::ModelProto& m = fragment.proto;
      m.set_ir_version(std::max<int64_t>(ctx_->model().proto.ir_version(), 4));
      *m.mutable_opset_import() = ctx_->model().proto.opset_import();
      onnx::GraphProto* fg = m.mutable_graph();
      fg->set_name("legalize_measured_fold");
      std::set<std::string> added;
      for (const std::string& in : n.input()) {
        if (!added.insert(in).second) continue;
        onnx::TensorProto t = *g.ConstantValue(in);
        t.set_name(in);
        *fg->add_initializer() = std::move(t);
      }
      *fg->add_node() = n;
      fg->add_output()->set_name(n.output(0));
      absl::StatusOr<std::vector<onnx::TensorProto>> values =
          (*ctx_->options().evaluator)(fragment);
      if (!values.ok() || values->size() != 1) {
        ctx_->Debug(id_, absl::StrCat(n.op_type(), " '", ctx_->Label(id_),
                                      "': constant operands not computed: ",
                                      values.ok() ? "no value" : values.status().message()));
        return Ok();
      }
      if (!p_.InitializerTypeAllowed((*values)[0].data_type())) {
        ctx_->Debug(id_,
                    absl::StrCat(n.op_type(), " '", ctx_->Label(id_), "': its result has type ",
                                 ElementTypeName((*values)[0].data_type()), ", which ", p_.name,
                                 " does not load as a constant"));
        return Ok();
      }
      const std::string folded = ctx_->FreshName(absl::StrCat(n.output(0), "_folded"));
      onnx::TensorProto t = std::move((*values)[0]);
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
    const TargetProfile& p_;
    int id_;
    BroadcastOp op_;
    std::vector<Shape> shapes_;
    std::vector<bool> constant_;
    Shape output_;
  };
};

}  // namespace

std::unique_ptr<Pass> CreateLegalizeMeasuredPass() { return std::make_unique<LegalizeMeasured>(); }

}  // namespace onnx_bcast::passes
