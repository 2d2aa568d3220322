// The verdict of one broadcasting node (analysis/broadcast_verdict.h) and the public entry
// points that decide a node from given shapes (shape_propagation.h).
#include "analysis/broadcast_verdict.h"

#include <map>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/shapes.h"

namespace onnx_bcast::passes {
namespace verdict {
namespace {

using bcast::BroadcastResult;
using bcast::Dim;
using bcast::RuleFamily;
using bcast::Shape;
using bcast::Verdict;

std::string ShapeList(const std::vector<std::string>& roles, const std::vector<Shape>& shapes) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < shapes.size(); ++i) {
    parts.push_back(absl::StrCat(i < roles.size() ? roles[i] : absl::StrCat("input ", i), " ",
                                 shapes[i].ToString()));
  }
  if (parts.size() <= 2) return absl::StrJoin(parts, " and ");
  const std::string last = parts.back();
  parts.pop_back();
  return absl::StrCat(absl::StrJoin(parts, ", "), " and ", last);
}

// The library reports the target's extent first; messages name the broadcast operand
// first ("slope [3] ... X [2,3,4] (axis 2: 3 vs 4)"), so restate the axis that way.
std::string UnidirectionalReason(const Shape& b, const Shape& target, const BroadcastResult& r) {
  if (r.error_axis < 0 || !b.rank_known || !target.rank_known) return r.reason;
  const int64_t pos = r.error_axis - (target.rank() - b.rank());
  if (pos < 0 || pos >= b.rank() || r.error_axis >= target.rank()) return r.reason;
  return absl::StrCat("axis ", r.error_axis, ": ", b.dims[pos].ToString(), " vs ",
                      target.dims[r.error_axis].ToString());
}

// For n-ary errors, names the input whose extent on the failing axis disagrees with most
// others (on a tie, the later input).
std::string Culprit(const NodeVerdict& v, const std::vector<std::string>& roles,
                    const BroadcastResult& r) {
  if (v.inputs.size() < 3 || r.error_axis < 0 || !r.output.rank_known) return "";
  const int64_t rank = r.output.rank();
  std::vector<std::pair<size_t, int64_t>> extents;  // (input, extent) of non-1 extents
  std::map<int64_t, int> votes;
  for (size_t k = 0; k < v.inputs.size(); ++k) {
    const Shape& s = v.inputs[k];
    if (!s.rank_known) continue;
    const int64_t pos = r.error_axis - (rank - s.rank());
    if (pos < 0 || pos >= s.rank() || !s.dims[pos].is_value() || s.dims[pos].Is(1)) continue;
    extents.push_back({k, s.dims[pos].value()});
    ++votes[s.dims[pos].value()];
  }
  if (votes.size() < 2) return "";
  int64_t majority = extents.front().second;
  for (const auto& [extent, count] : votes) {
    if (count > votes[majority]) majority = extent;
  }
  for (auto it = extents.rbegin(); it != extents.rend(); ++it) {
    if (it->second == majority) continue;
    const size_t k = it->first;
    return absl::StrCat("; ", k < roles.size() ? roles[k] : "input", " '", v.input_names[k],
                        "' conflicts");
  }
  return "";
}

void PReluLint(NodeVerdict* v) {
  const Shape& x = v->inputs[0];
  const Shape& slope = v->inputs[1];
  if (!x.rank_known || !slope.rank_known || slope.rank() != 1 || x.rank() < 3) return;
  const bcast::Dim& c = slope.dims[0];
  if (!(x.dims[1] == c)) return;
  const bool last = x.dims.back() == c;
  v->lints.push_back(
      {"prelu-slope-axis",
       absl::StrCat(
           "PRelu '", v->node, "': 1-D slope ", slope.ToString(), " matches dim 1 of X ",
           x.ToString(),
           last ? ": ONNX aligns it to the last axis while OpenVINO and MNN read a 1-D slope "
                  "per-channel; reshape it to [C,1,...] to say which"
                : ": OpenVINO and MNN accept it per-channel, but ONNX aligns a 1-D slope to "
                  "the last axis; reshape it to [C,1,...]")});
}

void NcnnLint(NodeVerdict* v) {
  if (v->inputs.size() != 2 || !v->inputs[0].rank_known || !v->inputs[1].rank_known) return;
  if (v->inputs[0].rank() == v->inputs[1].rank()) return;
  const bcast::NcnnBinaryForm form = bcast::ClassifyNcnn(v->inputs[0], v->inputs[1]);
  if (form.form == bcast::NcnnForm::kUnsupported || form.matches_numpy) return;
  v->lints.push_back(
      {"ncnn-outer-axis",
       absl::StrCat(v->op, " '", v->node, "': ncnn's ", std::string(bcast::NcnnFormName(form.form)),
                    " broadcast of ", v->inputs[0].ToString(), " and ", v->inputs[1].ToString(),
                    " aligns the lower-rank operand differently from numpy; align ranks "
                    "first ('opt --target ncnn')")});
}

}  // namespace

