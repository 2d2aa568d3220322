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
#include "passes/rewrite_context.h"
#include "passes/shape_propagation.h"
#include "passes/targets.h"

namespace onnx_bcast::passes {
namespace {

using bcast::Shape;

// What a candidate does to one operand.
enum class Edit { kKeep, kAlign, kFull };

// One candidate rewrite of a node.
struct Plan {
  bool swap = false;
  bool fold_node = false;   // all operands constant: the node becomes one initializer
  std::vector<Edit> edits;  // per input slot, after the swap
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
      std::stable_sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
        return a.cost != b.cost ? a.cost < b.cost : a.order < b.order;
      });
      return plans;
    }

    // The node as `plan` would leave it, decided by the target check's lookup.
    bool Fits(const onnx::NodeProto& n, const Plan& plan) {
      if (plan.fold_node) return true;  // no node left to decide
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

    absl::Status Apply(const Plan& plan) {
      if (plan.fold_node) return FoldNode();
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
