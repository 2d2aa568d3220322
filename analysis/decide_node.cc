// The one verdict routine (see decide_node.h).
#include "analysis/decide_node.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/broadcast_ops.h"
#include "analysis/broadcast_verdict.h"
#include "proto/graph.h"
#include "proto/shapes.h"

namespace onnx_bcast::analysis {
namespace {

using broadcast::BroadcastClass;
using broadcast::BroadcastResult;
using broadcast::RuleFamily;
using broadcast::Shape;
using broadcast::Verdict;
using verdict::IntAttr;

// The inputs' names and shapes from `shapes`, every field set again so buffers are reused.
void ReadInputs(const onnx::NodeProto& node, const ShapeSource& shapes, NodeVerdict* v) {
  const size_t n = static_cast<size_t>(node.input_size());
  v->input_names.resize(n);
  v->inputs.resize(n);
  for (size_t k = 0; k < n; ++k) {
    const std::string& name = node.input(static_cast<int>(k));
    v->input_names[k].assign(name);
    const Shape* shape = name.empty() ? nullptr : shapes.InputShape(static_cast<int>(k), name);
    Shape& to = v->inputs[k];
    if (shape != nullptr) {
      to.rank_known = shape->rank_known;
      to.dims.assign(shape->dims.begin(), shape->dims.end());
    } else {
      to.rank_known = false;
      to.dims.clear();
    }
  }
}

// Expand's verdict: its input broadcast with the target the source knows (a constant with a
// negative extent is an error; no target at all is unknown). The report's second operand is
// the target, when known, not the shape tensor's own shape.
BroadcastResult DecideExpand(const onnx::NodeProto& node, const ShapeSource& shapes,
                             NodeVerdict* v) {
  BroadcastResult result;
  ExpandTarget t = shapes.TargetOf(node);
  std::optional<Shape> target = std::move(t.shape);
  if (!target && t.values) {
    for (int64_t d : *t.values) {
      if (d >= 0) continue;
      result.verdict = Verdict::kError;
      result.reason =
          absl::StrCat("negative extent in target shape [", absl::StrJoin(*t.values, ","), "]");
      return result;
    }
    target = Shape::OfVector(*t.values);
  }
  if (!target) {
    result.verdict = Verdict::kUnknown;
    result.output = Shape::UnknownRank();
    result.reason = absl::StrCat("the target shape is not a constant", t.origin);
    v->inputs[1] = Shape::UnknownRank();
    return result;
  }
  v->inputs[1] = *std::move(target);
  return broadcast::BroadcastBidirectional(v->inputs[0], v->inputs[1]);
}

// The rule, class and result of non-Expand broadcasting node `node` of kind `info` from the
// shapes of its inputs in `v` (node-input order; Gemm's become C and (M,N)), and the report's
// names of its inputs in `roles`. nullopt for a wrong number of inputs.
std::optional<BroadcastResult> DecideRule(const onnx::NodeProto& node,
                                          const onnx::NodeProto* caller, const BroadcastOp& info,
                                          bool classify, NodeVerdict* v,
                                          std::vector<std::string>* roles) {
  BroadcastResult result;
  // The numpy rule over every input: binary, variadic and Where forms.
  auto numpy = [&](bool with_class) {
    v->rule = RuleFamily::kNumpy;
    result = broadcast::BroadcastNumpy(v->inputs);
    if (with_class) {
      v->broadcast_class = broadcast::Classify(v->inputs, result.output);
    }
  };
  switch (info.kind) {
    case BroadcastOpKind::kBinary: {
      *roles = {"A", "B"};
      if (v->inputs.size() != 2) return std::nullopt;
      if (info.legacy) {
        const bool broadcast = IntAttr(node, "broadcast", caller).value_or(0) != 0;
        const std::optional<int64_t> axis = IntAttr(node, "axis", caller);
        v->rule = broadcast ? RuleFamily::kLegacyAxis : RuleFamily::kNone;
        v->legacy_axis = axis;
        result = broadcast::BroadcastLegacyOnnx(v->inputs[0], v->inputs[1], broadcast, axis);
        v->broadcast_class = broadcast ? BroadcastClass::kLegacyAxis : BroadcastClass::kSame;
      } else {
        numpy(classify);
      }
      break;
    }
    case BroadcastOpKind::kVariadic:
      roles->clear();
      for (size_t k = 0; k < v->inputs.size(); ++k) roles->push_back(absl::StrCat("data_", k));
      if (v->inputs.empty()) return std::nullopt;
      if (info.legacy) {
        v->rule = RuleFamily::kNone;
        result = broadcast::BroadcastNone(v->inputs);
        v->broadcast_class = BroadcastClass::kSame;
      } else {
        numpy(classify);
      }
      break;
    case BroadcastOpKind::kWhere:
      *roles = {"condition", "X", "Y"};
      if (v->inputs.size() != 3) return std::nullopt;
      numpy(/*with_class=*/true);
      break;
    case BroadcastOpKind::kPRelu:
      *roles = {"X", "slope"};
      if (v->inputs.size() != 2) return std::nullopt;
      if (info.legacy) {
        v->rule = RuleFamily::kLegacyAxis;
        v->broadcast_class = BroadcastClass::kLegacyAxis;
        v->legacy_axis = 1;
        result = broadcast::BroadcastLegacyOnnx(v->inputs[0], v->inputs[1], true, 1);
        break;
      }
      v->rule = RuleFamily::kUnidirectional;
      v->broadcast_class = BroadcastClass::kUnidirectional;
      result = broadcast::BroadcastUnidirectional(v->inputs[0], v->inputs[1]);
      break;
    case BroadcastOpKind::kGemm: {
      *roles = {"C"};
      if (v->inputs.size() < 3 || v->input_names[2].empty()) return std::nullopt;
      const Shape& a = v->inputs[0];
      const Shape& b = v->inputs[1];
      Shape mn = Shape::UnknownRank();
      if (a.rank_known && b.rank_known && a.rank() == 2 && b.rank() == 2) {
        const bool ta = IntAttr(node, "transA", caller).value_or(0) != 0;
        const bool tb = IntAttr(node, "transB", caller).value_or(0) != 0;
        mn = Shape::FromDims({a.dims[ta ? 1 : 0], b.dims[tb ? 0 : 1]});
      }
      v->rule = RuleFamily::kUnidirectional;
      v->broadcast_class = BroadcastClass::kUnidirectional;
      const bool legacy_no_broadcast =
          info.legacy && IntAttr(node, "broadcast", caller).value_or(0) == 0;
      if (legacy_no_broadcast) {
        v->rule = RuleFamily::kNone;
        const Shape shapes[] = {mn, v->inputs[2]};
        result = broadcast::BroadcastNone(shapes);
      } else {
        result = broadcast::BroadcastUnidirectional(mn, v->inputs[2]);
      }
      // Report C against (M,N) rather than the raw A and B.
      v->inputs = {v->inputs[2], mn};
      v->input_names = {v->input_names[2],
                        absl::StrCat("(M,N) of ", v->input_names[0], "·", v->input_names[1])};
      *roles = {"C", "(M,N)"};
      break;
    }
    case BroadcastOpKind::kMatMul: {
      *roles = {"A", "B"};
      if (v->inputs.size() != 2) return std::nullopt;
      v->rule = RuleFamily::kMatMul;
      result = broadcast::BroadcastMatMul(v->inputs[0], v->inputs[1]);
      v->broadcast_class = BroadcastClass::kMatMulBatch;
      if (v->inputs[0].rank_known && v->inputs[1].rank_known && result.output.rank_known &&
          v->inputs[0].rank() >= 2 && v->inputs[1].rank() >= 2) {
        auto batch = [](const Shape& s) {
          return Shape::FromDims({s.dims.begin(), s.dims.end() - 2});
        };
        const Shape batches[] = {batch(v->inputs[0]), batch(v->inputs[1])};
        v->batch_class = broadcast::Classify(batches, batch(result.output));
      }
      break;
    }
    default:
      return std::nullopt;
  }
  return result;
}

// The shapes of a decided node's inputs in its report order, as DecideNode reads them again:
// Gemm's (M,N) as an A of [M,1] and a B of [1,N] (no transposes), Expand's target as the
// target's contents.
class ReportOrderShapes : public ShapeSource {
 public:
  ReportOrderShapes(bool gemm, absl::Span<const Shape> inputs) : inputs_(inputs) {
    if (!gemm || inputs.size() != 2) return;
    const Shape& mn = inputs[1];
    if (mn.rank_known && mn.rank() == 2) {
      a_ = Shape::FromDims({mn.dims[0], broadcast::Dim::Value(1)});
      b_ = Shape::FromDims({broadcast::Dim::Value(1), mn.dims[1]});
    }
    gemm_ = true;
  }
  const Shape* InputShape(int k, const std::string&) const override {
    const size_t i = static_cast<size_t>(k);
    if (!gemm_) return i < inputs_.size() ? &inputs_[i] : nullptr;
    if (k == 0) return &a_;
    if (k == 1) return &b_;
    return &inputs_[0];
  }
  ExpandTarget TargetOf(const onnx::NodeProto&) const override {
    ExpandTarget t;
    if (inputs_.size() == 2 && inputs_[1].rank_known) t.shape = inputs_[1];
    return t;
  }