// Portability warnings of a decided broadcasting node (check --lint).
void Lint(int64_t opset, const BroadcastOp& info, const BroadcastResult& result, NodeVerdict* v) {
  if (info.kind == BroadcastOpKind::kPRelu) {
    if (!info.legacy) PReluLint(v);
    return;
  }
  if (info.kind != BroadcastOpKind::kBinary) return;
  if (!info.legacy) {
    if (result.verdict != Verdict::kError) NcnnLint(v);
    return;
  }
  if (v->rule != RuleFamily::kLegacyAxis) return;
  v->lints.push_back(
      {"legacy-axis",
       absl::StrCat(v->op, " '", v->node, "': legacy opset-", opset, " broadcast with axis=",
                    v->legacy_axis ? absl::StrCat(*v->legacy_axis) : "default",
                    "; several converters ignore the axis attribute (upgrade with "
                    "'opt --passes upgrade-legacy-broadcast')")});
}

std::string Describe(const NodeVerdict& v, const std::vector<std::string>& roles,
                     const BroadcastResult& r) {
  // Most nodes of a large model are fine: their (empty) message costs no allocation.
  if (r.verdict == Verdict::kOk) return "";
  const std::string head = absl::StrCat(v.op, " '", v.node, "'");
  const std::string rule(std::string(bcast::RuleName(v.rule)));
  switch (r.verdict) {
    case Verdict::kOk:
      return "";
    case Verdict::kError:
      if (v.rule == RuleFamily::kUnidirectional && v.inputs.size() == 2) {
        // PRelu lists the target (X) first, Gemm's report lists C first.
        const int b = v.op == "PRelu" ? 1 : 0;
        return absl::StrCat(head, ": ", roles[b], " ", v.inputs[b].ToString(),
                            " is not unidirectionally broadcastable to ", roles[1 - b], " ",
                            v.inputs[1 - b].ToString(), " (",
                            UnidirectionalReason(v.inputs[b], v.inputs[1 - b], r), ")");
      }
      if (v.rule == RuleFamily::kBidirectional) {
        return absl::StrCat(head, ": input ", v.inputs[0].ToString(),
                            " cannot be expanded to shape ", v.inputs[1].ToString(),
                            " (bidirectional rule, ", r.reason, ")");
      }
      if (v.rule == RuleFamily::kLegacyAxis) {
        return absl::StrCat(head, " (opset ", v.opset, ", broadcast=1): B ", v.inputs[1].ToString(),
                            " does not fit A ", v.inputs[0].ToString(), " (legacy-axis rule, ",
                            r.reason, ")");
      }
      if (v.rule == RuleFamily::kNone) {
        return absl::StrCat(head, " (opset ", v.opset, "): ", ShapeList(roles, v.inputs),
                            " must have the same shape (none rule, ", r.reason, ")");
      }
      return absl::StrCat(head, ": ", ShapeList(roles, v.inputs), " are not broadcastable (", rule,
                          " rule, ", r.reason, Culprit(v, roles, r), ")");
    case Verdict::kConditional:
      return absl::StrCat(head, ": ", ShapeList(roles, v.inputs), " broadcast (", rule,
                          " rule) only if ", r.condition.ToString());
    case Verdict::kUnknown:
      return absl::StrCat(head, ": ", ShapeList(roles, v.inputs), ": cannot decide the broadcast (",
                          rule, " rule): ", r.reason);
  }
  return "";
}

