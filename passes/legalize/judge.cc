// legalize-measured's conversion target (see judge.h).
#include "passes/legalize/judge.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "passes/legalize/multiply_by_ones.h"
#include "passes/legalize/swap.h"
#include "passes/operand_rewrites.h"

namespace onnx_bcast::passes::legalize {
namespace {

using broadcast::Shape;

// Whether edit `e` reshapes operand `shape` of rank 0 computed at run time (kAlign, and kFull
// when the operand is not folded: Apply aligns it first). No table cell measures that Reshape
// (an engine may refuse it at load though the op at the new shapes matches a cell that runs):
// the table vouches for no such rewrite; the live probe runs the whole candidate and may take
// it.
bool ReshapesComputedScalar(Edit e, const Shape& shape, bool constant) {
  return !constant && shape.rank_known && shape.rank() == 0 &&
         (e == Edit::kAlign || e == Edit::kFull);
}

}  // namespace

bool Judge::Decide(const onnx::NodeProto& n, absl::Span<const Shape> shapes,
                   analysis::NodeVerdict* v) const {
  analysis::DecideOptions options;
  options.main_graph_index = node_.id;
  return analysis::DecideNode(n, node_.ctx->opset(), analysis::GivenShapes(shapes), v, options);
}

std::function<bool(const std::string&)> Judge::IsConstantFn(const onnx::NodeProto& n,
                                                            const std::vector<bool>& constant) {
  std::set<std::string> names;
  for (int k = 0; k < n.input_size() && k < static_cast<int>(constant.size()); ++k) {
    if (constant[k]) names.insert(n.input(k));
  }
  return [names = std::move(names)](const std::string& name) { return names.count(name) > 0; };
}

bool Judge::Fits(const Plan& plan) {
  if (plan.fold_node) return true;  // no node left to decide
  if (plan.use_view) return FitsView(plan);
  return FitsEdits(plan);
}

bool Judge::FitsEdits(const Plan& plan) {
  const onnx::NodeProto& n = node_.ctx->graph().node(node_.id);
  onnx::NodeProto cand = n;
  std::vector<Shape> shapes = node_.shapes;
  std::vector<bool> constant = node_.constant;
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
        shapes[k] = PrependOnes(shapes[k], *AlignRank(node_, orig) - shapes[k].rank());
        names[k] += "\x01aligned";  // a name no model has: constness by slot below
        break;
      case Edit::kConcat:
        shapes[k] = *FullShape(node_, orig);
        names[k] += "\x01concat";
        break;
      case Edit::kMulOnes: {
        const Shape full = *FullShape(node_, orig);
        // The inserted Mul(ones, operand) is judged as well.
        analysis::NodeVerdict mv;
        if (!Decide(MulOnesNode(names[k]), {full, shapes[k]}, &mv) ||
            mv.verdict == broadcast::Verdict::kError ||
            !targets::DecideForm(mv, profile_, [](const std::string& name) {
               return name == kOnesName;
             }).fits) {
          return false;
        }
        constant[k] = false;
        shapes[k] = full;
        names[k] += "\x01mulones";
        break;
      }
      case Edit::kFull: {
        const Shape full = *FullShape(node_, orig);
        const bool folds = constant[k] && FoldsToConstant(*node_.ctx, n.input(orig), full);
        // Apply aligns the operand, then expands it: that Expand must be in a running cell
        // too (an engine may import only some axis patterns).
        if (!folds &&
            !targets::DecideExpandForm(PrependOnes(shapes[k], full.rank() - shapes[k].rank()), full,
                                       constant[k], profile_)
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
         Decided(targets::DecideForm(v, profile_, IsConstantFn(cand, constant)));
}

bool Judge::FitsView(const Plan& plan) {
  for (size_t k = 0; k < node_.shapes.size(); ++k) {
    if (ReshapesComputedScalar(Edit::kAlign, node_.shapes[k], node_.constant[k])) return false;
  }
  onnx::NodeProto cand = node_.ctx->graph().node(node_.id);
  std::vector<bool> constant = node_.constant;
  if (plan.swap) {
    cand.set_op_type(SwappedOp(cand.op_type()));
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
         Decided(targets::DecideForm(v, profile_, IsConstantFn(cand, constant)));
}

bool Judge::Decided(const targets::FormDecision& d) {
  decided_by_cell_ = d.shape_cell;
  return d.fits;
}

std::string Judge::TableDecision() const {
  return decided_by_cell_.empty() ? "decided by the table"
                                  : absl::StrCat("decided by the table (", decided_by_cell_, ")");
}

}  // namespace onnx_bcast::passes::legalize