 private:
  absl::Span<const Shape> inputs_;
  bool gemm_ = false;
  Shape a_ = Shape::UnknownRank();
  Shape b_ = Shape::UnknownRank();
};

// The place of main-graph node `node` (its index `index`) in `*v`.
void SetMainGraphPlace(const onnx::NodeProto& node, int index, NodeVerdict* v) {
  v->graph.assign("main");
  v->short_graph.clear();
  if (node.name().empty()) {
    v->node = absl::StrCat(node.op_type(), "#", index);
  } else {
    v->node.assign(node.name());
  }
}

}  // namespace

ExpandTarget ShapeSource::TargetOf(const onnx::NodeProto&) const { return {}; }

const Shape* GivenShapes::InputShape(int k, const std::string&) const {
  const size_t i = static_cast<size_t>(k);
  return i < shapes_.size() ? &shapes_[i] : nullptr;
}

const Shape* TableShapes::InputShape(int k, const std::string& name) const {
  const int t = ids_ != nullptr ? tables_.ids().Confirm(ids_[k], name) : -1;
  return t >= 0 ? tables_.FindShapeById(t) : tables_.FindShape(name);
}

ExpandTarget TableShapes::TargetOf(const onnx::NodeProto& node) const {
  ExpandTarget t;
  if (constants_ != nullptr) {
    if (auto it = constants_->find(node.input(1)); it != constants_->end()) {
      absl::StatusOr<std::vector<int64_t>> values = proto::ReadIntValues(*it->second, base_dir_);
      if (values.ok()) {
        t.values = *std::move(values);
        return t;
      }
    }
  }
  // The tables hold shapes, not contents: the output is what the walk broadcast the input to.
  if (node.output_size() > 0) {
    if (const Shape* out = tables_.FindShape(node.output(0)); out != nullptr && out->rank_known) {
      t.shape = *out;
    }
  }
  return t;
}

bool DecideNode(const onnx::NodeProto& node, int64_t opset, const ShapeSource& shapes,
                NodeVerdict* v, const DecideOptions& options) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  const BroadcastOp info = ClassifyBroadcastOp(node.op_type(), opset);
  if (info.kind == BroadcastOpKind::kNone) return false;
  if (options.main_graph_index >= 0) SetMainGraphPlace(node, options.main_graph_index, v);
  v->op.assign(node.op_type());
  v->domain.clear();
  v->opset = opset;
  v->rule = RuleFamily::kNumpy;
  v->legacy_axis.reset();
  v->broadcast_class = BroadcastClass::kGeneral;  // numpy's when not classified
  v->batch_class.reset();
  v->message.clear();
  v->lints.clear();
  ReadInputs(node, shapes, v);
  static thread_local std::vector<std::string> roles;
  BroadcastResult result;
  if (info.kind == BroadcastOpKind::kExpand) {
    roles = {"input", "shape"};
    if (v->inputs.size() != 2) return false;
    v->rule = RuleFamily::kBidirectional;
    v->broadcast_class = BroadcastClass::kBidirectional;
    result = DecideExpand(node, shapes, v);
  } else {
    std::optional<BroadcastResult> decided =
        DecideRule(node, options.caller, info, options.classify, v, &roles);
    if (!decided) return false;
    result = *std::move(decided);
    if (options.lint) verdict::Lint(opset, info, result, v);
  }
  v->verdict = result.verdict;
  // A class describes a valid broadcast; a proven error has none.
  if (v->verdict == Verdict::kError) v->broadcast_class = BroadcastClass::kInvalid;
  // The message reads the result's output and condition: written before they move.
  if (options.describe) v->message = verdict::Describe(*v, roles, result);
  v->output = std::move(result.output);
  v->condition = std::move(result.condition);
  return true;
}

bool DecideAgain(const NodeVerdict& decided, absl::Span<const Shape> inputs, NodeVerdict* v) {
  const BroadcastOp info = ClassifyBroadcastOp(decided.op, decided.opset);
  const bool gemm = info.kind == BroadcastOpKind::kGemm;
  // The node as far as the rules read it: its inputs and the attributes its rule came from.
  onnx::NodeProto node;
  node.set_op_type(decided.op);
  if (gemm) {
    for (const char* name : {"A", "B"}) node.add_input(name);
    node.add_input(decided.input_names.empty() ? "C" : decided.input_names[0]);
  } else {
    for (const std::string& name : decided.input_names) node.add_input(name);
  }
  if (info.legacy) {
    proto::AddIntAttribute(&node, "broadcast", decided.rule == RuleFamily::kNone ? 0 : 1);
    if (decided.legacy_axis) proto::AddIntAttribute(&node, "axis", *decided.legacy_axis);
  }
  v->graph = decided.graph;
  v->short_graph = decided.short_graph;
  v->node = decided.node;
  if (!DecideNode(node, decided.opset, ReportOrderShapes(gemm, inputs), v)) return false;
  v->input_names = decided.input_names;
  return true;
}

}  // namespace onnx_bcast::analysis