// Resolves an attribute, following `ref_attr_name` into the calling node's attributes.
const onnx::AttributeProto* Attr(const onnx::NodeProto& node, const std::string& name,
                                 const onnx::NodeProto* caller) {
  for (const auto& a : node.attribute()) {
    if (a.name() != name) continue;
    if (!a.ref_attr_name().empty()) {
      if (caller == nullptr) return nullptr;
      for (const auto& ca : caller->attribute()) {
        if (ca.name() == a.ref_attr_name()) return &ca;
      }
      return nullptr;
    }
    return &a;
  }
  return nullptr;
}

std::optional<int64_t> IntAttr(const onnx::NodeProto& node, const std::string& name,
                               const onnx::NodeProto* caller) {
  const onnx::AttributeProto* a = Attr(node, name, caller);
  if (a == nullptr) return std::nullopt;
  return a->i();
}

// The rule, class and result of broadcasting node `node` of kind `info` (neither Expand nor a
// non-broadcasting op), from the shapes and names of its inputs in `v` (node-input order;
// Gemm's become C and (M,N)). Attribute references resolve through `caller`. `classify`: name
// the numpy forms' broadcast class. nullopt for a wrong number of inputs. The walk and the
// target check over the pass manager's shape tables decide every node with it.
std::optional<BroadcastResult> DecideBroadcast(const onnx::NodeProto& node,
                                               const onnx::NodeProto* caller,
                                               const BroadcastOp& info, bool classify,
                                               NodeVerdict* v, std::vector<std::string>* roles) {
  BroadcastResult result;
  // The numpy rule over every input: binary, variadic and Where forms.
  auto numpy = [&](bool with_class) {
    v->rule = RuleFamily::kNumpy;
    result = bcast::BroadcastNumpy(v->inputs);
    if (with_class) {
      v->broadcast_class =
          std::string(bcast::BroadcastClassName(bcast::Classify(v->inputs, result.output)));
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
        result = bcast::BroadcastLegacyOnnx(v->inputs[0], v->inputs[1], broadcast, axis);
        v->broadcast_class = broadcast ? "legacy-axis" : "same";
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
        result = bcast::BroadcastNone(v->inputs);
        v->broadcast_class = "same";
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
        v->broadcast_class = "legacy-axis";
        v->legacy_axis = 1;
        result = bcast::BroadcastLegacyOnnx(v->inputs[0], v->inputs[1], true, 1);
        break;
      }
      v->rule = RuleFamily::kUnidirectional;
      v->broadcast_class = "unidirectional";
      result = bcast::BroadcastUnidirectional(v->inputs[0], v->inputs[1]);
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
      v->broadcast_class = "unidirectional";
      const bool legacy_no_broadcast =
          info.legacy && IntAttr(node, "broadcast", caller).value_or(0) == 0;
      if (legacy_no_broadcast) {
        v->rule = RuleFamily::kNone;
        const Shape shapes[] = {mn, v->inputs[2]};
        result = bcast::BroadcastNone(shapes);
      } else {
        result = bcast::BroadcastUnidirectional(mn, v->inputs[2]);
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
      result = bcast::BroadcastMatMul(v->inputs[0], v->inputs[1]);
      v->broadcast_class = "matmul-batch";
      if (v->inputs[0].rank_known && v->inputs[1].rank_known && result.output.rank_known &&
          v->inputs[0].rank() >= 2 && v->inputs[1].rank() >= 2) {
        auto batch = [](const Shape& s) {
          return Shape::FromDims({s.dims.begin(), s.dims.end() - 2});
        };
        const Shape batches[] = {batch(v->inputs[0]), batch(v->inputs[1])};
        v->broadcast_class = absl::StrCat(
            "matmul-batch:",
            std::string(bcast::BroadcastClassName(bcast::Classify(batches, batch(result.output)))));
      }
      break;
    }
    default:
      return std::nullopt;
  }
  return result;
}

