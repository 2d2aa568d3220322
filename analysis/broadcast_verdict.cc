// The texts of one broadcasting node's verdict (analysis/broadcast_verdict.h).
#include "analysis/broadcast_verdict.h"

#include <map>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/shapes.h"

namespace onnx_bcast::analysis {
namespace verdict {
namespace {

using broadcast::BroadcastResult;
using broadcast::Dim;
using broadcast::RuleFamily;
using broadcast::Shape;
using broadcast::Verdict;

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
  const broadcast::Dim& c = slope.dims[0];
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

}  // namespace

// Portability warnings of a decided broadcasting node (check --lint).
void Lint(int64_t opset, const BroadcastOp& info, const BroadcastResult& result,
          absl::Span<const BinaryLint> binary_lints, NodeVerdict* v) {
  if (info.kind == BroadcastOpKind::kPRelu) {
    if (!info.legacy) PReluLint(v);
    return;
  }
  if (info.kind != BroadcastOpKind::kBinary) return;
  if (!info.legacy) {
    if (result.verdict == Verdict::kError) return;
    for (const BinaryLint lint : binary_lints) lint(v);
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
  const std::string rule(std::string(broadcast::RuleName(v.rule)));
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
        // The axis attribute, when given, is half of what the rule read.
        const std::string axis = v.legacy_axis ? absl::StrCat(", axis=", *v.legacy_axis) : "";
        return absl::StrCat(head, " (opset ", v.opset, ", broadcast=1", axis, "): B ",
                            v.inputs[1].ToString(), " does not fit A ", v.inputs[0].ToString(),
                            " (legacy-axis rule, ", r.reason, ")");
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

}  // namespace verdict

std::string BroadcastClassText(broadcast::BroadcastClass broadcast_class,
                               std::optional<broadcast::BroadcastClass> batch_class) {
  std::string text(broadcast::BroadcastClassName(broadcast_class));
  if (broadcast_class == broadcast::BroadcastClass::kMatMulBatch && batch_class) {
    absl::StrAppend(&text, ":", std::string(broadcast::BroadcastClassName(*batch_class)));
  }
  return text;
}

bool IsBroadcastingOp(const std::string& op_type) {
  // Any opset: the kind does not depend on it.
  return ClassifyBroadcastOp(op_type, 1).kind != BroadcastOpKind::kNone;
}

}  // namespace onnx_bcast::analysis