// The verdict, output and condition of a decided node.
void TakeResult(const BroadcastResult& result, NodeVerdict* v) {
  v->verdict = result.verdict;
  // A class describes a valid broadcast; a proven error has none.
  if (v->verdict == Verdict::kError) v->broadcast_class = "invalid";
  v->output = result.output;
  v->condition = result.condition;
}

}  // namespace verdict

using bcast::BroadcastResult;
using bcast::RuleFamily;
using bcast::Shape;
using bcast::Verdict;
using verdict::DecideBroadcast;
using verdict::Describe;
using verdict::TakeResult;

std::vector<std::string> BroadcastRoles(const NodeVerdict& v) {
  switch (ClassifyBroadcastOp(v.op, v.opset).kind) {
    case BroadcastOpKind::kVariadic: {
      std::vector<std::string> roles;
      for (size_t k = 0; k < v.inputs.size(); ++k) roles.push_back(absl::StrCat("data_", k));
      return roles;
    }
    case BroadcastOpKind::kWhere:
      return {"condition", "X", "Y"};
    case BroadcastOpKind::kPRelu:
      return {"X", "slope"};
    case BroadcastOpKind::kGemm:
      return {"C", "(M,N)"};
    case BroadcastOpKind::kExpand:
      return {"input", "shape"};
    default:
      return {"A", "B"};
  }
}

BroadcastResult ApplyBroadcastRule(const NodeVerdict& v, const std::vector<Shape>& inputs) {
  // The same calls as the walk makes, on a verdict's report order of inputs (Gemm's C first).
  const bool gemm = ClassifyBroadcastOp(v.op, v.opset).kind == BroadcastOpKind::kGemm;
  if (v.rule != RuleFamily::kNumpy && v.rule != RuleFamily::kNone && inputs.size() != 2) {
    BroadcastResult r;
    r.verdict = Verdict::kUnknown;
    r.output = Shape::UnknownRank();
    r.reason = "unexpected number of inputs";
    return r;
  }
  switch (v.rule) {
    case RuleFamily::kUnidirectional:
      return gemm ? bcast::BroadcastUnidirectional(inputs[1], inputs[0])
                  : bcast::BroadcastUnidirectional(inputs[0], inputs[1]);
    case RuleFamily::kNone:
      if (gemm && inputs.size() == 2) {
        const Shape shapes[] = {inputs[1], inputs[0]};
        return bcast::BroadcastNone(shapes);
      }
      return bcast::BroadcastNone(inputs);
    case RuleFamily::kLegacyAxis:
      return bcast::BroadcastLegacyOnnx(inputs[0], inputs[1], true, v.legacy_axis);
    case RuleFamily::kBidirectional:
      return bcast::BroadcastBidirectional(inputs[0], inputs[1]);
    case RuleFamily::kMatMul:
      return bcast::BroadcastMatMul(inputs[0], inputs[1]);
    default:
      return bcast::BroadcastNumpy(inputs);
  }
}

std::string DescribeBroadcast(const NodeVerdict& v, const BroadcastResult& result) {
  return Describe(v, BroadcastRoles(v), result);
}

namespace {

// The rule, class, verdict and message of `node` once `v`'s identity and input shapes are set.
bool DecideFilledNode(const onnx::NodeProto& node, const BroadcastOp& info, NodeVerdict* out) {
  NodeVerdict& v = *out;
  v.rule = RuleFamily::kNumpy;
  v.legacy_axis.reset();
  v.broadcast_class.clear();
  v.message.clear();
  v.lints.clear();
  static thread_local std::vector<std::string> roles;
  std::optional<BroadcastResult> result =
      DecideBroadcast(node, nullptr, info, /*classify=*/true, &v, &roles);
  if (!result) return false;
  TakeResult(*result, &v);
  if (v.verdict != Verdict::kOk) v.message = Describe(v, roles, *result);
  return true;
}

// The identity of main-graph node `node` in `*v` (graph, label, op, opset), or nullopt when it
// is not a broadcasting node the per-node decision covers (another domain, no broadcast, an
// Expand). Assignments reuse the strings' buffers: one record serves every node of a graph.
std::optional<BroadcastOp> FillNodeHeader(const onnx::NodeProto& node, int index, int64_t opset,
                                          NodeVerdict* v) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  const BroadcastOp info = ClassifyBroadcastOp(node.op_type(), opset);
  if (info.kind == BroadcastOpKind::kNone || info.kind == BroadcastOpKind::kExpand) {
    return std::nullopt;
  }
  v->graph.assign("main");
  v->short_graph.clear();
  if (node.name().empty()) {
    v->node = absl::StrCat(node.op_type(), "#", index);
  } else {
    v->node.assign(node.name());
  }
  v->op.assign(node.op_type());
  v->domain.clear();
  v->opset = opset;
  return info;
}

}  // namespace

bool DecideBroadcastNodeInto(const onnx::NodeProto& node, int index, int64_t opset,
                             const ShapeTables& shapes, NodeVerdict* out, const int* input_ids) {
  const std::optional<BroadcastOp> info = FillNodeHeader(node, index, opset, out);
  if (!info) return false;
  NodeVerdict& v = *out;
  // The inputs from the tables (every field set again, buffers reused).
  const size_t n = static_cast<size_t>(node.input_size());
  v.input_names.resize(n);
  v.inputs.resize(n);
  for (size_t k = 0; k < n; ++k) {
    const std::string& name = node.input(static_cast<int>(k));
    v.input_names[k].assign(name);
    const Shape* shape = nullptr;
    if (!name.empty()) {
      const int t = input_ids != nullptr ? shapes.ids().Confirm(input_ids[k], name) : -1;
      shape = t >= 0 ? shapes.FindShapeById(t) : shapes.FindShape(name);
    }
    if (shape != nullptr) {
      v.inputs[k].rank_known = shape->rank_known;
      v.inputs[k].dims.assign(shape->dims.begin(), shape->dims.end());
    } else {
      v.inputs[k].rank_known = false;
      v.inputs[k].dims.clear();
    }
  }
  return DecideFilledNode(node, *info, &v);
}

bool DecideBroadcastNodeWithShapes(const onnx::NodeProto& node, int index, int64_t opset,
                                   absl::Span<const bcast::Shape> shapes, NodeVerdict* out) {
  const std::optional<BroadcastOp> info = FillNodeHeader(node, index, opset, out);
  if (!info) return false;
  NodeVerdict& v = *out;
  // The inputs as given.
  const size_t n = static_cast<size_t>(node.input_size());
  v.input_names.assign(node.input().begin(), node.input().end());
  v.inputs.assign(n, Shape::UnknownRank());
  for (size_t k = 0; k < n && k < shapes.size(); ++k) {
    if (!node.input(static_cast<int>(k)).empty()) v.inputs[k] = shapes[k];
  }
  return DecideFilledNode(node, *info, &v);
}

std::optional<NodeVerdict> DecideBroadcastNode(const onnx::NodeProto& node, int index,
                                               int64_t opset, const ShapeTables& shapes) {
  NodeVerdict v;
  if (!DecideBroadcastNodeInto(node, index, opset, shapes, &v)) return std::nullopt;
  return v;
}

bool IsBroadcastingOp(const std::string& op_type) {
  // Any opset: the kind does not depend on it.
  return ClassifyBroadcastOp(op_type, 1).kind != BroadcastOpKind::kNone;
}

}  // namespace onnx_bcast::passes
